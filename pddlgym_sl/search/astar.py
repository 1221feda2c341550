"""A* search: Fast Downward's ``astar(h)`` (open list ordered by g + h, then h, then first in
first out; goal test at expansion; closed states reopened on a cheaper path). With an admissible
heuristic the returned plan is optimal."""

from __future__ import annotations

from pddlgym_sl.search.driver import BatchEvaluator, BatchHeuristic, search
from pddlgym_sl.search.result import SearchResult
from pddlgym_sl.task import CompiledTask


def astar(
    task: CompiledTask,
    heuristic: str | BatchHeuristic | BatchEvaluator = "blind",
    max_evaluations: int | None = None,
    time_limit: float | None = None,
    memory_limit: float | None = None,
) -> SearchResult:
    """Run A* from `task.init` (see the module docstring; arguments as for `gbfs`)."""
    return search(
        task,
        heuristic,
        astar=True,
        max_evaluations=max_evaluations,
        time_limit=time_limit,
        memory_limit=memory_limit,
    )
