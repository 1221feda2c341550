"""Anytime search: restarting GBFS with the incumbent plan's cost C as an upper bound.

The paper's future work (section 6): in iterative search (Richter et al. 2010, 2011), the cost of
the best plan found so far bounds the truncated Gaussian from above. After a plan of cost C, a
node s reached with cost g(s) can only lead to a cheaper plan if h*(s) < C − g(s), so

- the heuristic gets u = C − g(s) for each node it evaluates (a learned TN heuristic then returns
  min(E[x], u) of TN(μ, σ, l − 0.1, u + 0.1), `agents.learned_heuristic`; a heuristic that takes
  no ``upper`` ignores it), and
- a node with g(s) + l(s) ≥ C, l an admissible bound (LM-cut by default), is pruned: no plan
  through it is cheaper than C.

The search: iteration 1 is plain eager GBFS (`pddlgym_sl.search.gbfs`; no incumbent, so no u and
no pruning), so its first plan and evaluation count are exactly those of plain GBFS. Each later
iteration restarts GBFS from the initial state with the current C: open list ordered by h, first
in first out among equal values, goal test at expansion, successors in action-index order; l is
computed once per state, a pruned state is tried again when reached by a cheaper path, and a closed
state reached by a cheaper path is reopened (with its value, not evaluated again). An iteration ends
at its first goal (a plan cheaper than C, by the pruning) or with an empty open list: then no plan
cheaper than C exists (every prefix of such a plan has g + l < C and is reached with its best g),
and the incumbent is optimal. The evaluation budget covers all iterations.

Why restarting GBFS rather than anytime weighted A* (which keeps one open list): the TN value of a
node depends on C, so every value in a kept open list goes stale at each improvement (keeping
them ignores the new u; re-evaluating them all costs more than a restart, which evaluates only
what it reaches); GBFS is the paper's search, so the anytime curve starts at the plain GBFS plan
under comparison; it needs no weight schedule; and restarts do better than continued search in
Richter et al.'s anytime experiments.
"""

from __future__ import annotations

import heapq
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics import HEURISTICS, make_heuristic
from pddlgym_sl.memory import memory_limit_bytes, rss_bytes
from pddlgym_sl.search.driver import BatchEvaluator, BatchHeuristic
from pddlgym_sl.search.gbfs import gbfs
from pddlgym_sl.search.result import SearchResult
from pddlgym_sl.task import CompiledTask

__all__ = ["AnytimeResult", "Improvement", "anytime", "anytime_without_u"]

_OPEN, _CLOSED, _PRUNED, _DEAD = range(4)
_TIME_CHECK = 64  # expansions between time-limit checks


@dataclass
class Improvement:
    """A plan the anytime search found (action names), its cost, and the search's totals when it
    was found."""

    cost: int
    evaluations: int
    expansions: int
    seconds: float
    plan: list[str]


@dataclass
class AnytimeResult(SearchResult):
    """A `SearchResult` (of the best plan) with the anytime search's history.

    ``status``: "optimal" (the last iteration proved that no cheaper plan exists, given an
    admissible bound and a heuristic whose ∞ marks only dead ends), "evaluation_limit" or
    "time_limit" (stopped with or without a plan: see ``solved``), "exhausted" (no plan at all).
    ``improvements``: every plan found, strictly cheaper each time. ``pruned``: states not
    evaluated because g + l ≥ C. ``iterations``: GBFS runs, the first one included.
    """

    improvements: list[Improvement] = field(default_factory=list)
    pruned: int = 0
    iterations: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["improvements"] = [vars(i).copy() for i in self.improvements]
        return d


