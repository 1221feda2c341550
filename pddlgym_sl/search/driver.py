"""Driving the compiled engine from Python: heuristic resolution, growth, batches, time limit.

`search` is what `gbfs` and `astar` call. A built-in heuristic (a name, or an instance of one of
`pddlgym_sl.heuristics`) runs inside the compiled loop; anything else (an object with
``batch(states)``, or a plain function of a state batch) is called once per expansion with the
new successors. The loop runs in slices of expansions so that a time limit is checked a few
times per second.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cache
from typing import Protocol

import numpy as np

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics import HEURISTICS, Heuristic, make_heuristic
from pddlgym_sl.heuristics.lmcut import LMCut
from pddlgym_sl.heuristics.lmcut import new_work as new_cut_work
from pddlgym_sl.heuristics.relaxation import HFF, HAdd, HMax
from pddlgym_sl.heuristics.relaxation import new_work as new_relaxation_work
from pddlgym_sl.heuristics.relaxed_task import build_cut_task, build_unary_task
from pddlgym_sl.heuristics.simple import Blind, GoalCount
from pddlgym_sl.search import engine as eng
from pddlgym_sl.search.result import SearchResult
from pddlgym_sl.search.successor_generator import successor_generator
from pddlgym_sl.task import CompiledTask, FDRLayout, state_tables

BatchEvaluator = Callable[[np.ndarray], np.ndarray]

_KINDS = {
    Blind: eng.BLIND,
    GoalCount: eng.GOAL_COUNT,
    HMax: eng.HMAX,
    HAdd: eng.HADD,
    HFF: eng.HFF,
    LMCut: eng.LMCUT,
}
_STATUS = {eng.SOLVED: "solved", eng.EXHAUSTED: "exhausted", eng.EVALUATION_LIMIT: "evaluation_limit"}


class BatchHeuristic(Protocol):
    """What search needs from a heuristic: one value per row of a (n, n_words) uint64 state batch."""

    def batch(self, states: np.ndarray) -> np.ndarray: ...


@cache
def _null_data() -> tuple:
    """Heuristic data of an empty task, standing in for the kinds a search does not use (the
    compiled loop takes every kind's arrays, so that it is compiled once)."""
    empty = np.empty(0, dtype=np.int32)
    fdr = FDRLayout(
        var_facts_ptr=np.zeros(1, dtype=np.int32),
        var_facts_idx=empty,
        var_prop=np.zeros(1, dtype=np.int32),
        var_none=empty,
        fact_prop=empty,
        prop_fact=empty,
        goal=empty,
        pre_ptr=np.zeros(1, dtype=np.int32),
        pre_idx=empty,
        eff_ptr=np.zeros(1, dtype=np.int32),
        eff_idx=empty,
        guard_idx=empty,
        cost=np.empty(0, dtype=np.int64),
        succ_order=empty,
        **state_tables(np.zeros(1, dtype=np.int32), empty, empty, empty),
    )

    class _Null:
        n_actions = 0

    null = _Null()
    null.fdr = fdr  # type: ignore[attr-defined]
    ut = build_unary_task(null)  # type: ignore[arg-type]
    ct = build_cut_task(null)  # type: ignore[arg-type]
    return fdr, ut, new_relaxation_work(ut), ct, new_cut_work(ct), empty, empty, empty


def _heuristic_args(task: CompiledTask, heuristic) -> tuple[int, tuple, BatchEvaluator | None]:
    """(kind, the compiled loop's heuristic arguments, external batch function or None)."""
    if isinstance(heuristic, str):
        heuristic = make_heuristic(heuristic, task)
    fdr, ut, rw, ct, lw, gc_fact, gc_neg_ptr, gc_neg_idx = _null_data()
    step = 0.0
    kind = _KINDS.get(type(heuristic)) if isinstance(heuristic, Heuristic) else None
    if kind == eng.LMCUT and not (heuristic.goal_zone_detection and heuristic.border_detection):
        kind = None  # the compiled loop runs LM-cut with Fast Downward's default options only
    if kind is not None and heuristic.task is not task:
        raise ConfigError(f"{heuristic!r} was built for another task than {task.name!r}")
    if kind is None:
        batch = getattr(heuristic, "batch", None)
        if callable(batch):
            external = batch
        elif callable(heuristic):
            external = heuristic
        else:
            raise ConfigError(
                f"heuristic must be a name ({', '.join(HEURISTICS)}), an object with .batch(states) "
                f"or a callable, not {heuristic!r}"
            )
        return eng.EXTERNAL, (fdr, ut, rw, ct, lw, gc_fact, gc_neg_ptr, gc_neg_idx, step), external
    fdr = task.fdr
    if kind in (eng.HMAX, eng.HADD, eng.HFF):
        ut, rw = heuristic.ut, heuristic.work
    elif kind == eng.LMCUT:
        ct, lw = heuristic.ct, heuristic.work
    elif kind == eng.GOAL_COUNT:
        gc_fact, gc_neg_ptr, gc_neg_idx = heuristic.goal_fact, heuristic.neg_ptr, heuristic.neg_idx
    else:
        step = heuristic.step
    return kind, (fdr, ut, rw, ct, lw, gc_fact, gc_neg_ptr, gc_neg_idx, step), None


def _effects(task: CompiledTask) -> tuple[np.ndarray, ...]:
    """The task's effects and goal as the engine indexes them: unsigned (no wrap-around checks)."""
    arrays = (task.add_ptr, task.add_idx, task.del_ptr, task.del_idx, task.goal, task.goal_neg)
    return (*(a.astype(np.uint32) for a in arrays), task.fdr.cost)


def search(
    task: CompiledTask,
    heuristic: str | BatchHeuristic | BatchEvaluator,
    *,
    astar: bool,
    max_evaluations: int | None,
    time_limit: float | None,
) -> SearchResult:
    """Run the engine (see `pddlgym_sl.search.engine`) to the end; A* when `astar`, else GBFS."""
    if max_evaluations is not None and (
        isinstance(max_evaluations, bool) or int(max_evaluations) != max_evaluations
    ):
        raise ConfigError(f"max_evaluations must be a whole number, not {max_evaluations!r}")
    if time_limit is not None and not time_limit > 0:
        raise ConfigError(f"time_limit must be positive, not {time_limit!r}")
    budget = np.iinfo(np.int64).max if max_evaluations is None else max(int(max_evaluations), 0)
    kind, hargs, external = _heuristic_args(task, heuristic)
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    if not task.solvable:  # the translator proved it: the initial state is a dead end
        stats = {"evaluations": min(1, budget), "expansions": 0, "generated": 0}
        return SearchResult.of(task, "exhausted", None, time.perf_counter() - start, **stats)
    e = eng.new_engine(task.n_words, task.n_actions)
    init = np.array(task.init.words, dtype=np.uint64)
    gen = successor_generator(task)
    effects = _effects(task)
    chunk = 64
    while True:
        t0 = time.perf_counter()
        code = eng.run(e, init, gen, *effects, astar, astar, budget, chunk, kind, *hargs)
        if code == eng.GROW:
            e = eng.grow(e)
        elif code == eng.NEED_VALUES:
            n = int(e.info[eng.N_NEW])
            values = np.asarray(external(e.batch[:n]), dtype=np.float64).reshape(-1)
            if values.shape != (n,):
                raise ConfigError(
                    f"the heuristic returned {values.shape[0]} values for a batch of {n} states"
                )
            if np.isnan(values).any():
                raise ConfigError("the heuristic returned NaN")
            e.values[:n] = values
        elif code == eng.PAUSED:
            elapsed = time.perf_counter() - t0
            chunk = min(chunk * 2, 1 << 20) if elapsed < 0.02 else max(chunk // 2, 1)
        else:
            break
        if deadline is not None and time.perf_counter() > deadline:
            code = None
            break
    info = e.info
    goal_node = int(info[eng.GOAL_NODE]) if code == eng.SOLVED else -1
    plan = []
    node = goal_node
    while node > 0:
        plan.append(int(e.node[node, 1]))
        node = int(e.node[node, 0])
    plan.reverse()
    stats = {
        "evaluations": int(info[eng.EVALUATIONS]),
        "expansions": int(info[eng.EXPANSIONS]),
        "generated": int(info[eng.GENERATED]),
    }
    status = "time_limit" if code is None else _STATUS[code]
    return SearchResult.of(
        task, status, plan if code == eng.SOLVED else None, time.perf_counter() - start, **stats
    )
