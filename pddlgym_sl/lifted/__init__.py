"""Lifted planning: successor generation, heuristics and GBFS on tasks that are never grounded."""

from pddlgym_sl.lifted.expand import Expander
from pddlgym_sl.lifted.query import LiftedError
from pddlgym_sl.lifted.task import LiftedTask, lifted_task, load_lifted_task

__all__ = ["Expander", "LiftedError", "LiftedTask", "lifted_task", "load_lifted_task"]
