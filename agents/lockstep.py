"""Several GBFS searches with learned heuristics advanced together: one forward pass per round.

A learned heuristic evaluates the few new successors of one expansion per call; on a CPU with
more than one core, and more so on a GPU, a forward pass over the new states of several searches
costs far less than one per search, and the bounds (LM-cut, hFF) of several searches keep both
cores busy. `lockstep` drives searches of `pddlgym_sl.search.driver.SearchRun` (each the engine's
search advanced step by step) in rounds: every open search runs to its next batch of new states,
all batches are evaluated together (`agents.learned_heuristic.evaluate_together`: one forward pass
per thread over problems of different sizes, the bounds shared by both threads), and each search
gets its values back. Up to ``width`` searches are open at a time; a finished one makes room for
the next.

Where it pays: on small problems a forward pass costs mostly its fixed per-call work, which the
searches then share (ferry with 10 objects: 1.2-1.6x one search at a time, measured on a loaded
machine); on 100 objects the work per state dominates (the NLM's arity-3 block, LM-cut) and
lockstep and one search at a time run at about the same rate.

Every search is node for node the one that `pddlgym_sl.search.gbfs` runs with the same heuristic
alone: a state's value does not depend on the other states of its batch (bit for bit, see
`evaluate_together`), and a search sees only its own values. What the results share is the clock:
a search's ``seconds`` (and its time limit) count the wall time it was open, while the others
were advanced too.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from agents.errors import AgentError
from agents.learned_heuristic import LearnedHeuristic, evaluate_together
from pddlgym_sl.search.driver import SearchRun
from pddlgym_sl.search.result import SearchResult
from pddlgym_sl.task import CompiledTask

__all__ = ["LockstepSearch", "lockstep", "lockstep_gbfs"]


@dataclass(frozen=True)
class LockstepSearch:
    """One search of a lockstep run: a caller's ``key`` (returned with its result), the task and
    the learned heuristic on it."""

    key: Hashable
    task: CompiledTask
    heuristic: LearnedHeuristic


def lockstep(
    searches: Iterable[LockstepSearch],
    width: int,
    max_evaluations: int | None = 10_000,
    time_limit: float | None = None,
    astar: bool = False,
    memory_limit: float | None = None,
) -> Iterator[tuple[Hashable, SearchResult]]:
    """Run the searches (GBFS; A* when ``astar``), up to ``width`` at a time, and yield ``(key,
    result)`` as each finishes (in the order they finish). ``searches`` is read lazily: a search
    is built (its task loaded, say) only when there is room for it. Every search's heuristic must
    belong to one trained model (one forward pass serves them all). ``memory_limit`` (MB) bounds
    the process, as in `pddlgym_sl.search.gbfs`: the searches open then end with ``memory_limit``."""
    if int(width) != width or width < 1:
        raise AgentError(f"lockstep width must be a positive whole number, not {width!r}")
    pending = iter(searches)
    open_: list[tuple[LockstepSearch, SearchRun]] = []
    exhausted = False
    while True:
        while not exhausted and len(open_) < width:
            search = next(pending, None)
            if search is None:
                exhausted = True
                break
            run = SearchRun(
                search.task,
                search.heuristic,
                astar=astar,
                max_evaluations=max_evaluations,
                time_limit=time_limit,
                memory_limit=memory_limit,
            )
            open_.append((search, run))
        if not open_:
            return
        ready: list[tuple[LockstepSearch, SearchRun, np.ndarray]] = []
        for search, run in list(open_):
            states = run.step()
            if states is None:
                open_.remove((search, run))
                assert run.result is not None
                yield search.key, run.result
            else:
                ready.append((search, run, states))
        if not ready:
            continue
        values = evaluate_together([s.heuristic for s, _, _ in ready], [states for _, _, states in ready])
        for (_, run, _), (v, _) in zip(ready, values, strict=True):
            run.supply(v)


def lockstep_gbfs(
    tasks: Iterable[CompiledTask],
    heuristics: Iterable[LearnedHeuristic],
    width: int,
    max_evaluations: int | None = 10_000,
    time_limit: float | None = None,
) -> list[SearchResult]:
    """GBFS on each task with its heuristic, ``width`` searches at a time; the results in the
    tasks' order (what ``[gbfs(t, h) for t, h in ...]`` gives, node for node)."""
    searches = [LockstepSearch(k, task, h) for k, (task, h) in enumerate(zip(tasks, heuristics, strict=True))]
    results: dict[Hashable, SearchResult] = dict(lockstep(searches, width, max_evaluations, time_limit))
    return [results[s.key] for s in searches]
