"""The symbolic heuristics on lifted states by name: ``--heuristic`` of a lifted search."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.lifted.heuristics import BlindArgs, GoalCountArgs
from pddlgym_sl.lifted.relaxed import relaxed_args
from pddlgym_sl.lifted.task import LiftedTask

__all__ = ["LIFTED_HEURISTICS", "lifted_heuristic"]


def _goal_count(task: LiftedTask) -> GoalCountArgs:
    return GoalCountArgs(task.goal.astype(np.uint32), task.goal_neg.astype(np.uint32))


def _blind(task: LiftedTask) -> BlindArgs:
    return BlindArgs(task.goal.astype(np.uint32), task.goal_neg.astype(np.uint32))


def _relaxed(name: str) -> Callable[[LiftedTask], NamedTuple]:
    def build(task: LiftedTask) -> NamedTuple:
        return relaxed_args(task, name)

    return build


LIFTED_HEURISTICS: dict[str, Callable[[LiftedTask], NamedTuple]] = {
    "blind": _blind,
    "goal_count": _goal_count,
    "hmax": _relaxed("hmax"),
    "hadd": _relaxed("hadd"),
    "hff": _relaxed("hff"),
}
"""Name -> the builder of its compiled arguments (`heuristics.lifted_value`), weakest first as
`pddlgym_sl.heuristics.HEURISTICS`: blind and goal count (`heuristics`), hmax, hadd and hFF on
the relaxed program (`relaxed`)."""


def lifted_heuristic(name: str, task: LiftedTask) -> NamedTuple:
    """The arguments of heuristic `name` on `task` (`LIFTED_HEURISTICS`); `ConfigError` for a name
    without a lifted version."""
    if name not in LIFTED_HEURISTICS:
        raise ConfigError(
            f"heuristic {name!r} has no lifted version (lifted: {', '.join(LIFTED_HEURISTICS)})"
        )
    return LIFTED_HEURISTICS[name](task)
