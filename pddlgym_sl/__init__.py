"""pddlgym-sl: PDDL planning tasks as Gymnasium environments, fast heuristics and search."""

from pddlgym_sl.envs import PDDLEnv  # (importing envs registers the pddl/<domain>-v<N> Gymnasium ids)
from pddlgym_sl.errors import PDDLError
from pddlgym_sl.task import CompiledTask, State, compile_task, load_task

__all__ = ["CompiledTask", "PDDLEnv", "PDDLError", "State", "compile_task", "load_task"]
__version__ = "0.1.0"
