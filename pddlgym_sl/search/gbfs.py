"""Eager greedy best-first search (GBFS), the paper's search algorithm for learned heuristics.

Semantics (fixed so that evaluation counts are comparable across heuristics and runs):
- eager: successors are evaluated when generated, all successors of one expansion in ONE
  call of the heuristic (a neural heuristic runs one forward pass per expansion);
- goal test at generation: a generated goal state ends the search before it is evaluated;
- duplicates are never re-evaluated or re-opened (the first path to a state is kept);
- ties in h are broken FIFO (earlier generated first);
- the budget counts heuristic evaluations (the initial state included); when the states of an
  expansion would exceed it, only those that fit are evaluated (in generation order), and the
  search stops unsolved as soon as it needs an evaluation it has no budget for.
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from pddlgym_sl.search.result import SearchResult
from pddlgym_sl.search.space import BatchEvaluator, BatchHeuristic, SearchSpace, batch_evaluator
from pddlgym_sl.task import CompiledTask


def gbfs(
    task: CompiledTask,
    heuristic: str | BatchHeuristic | BatchEvaluator,
    max_evaluations: int = 10_000,
    time_limit: float | None = None,
) -> SearchResult:
    """Run eager GBFS from `task.init`; see the module docstring for the exact semantics.

    Args:
        task: the compiled task.
        heuristic: a heuristic name (``"hff"``), an object with ``batch(states) -> values`` or a
            function of a (n, n_words) uint64 state batch returning n values (inf = dead end).
        max_evaluations: heuristic-evaluation budget (the paper uses 10,000).
        time_limit: optional wall-clock limit in seconds.
    """
    evaluate = batch_evaluator(task, heuristic)
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    space = SearchSpace()
    root = space.add(task.init, -1, -1)
    stats = {"evaluations": 0, "expansions": 0, "generated": 0}

    def finish(status: str, goal_node: int | None = None) -> SearchResult:
        return space.result(task, status, goal_node, time.perf_counter() - start, stats)

    if task.is_goal(task.init):
        return finish("solved", root)
    if max_evaluations < 1:
        return finish("evaluation_limit")
    h0 = float(evaluate(task.init.words[None, :])[0])
    stats["evaluations"] = 1
    open_list: list[tuple[float, int, int]] = []
    if not math.isinf(h0):
        open_list.append((h0, root, root))
    counter = 1
    ids = space.ids
    while open_list:
        if deadline is not None and time.perf_counter() > deadline:
            return finish("time_limit")
        _, _, nid = heapq.heappop(open_list)
        stats["expansions"] += 1
        acts, succ, is_goal = task.expand(space.words(nid))
        stats["generated"] += len(acts)
        new_rows: list[int] = []
        new_ids: list[int] = []
        for i in range(len(acts)):
            key = succ[i].tobytes()
            if key in ids:
                continue
            child = space.add(key, nid, int(acts[i]))
            if is_goal[i]:
                return finish("solved", child)
            new_rows.append(i)
            new_ids.append(child)
        if not new_rows:
            continue
        budget = max_evaluations - stats["evaluations"]
        if budget <= 0:
            return finish("evaluation_limit")
        if len(new_rows) > budget:
            new_rows, new_ids = new_rows[:budget], new_ids[:budget]
        values = np.asarray(evaluate(succ[new_rows]), dtype=np.float64)
        if np.isnan(values).any():
            raise ValueError("the heuristic returned NaN")
        stats["evaluations"] += len(new_rows)
        for h, child in zip(values.tolist(), new_ids, strict=True):
            if h != math.inf:
                heapq.heappush(open_list, (h, counter, child))
                counter += 1
    return finish("exhausted")
