"""GBFS on a task loaded lifted (`pddlgym_sl.lifted.mode`) for ``agents.evaluate``: with a trained
``--model wl`` run (`agents.models.wl.lifted`) or a symbolic heuristic of
`pddlgym_sl.lifted.registry`.

A lifted task is searched by the lifted engine's eager or lazy GBFS (`pddlgym_sl.lifted.search`) only:
the confidence-aware and anytime searches, and models other than WL, need the grounded task.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from agents.errors import AgentError
from pddlgym_sl.lifted.registry import lifted_heuristic
from pddlgym_sl.lifted.search import lifted_gbfs, warm_up_lifted
from pddlgym_sl.lifted.task import LiftedTask
from pddlgym_sl.search.result import SearchResult

__all__ = ["lifted_args", "search_lifted", "warm_up"]


def lifted_args(task: LiftedTask, trained: Any | None, heuristic: str | None) -> NamedTuple:
    """The compiled heuristic arguments of a trained run (a ``--model wl`` run with an N or TN head
    and no residual) or of a symbolic heuristic's name on `task`."""
    if trained is None:
        return lifted_heuristic(str(heuristic), task)
    if trained.name != "wl":
        raise AgentError(
            f"task {task.name!r} was loaded lifted: a lifted search evaluates --model wl runs or symbolic "
            f"heuristics, not a --model {trained.name} run (--grounding ground grounds it)"
        )
    from agents.models.wl.lifted import LiftedWLHeuristic

    return LiftedWLHeuristic(trained, task).engine_args()


def warm_up(task: LiftedTask, args: NamedTuple, lazy: bool = False) -> float:
    """Compile (or load) the lifted engine for this heuristic; its seconds."""
    return warm_up_lifted(task, args, lazy=lazy)


def search_lifted(
    task: LiftedTask,
    args: NamedTuple,
    limit: int,
    time_limit: float | None,
    memory_limit: float | None,
    lazy: bool = False,
) -> SearchResult:
    """Lifted (eager or `lazy`) GBFS under the evaluation budget and the limits
    (`pddlgym_sl.lifted.search.lifted_gbfs`)."""
    return lifted_gbfs(
        task, args, max_evaluations=limit, time_limit=time_limit, memory_limit=memory_limit, lazy=lazy
    )