def _upper_evaluator(
    task: CompiledTask, heuristic: str | BatchHeuristic | BatchEvaluator, pass_upper: bool
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``f(states, upper) -> values``: passes `upper` to a heuristic whose ``batch`` (or which, as a
    function) takes an ``upper`` argument, and drops it for any other."""
    if isinstance(heuristic, str):
        heuristic = make_heuristic(heuristic, task)
    batch = getattr(heuristic, "batch", heuristic)
    if not callable(batch):
        raise ConfigError(
            f"heuristic must be a name, an object with .batch(states) or a callable, not {heuristic!r}"
        )
    try:
        takes_upper = "upper" in inspect.signature(batch).parameters
    except (TypeError, ValueError):  # no introspectable signature (a compiled function)
        takes_upper = False
    if takes_upper and pass_upper:
        return lambda states, upper: batch(states, upper=upper)
    return lambda states, upper: batch(states)


@dataclass
class _Totals:
    evaluations: int = 0
    expansions: int = 0
    generated: int = 0
    pruned: int = 0


def _bounded_gbfs(
    task: CompiledTask,
    evaluate: Callable[[np.ndarray, np.ndarray], np.ndarray],
    lower: BatchHeuristic,
    bound_cache: dict[bytes, float],
    cost_bound: int,
    budget: int,
    deadline: float | None,
    memory_limit: int,
    totals: _Totals,
) -> tuple[str, list[int] | None]:
    """One restart: GBFS from the initial state that prunes g + l ≥ `cost_bound` (module
    docstring). Returns ("solved", plan), or (why it stopped, None): "optimal" for an empty open
    list, "evaluation_limit" when `budget` evaluations (counted in `totals`) are spent, or
    "time_limit" or "memory_limit"."""
    costs = task.fdr.cost

    def bounds(keys: list[bytes], words: np.ndarray) -> np.ndarray:
        """l of each state, from the cache or one batched call for the missing ones."""
        missing = [i for i, k in enumerate(keys) if k not in bound_cache]
        if missing:
            for i, v in zip(missing, lower.batch(words[missing]), strict=True):
                bound_cache[keys[i]] = float(v)
        return np.array([bound_cache[k] for k in keys])

    init = np.array(task.init.words, dtype=np.uint64)[None, :]
    key0 = init.tobytes()
    if bounds([key0], init)[0] >= cost_bound:
        return "optimal", None
    ids = {key0: 0}
    words, g, parent, action, status, h = [init[0]], [0], [-1], [-1], [_PRUNED], [np.nan]
    goal = [task.is_goal(task.init)]
    heap: list[tuple[float, int, int]] = []
    seq = 0
    # nodes waiting for a value, evaluated (within the budget) in generation order
    to_evaluate = [0]
    while True:
        if to_evaluate:
            batch = to_evaluate[: max(budget - totals.evaluations, 0)]
            if batch:
                upper = np.array([cost_bound - g[n] for n in batch], dtype=np.float64)
                values = np.asarray(evaluate(np.stack([words[n] for n in batch]), upper), dtype=np.float64)
                if values.shape != (len(batch),) or np.isnan(values).any():
                    raise ConfigError(f"the heuristic returned {values!r} for a batch of {len(batch)} states")
                totals.evaluations += len(batch)
                for n, v in zip(batch, values, strict=True):
                    h[n] = v
                    if v == np.inf:
                        status[n] = _DEAD
                    else:
                        status[n] = _OPEN
                        heapq.heappush(heap, (v, seq, n))
                        seq += 1
            if len(batch) < len(to_evaluate):
                return "evaluation_limit", None
            to_evaluate = []
        if not heap:
            return "optimal", None
        _, _, node = heapq.heappop(heap)
        if status[node] != _OPEN:
            continue
        status[node] = _CLOSED
        totals.expansions += 1
        if totals.expansions % _TIME_CHECK == 0:
            if deadline is not None and time.perf_counter() > deadline:
                return "time_limit", None
            if rss_bytes() > memory_limit:
                return "memory_limit", None
        if goal[node]:
            plan = []
            while node > 0:
                plan.append(action[node])
                node = parent[node]
            return "solved", plan[::-1]
        acts, succ, succ_goal = task.expand(words[node])
        totals.generated += len(acts)
        candidates: list[int] = []
        for a, row, is_goal in zip(acts.tolist(), succ, succ_goal.tolist(), strict=True):
            key = row.tobytes()
            g_new = g[node] + int(costs[a])
            child = ids.get(key)
            if child is None:
                child = ids[key] = len(words)
                words.append(row.copy())
                g.append(g_new)
                parent.append(node)
                action.append(a)
                status.append(_PRUNED)  # until its bound is checked below
                h.append(np.nan)
                goal.append(is_goal)
            elif status[child] == _DEAD or g_new >= g[child]:
                continue
            else:
                g[child], parent[child], action[child] = g_new, node, a
                if status[child] == _OPEN:
                    continue  # GBFS: a cheaper path keeps its place in the open list
            candidates.append(child)
        if not candidates:
            continue
        keys = [words[c].tobytes() for c in candidates]
        for child, l_value in zip(
            candidates, bounds(keys, np.stack([words[c] for c in candidates])), strict=True
        ):
            if g[child] + l_value >= cost_bound:  # l = inf: a dead end
                totals.pruned += 1
                status[child] = _DEAD if l_value == np.inf else _PRUNED
            elif np.isnan(h[child]):
                to_evaluate.append(child)
            else:  # evaluated before (closed, or pruned on a costlier path): reopened with its value
                status[child] = _OPEN
                heapq.heappush(heap, (h[child], seq, child))
                seq += 1


def anytime(
    task: CompiledTask,
    heuristic: str | BatchHeuristic | BatchEvaluator,
    max_evaluations: int | None = 10_000,
    time_limit: float | None = None,
    memory_limit: float | None = None,
    *,
    bound: str = "lmcut",
    pass_upper: bool = True,
) -> AnytimeResult:
    """Restarting GBFS with the incumbent's cost as an upper bound (see the module docstring).

    Args:
        task: the compiled task.
        heuristic: as for `gbfs`; one whose ``batch`` takes ``upper`` (e.g.
            `agents.learned_heuristic.LearnedHeuristic`) gets u = C − g(s) per state.
        max_evaluations: heuristic evaluations over all iterations (pruned states are not
            evaluated; their bound is computed once per state); None for no limit.
        time_limit: optional wall-clock limit in seconds.
        memory_limit: memory limit in MB of the process (as for `gbfs`; the restarts check it every
            few thousand expansions).
        bound: the admissible heuristic l of the pruning rule g + l ≥ C.
        pass_upper: give the heuristic u (False: pruning only, the ablation).
    """
    if bound not in HEURISTICS or not HEURISTICS[bound].admissible:
        admissible = ", ".join(name for name, h in HEURISTICS.items() if h.admissible)
        raise ConfigError(f"bound={bound!r} is not an admissible heuristic ({admissible})")
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    limit = memory_limit_bytes(memory_limit)
    first = gbfs(task, heuristic, max_evaluations, time_limit, memory_limit=limit / 2**20)
    totals = _Totals(first.evaluations, first.expansions, first.generated)
    best = first.plan_indices if first.solved else None
    improvements = []
    status, iterations = first.status, 1
    evaluate = _upper_evaluator(task, heuristic, pass_upper)
    lower = make_heuristic(bound, task)
    bound_cache: dict[bytes, float] = {}
    budget = np.iinfo(np.int64).max if max_evaluations is None else int(max_evaluations)
    while best is not None:
        cost = int(task.fdr.cost[best].sum())  # below the last one's: the restart pruned g + l ≥ C
        seconds = round(time.perf_counter() - start, 4)
        plan = [task.actions[a] for a in best]
        improvements.append(Improvement(cost, totals.evaluations, totals.expansions, seconds, plan))
        if deadline is not None and time.perf_counter() > deadline:
            status = "time_limit"
            break
        iterations += 1
        status, plan = _bounded_gbfs(
            task, evaluate, lower, bound_cache, cost, budget, deadline, limit, totals
        )
        if plan is None:
            break
        best = plan
    result = SearchResult.of(
        task,
        "solved" if best is not None else first.status,
        best,
        time.perf_counter() - start,
        evaluations=totals.evaluations,
        expansions=totals.expansions,
        generated=totals.generated,
    )
    return AnytimeResult(
        **{**vars(result), "status": status},
        improvements=improvements,
        pruned=totals.pruned,
        iterations=iterations,
    )


def anytime_without_u(
    task: CompiledTask,
    heuristic: str | BatchHeuristic | BatchEvaluator,
    max_evaluations: int | None = 10_000,
    time_limit: float | None = None,
    memory_limit: float | None = None,
    *,
    bound: str = "lmcut",
) -> AnytimeResult:
    """`anytime` that never gives the heuristic u: restarts and pruning only, the ablation that
    shows what u = C − g(s) adds (the same search for a heuristic that takes no u)."""
    return anytime(task, heuristic, max_evaluations, time_limit, memory_limit, bound=bound, pass_upper=False)
