"""A* search (goal test at expansion, re-opening), for optimal plans on small tasks and for tests.

With an admissible heuristic the returned plan is optimal. Ties in f are broken by lower h,
then FIFO. Unit action costs.
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from pddlgym_sl.search.result import SearchResult
from pddlgym_sl.search.space import BatchEvaluator, BatchHeuristic, SearchSpace, batch_evaluator
from pddlgym_sl.task import CompiledTask


def astar(
    task: CompiledTask,
    heuristic: str | BatchHeuristic | BatchEvaluator = "blind",
    max_evaluations: int | None = None,
    time_limit: float | None = None,
) -> SearchResult:
    """Run A* from `task.init` with unit costs; returns an optimal plan for admissible heuristics."""
    evaluate = batch_evaluator(task, heuristic)
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    space = SearchSpace()
    root = space.add(task.init, -1, -1)
    g = [0]
    h = [float(evaluate(task.init.words[None, :])[0])]
    stats = {"evaluations": 1, "expansions": 0, "generated": 0}

    def finish(status: str, goal_node: int | None = None) -> SearchResult:
        return space.result(task, status, goal_node, time.perf_counter() - start, stats)

    open_list: list[tuple[float, float, int, int]] = []
    if not math.isinf(h[0]):
        open_list.append((h[0], h[0], 0, root))
    counter = 1
    ids = space.ids
    while open_list:
        if deadline is not None and time.perf_counter() > deadline:
            return finish("time_limit")
        f, _, _, nid = heapq.heappop(open_list)
        if f > g[nid] + h[nid]:
            continue  # stale entry: the node was re-opened with a lower g
        words = space.words(nid)
        if task.is_goal(task.state_from_words(words)):
            return finish("solved", nid)
        stats["expansions"] += 1
        acts, succ, _ = task.expand(words)
        stats["generated"] += len(acts)
        fresh_rows: list[int] = []
        fresh_ids: list[int] = []
        g_child = g[nid] + 1
        for i in range(len(acts)):
            key = succ[i].tobytes()
            child = ids.get(key)
            if child is None:
                child = space.add(key, nid, int(acts[i]))
                g.append(g_child)
                h.append(math.inf)
                fresh_rows.append(i)
                fresh_ids.append(child)
            elif g_child < g[child]:
                g[child] = g_child
                space.parents[child] = nid
                space.actions[child] = int(acts[i])
                if not math.isinf(h[child]):
                    heapq.heappush(open_list, (g_child + h[child], h[child], counter, child))
                    counter += 1
        if fresh_rows:
            if max_evaluations is not None and stats["evaluations"] + len(fresh_rows) > max_evaluations:
                return finish("evaluation_limit")
            values = np.asarray(evaluate(succ[fresh_rows]), dtype=np.float64)
            stats["evaluations"] += len(fresh_rows)
            for value, child in zip(values.tolist(), fresh_ids, strict=True):
                h[child] = value
                if not math.isinf(value):
                    heapq.heappush(open_list, (g_child + value, value, counter, child))
                    counter += 1
    return finish("exhausted")
