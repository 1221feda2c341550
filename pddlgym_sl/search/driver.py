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


class SearchRun:
    """One search advanced step by step: what `search` runs, and what a caller that evaluates the
    states of several searches together (lockstep batches across problems) drives by hand.

    ``states = run.step()`` advances the search until it needs heuristic values (it returns the
    (n, n_words) uint64 batch of new states, a view valid until the next call) or has ended (it
    returns None; `result` then holds the outcome). After a batch, ``run.supply(values)`` hands
    back one value per state (inf = dead end) before the next `step`. With a built-in heuristic
    `step` never returns a batch. A time limit is checked between slices of expansions.
    """

    def __init__(
        self,
        task: CompiledTask,
        heuristic: str | BatchHeuristic | BatchEvaluator,
        *,
        astar: bool,
        max_evaluations: int | None,
        time_limit: float | None,
    ) -> None:
        if max_evaluations is not None and (
            isinstance(max_evaluations, bool) or int(max_evaluations) != max_evaluations
        ):
            raise ConfigError(f"max_evaluations must be a whole number, not {max_evaluations!r}")
        if time_limit is not None and not time_limit > 0:
            raise ConfigError(f"time_limit must be positive, not {time_limit!r}")
        self.task, self.astar = task, astar
        self._budget = np.iinfo(np.int64).max if max_evaluations is None else max(int(max_evaluations), 0)
        self._kind, self._hargs, self.external = _heuristic_args(task, heuristic)
        self._start = time.perf_counter()
        self._deadline = None if time_limit is None else self._start + time_limit
        self._chunk = 64
        self._awaiting = 0
        self.result: SearchResult | None = None
        if not task.solvable:  # the translator proved it: the initial state is a dead end
            stats = {"evaluations": min(1, self._budget), "expansions": 0, "generated": 0}
            self.result = SearchResult.of(task, "exhausted", None, self._elapsed(), **stats)
            return
        self._engine = eng.new_engine(task.n_words, task.n_actions)
        self._init = np.array(task.init.words, dtype=np.uint64)
        self._gen = successor_generator(task)
        self._effects = _effects(task)

    def _elapsed(self) -> float:
        return time.perf_counter() - self._start

    @property
    def done(self) -> bool:
        return self.result is not None

    def supply(self, values: np.ndarray) -> None:
        """The values of the batch the last `step` returned, in its order."""
        n = self._awaiting
        if not n:
            raise ConfigError("supply() without a pending batch (call step() first)")
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if values.shape != (n,):
            raise ConfigError(f"the heuristic returned {values.shape[0]} values for a batch of {n} states")
        if np.isnan(values).any():
            raise ConfigError("the heuristic returned NaN")
        self._engine.values[:n] = values
        self._awaiting = 0

    def step(self) -> np.ndarray | None:
        """Advance to the next batch to evaluate (returned) or to the end (None)."""
        if self.result is not None:
            return None
        if self._awaiting:
            raise ConfigError("step() before supply() of the pending batch")
        e = self._engine
        while True:
            t0 = time.perf_counter()
            code = eng.run(
                e, self._init, self._gen, *self._effects, self.astar, self.astar, self._budget,
                self._chunk, self._kind, *self._hargs,
            )  # fmt: skip
            if code == eng.GROW:
                e = self._engine = eng.grow(e)
            elif code == eng.NEED_VALUES:
                self._awaiting = int(e.info[eng.N_NEW])
                if self._deadline is not None and time.perf_counter() > self._deadline:
                    self._awaiting = 0
                    self._finish(None)
                    return None
                return e.batch[: self._awaiting]
            elif code == eng.PAUSED:
                elapsed = time.perf_counter() - t0
                self._chunk = min(self._chunk * 2, 1 << 20) if elapsed < 0.02 else max(self._chunk // 2, 1)
            else:
                self._finish(code)
                return None
            if self._deadline is not None and time.perf_counter() > self._deadline:
                self._finish(None)
                return None

    def _finish(self, code: int | None) -> None:
        e = self._engine
        info = e.info
        plan = None
        if code == eng.SOLVED:
            plan = []
            node = int(info[eng.GOAL_NODE])
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
        self.result = SearchResult.of(self.task, status, plan, self._elapsed(), **stats)


def search(
    task: CompiledTask,
    heuristic: str | BatchHeuristic | BatchEvaluator,
    *,
    astar: bool,
    max_evaluations: int | None,
    time_limit: float | None,
) -> SearchResult:
    """Run the engine (see `pddlgym_sl.search.engine`) to the end; A* when `astar`, else GBFS."""
    run = SearchRun(task, heuristic, astar=astar, max_evaluations=max_evaluations, time_limit=time_limit)
    while (states := run.step()) is not None:
        run.supply(run.external(states))
    assert run.result is not None
    return run.result
