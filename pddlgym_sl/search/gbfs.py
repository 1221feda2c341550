"""Eager greedy best-first search (GBFS), the paper's search algorithm for learned heuristics.

Fast Downward's ``eager_greedy([h])``, node for node (see `pddlgym_sl.search.engine` for the
exact semantics): successors in its successor generator's order, each new one evaluated when
generated (a learned heuristic gets all new successors of an expansion in one batch), goal test
at expansion, ties in h first in first out, no re-evaluation. The budget counts evaluations (the
initial state included): the search stops unsolved as soon as it needs one it has no budget for.
"""

from __future__ import annotations

from pddlgym_sl.search.driver import BatchEvaluator, BatchHeuristic, search
from pddlgym_sl.search.result import SearchResult
from pddlgym_sl.task import CompiledTask


def gbfs(
    task: CompiledTask,
    heuristic: str | BatchHeuristic | BatchEvaluator,
    max_evaluations: int | None = 10_000,
    time_limit: float | None = None,
    memory_limit: float | None = None,
) -> SearchResult:
    """Run eager GBFS from `task.init`; see the module docstring for the exact semantics.

    Args:
        task: the compiled task.
        heuristic: a heuristic name (``"hff"``) or instance (both run compiled), an object with
            ``batch(states) -> values`` or a function of a (n, n_words) uint64 state batch
            returning n values (inf = dead end).
        max_evaluations: heuristic-evaluation budget (the paper uses 10,000); None for none.
        time_limit: optional wall-clock limit in seconds.
        memory_limit: memory limit in MB of this process while it searches (its memory before the
            search included); the search ends with status ``memory_limit`` before passing it.
            None: three quarters of the machine's memory (`pddlgym_sl.memory`).
    """
    return search(
        task,
        heuristic,
        astar=False,
        max_evaluations=max_evaluations,
        time_limit=time_limit,
        memory_limit=memory_limit,
    )
