"""pddlgym-sl: PDDL planning tasks as Gymnasium environments, fast heuristics and search."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from pddlgym_sl.envs import PDDLEnv  # (importing envs registers the pddl/<domain>-v<N> Gymnasium ids)
from pddlgym_sl.errors import PDDLError
from pddlgym_sl.task import CompiledTask, State, compile_task, load_task

__all__ = ["CompiledTask", "PDDLEnv", "PDDLError", "State", "compile_task", "load_task"]
try:
    __version__ = _version("pddlgym-sl")  # the one version source: pyproject.toml, via the package metadata
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
