"""pddlgym-sl: PDDL planning tasks as Gymnasium environments, fast heuristics and search."""

from pddlgym_sl import envs as _envs  # noqa: F401  (registers the pddl/<domain>-v0 Gymnasium ids)
from pddlgym_sl.errors import PDDLError
from pddlgym_sl.task import CompiledTask, State, compile_task, load_task

__all__ = ["CompiledTask", "PDDLError", "State", "compile_task", "load_task"]
__version__ = "0.1.0"
