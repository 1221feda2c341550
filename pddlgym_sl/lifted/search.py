"""Lifted GBFS: `lifted_gbfs` runs the compiled loop of `engine` under time and memory limits and
returns a `pddlgym_sl.search.SearchResult`, as the grounded `pddlgym_sl.search.gbfs` does.

The driver runs the loop in slices of expansions sized by the clock (one at first under a time
limit, doubling while a slice takes under 20 ms, as the grounded driver does), checks the time and
the process's resident memory between slices, and grows the engine's arrays when it asks
(doubling; refused, with status ``memory_limit``, when the arrays would pass the limit).
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.lifted import engine as eng
from pddlgym_sl.lifted.expand import view_capacity
from pddlgym_sl.lifted.query import LiftedError
from pddlgym_sl.lifted.registry import lifted_heuristic
from pddlgym_sl.lifted.symmetry import symmetry_args
from pddlgym_sl.lifted.task import LiftedTask
from pddlgym_sl.memory import memory_limit_bytes, rss_bytes
from pddlgym_sl.search.result import SearchResult

__all__ = ["LiftedSearch", "lifted_gbfs", "warm_up_lifted"]

_STATUS = {eng.SOLVED: "solved", eng.EXHAUSTED: "exhausted", eng.EVALUATION_LIMIT: "evaluation_limit"}
_FIRST_STATES = 1 << 12
_HEADROOM = 64 << 20


class LiftedSearch:
    """One lifted GBFS run, advanced by `step` until `result` is set (`lifted_gbfs` runs it to the end).

    Args:
        task: the lifted task.
        heuristic: a name of `heuristics.LIFTED_HEURISTICS` or the arguments of a compiled lifted
            heuristic (a NamedTuple with a `heuristics.lifted_value` overload).
        max_evaluations, time_limit, memory_limit (MB, the whole process): as `pddlgym_sl.search.gbfs`.
        symmetry: generate one successor per class of isomorphic ones (`symmetry`; on by default:
            the successors left out are isomorphic to ones kept, so a plan is found all the same).
        lazy: deferred evaluation (`engine`: a successor is evaluated when it is taken from the open
            list, under its parent's value until then): one evaluation per expansion, for tasks
            whose states have hundreds of successors.
    """

    def __init__(
        self,
        task: LiftedTask,
        heuristic: str | NamedTuple,
        *,
        max_evaluations: int | None = 10_000,
        time_limit: float | None = None,
        memory_limit: float | None = None,
        symmetry: bool = True,
        lazy: bool = False,
    ) -> None:
        if time_limit is not None and not time_limit > 0:
            raise ConfigError(f"time_limit must be positive, not {time_limit!r}")
        self.task = task
        self._start = time.perf_counter()
        self._deadline = None if time_limit is None else self._start + time_limit
        self._limit = memory_limit_bytes(memory_limit)
        self._budget = np.iinfo(np.int64).max if max_evaluations is None else max(int(max_evaluations), 0)
        self._hargs = lifted_heuristic(heuristic, task) if isinstance(heuristic, str) else heuristic
        self.result: SearchResult | None = None
        sym = symmetry_args(task)
        self._use_sym = bool(symmetry and sym.possible)
        self._lazy = bool(lazy)
        plan = task.plan
        width = 1 + task.max_params
        max_effects = int(np.diff(task.effect_ptr).max(initial=0))
        self._t = eng.EngineTask(
            plan, task.effects, task.effect_ptr, task.fact_code, task.goal.astype(np.uint32),
            task.goal_neg.astype(np.uint32), sym, max_effects,
            _zobrist(task.n_facts),
        )  # fmt: skip
        self._work = eng.new_work(
            task.n_facts,
            len(task.objects),
            width,
            view_capacity(task),
            len(plan.views),
            len(plan.steps),
            max_effects,
        )
        self._base = rss_bytes()
        self._store = eng.new_store(
            _FIRST_STATES, _FIRST_STATES * max(len(task.init), 1), width, eng.pool_dtype(task.n_facts)
        )
        self._chunk = 1 if time_limit is not None else 64
        if not task.solvable or self._budget < 1:
            self._finish("exhausted" if not task.solvable else "evaluation_limit")
            return
        self._run = eng.run_for(type(self._hargs))
        start = eng.start_for(type(self._hargs))
        code = start(self._t, self._store, self._work, self._hargs, task.init.astype(self._store.pool.dtype))
        if code == eng.EXHAUSTED:
            self._finish("exhausted")

    def _grow(self) -> bool:
        """Grow what the engine asked for, an array at a time (the old one freed before the next is
        made, so growing needs one array's copy on top of the rest); by half again, or less where the
        memory limit leaves less room, and at least what the next expansion needs. False when the
        limit does not allow even that."""
        info, st = self._work.info, self._store
        if info[eng.NEED_ACTS] > len(self._work.acts):
            acts = np.zeros((int(info[eng.NEED_ACTS]), self._work.acts.shape[1]), dtype=np.int64)
            if rss_bytes() + acts.nbytes + _HEADROOM > self._limit:
                return False
            self._work = self._work._replace(acts=acts)
            info[eng.NEED_ACTS] = 0
            return True
        n, heap, used = int(info[eng.N_STATES]), int(info[eng.HEAP_SIZE]), int(info[eng.POOL_USED])
        need_pool, need_states = int(info[eng.NEED_POOL]), int(info[eng.NEED_STATES])
        need_states = max(need_states, heap + need_states - n)
        room = self._limit - rss_bytes() - _HEADROOM
        per_state = (
            sum(a.itemsize * (a.size // max(len(a), 1)) for a in st if a is not st.pool and a is not st.table)
            + 16
        )
        per_atom = st.pool.itemsize
        arrays = dict(st._asdict())
        if need_pool > len(st.pool):
            size = max(need_pool, min(len(st.pool) * 3 // 2, need_pool + max(room, 0) // (2 * per_atom)))
            if (size - len(st.pool)) * per_atom > room:
                return False
            arrays["pool"] = _resized(st.pool, size, used)
            room -= (size - len(st.pool)) * per_atom
        if need_states > len(st.start) or 2 * need_states > len(st.table):
            size = max(
                need_states, min(len(st.start) * 3 // 2, need_states + max(room, 0) // (2 * per_state))
            )
            if (size - len(st.start)) * per_state > room:
                return False
            for name, keep in (("start", n), ("length", n), ("parent", n), ("action", n), ("hashes", n),
                               ("heap_key", heap), ("heap_seq", heap), ("heap_id", heap)):  # fmt: skip
                arrays[name] = _resized(arrays[name], size, keep)
            slots = 1 << max(4, int(2 * size - 1).bit_length())
            if slots > len(st.table):
                arrays["table"] = None
                arrays["table"] = np.full(slots, -1, dtype=np.int64)
        self._store = eng.Store(**arrays)
        if len(self._store.table) != len(st.table):
            del st, arrays
            eng.rehash(self._store, n)
        return True

    def _elapsed(self) -> float:
        return time.perf_counter() - self._start

    def step(self) -> bool:
        """Advance one slice; True while the search goes on."""
        if self.result is not None:
            return False
        t0 = time.perf_counter()
        code = self._run(
            self._t,
            self._store,
            self._work,
            self._hargs,
            self._use_sym,
            self._budget,
            self._chunk,
            self._lazy,
        )
        if code == eng.GROW:
            if not self._grow():
                self._finish("memory_limit")
                return False
        elif code == eng.PAUSED:
            elapsed = time.perf_counter() - t0
            if elapsed < 0.02:
                self._chunk = min(self._chunk * 2, 1 << 20)
            else:
                self._chunk = max(int(self._chunk * 0.01 / elapsed), 1)
        elif code == eng.BROKEN:
            raise LiftedError(
                "an action added an atom the reachability analysis missed", file=self.task.problem_file
            )
        else:
            self._finish(_STATUS[code])
            return False
        if self._deadline is not None and time.perf_counter() > self._deadline:
            self._finish("time_limit")
        elif rss_bytes() > self._limit:
            self._finish("memory_limit")
        return self.result is None

    def _finish(self, status: str) -> None:
        info = self._work.info
        plan: list[str] = []
        if status == "solved":
            rows = eng.plan_rows(self._store, int(info[eng.GOAL_STATE]))
            plan = [self.task.action_name(row) for row in rows]
        self.result = SearchResult(
            solved=status == "solved",
            plan=plan,
            cost=len(plan) if status == "solved" else None,
            evaluations=int(info[eng.EVALUATIONS]),
            expansions=int(info[eng.EXPANSIONS]),
            generated=int(info[eng.GENERATED]),
            seconds=self._elapsed(),
            status=status,
        )
        st = self._store
        n = max(int(info[eng.N_STATES]), 1)
        self.stored_states = int(info[eng.N_STATES])
        # per stored state: its fact ids, and its entries of the per-state arrays (start, length,
        # parent, action, hash; the table's two slots and the open list's entry not counted)
        self.state_bytes = int(info[eng.POOL_USED]) * st.pool.itemsize / n
        self.node_bytes = self.state_bytes + sum(
            getattr(st, k).itemsize * (getattr(st, k).size // len(getattr(st, k)))
            for k in ("start", "length", "parent", "action", "hashes")
        )
        self._store = None  # type: ignore[assignment]  # free the memory


def _zobrist(n_facts: int) -> np.ndarray:
    """Each fact's random odd 64-bit hash key (`engine.state_hash`), the same in every run."""
    keys = np.random.default_rng(0).integers(0, 2**63, size=max(n_facts, 1), dtype=np.uint64)
    return keys * np.uint64(2) + np.uint64(1)


def _resized(a: np.ndarray, size: int, keep: int) -> np.ndarray:
    """A copy of `a` with `size` rows, its first `keep` rows kept."""
    out = np.empty((size, *a.shape[1:]), dtype=a.dtype)
    out[:keep] = a[:keep]
    return out


def lifted_gbfs(
    task: LiftedTask,
    heuristic: str | NamedTuple,
    max_evaluations: int | None = 10_000,
    time_limit: float | None = None,
    memory_limit: float | None = None,
    symmetry: bool = True,
    lazy: bool = False,
) -> SearchResult:
    """Eager (or `lazy`) GBFS on the lifted task from its initial state (`LiftedSearch`), to the end."""
    run = LiftedSearch(
        task, heuristic, max_evaluations=max_evaluations, time_limit=time_limit, memory_limit=memory_limit,
        symmetry=symmetry, lazy=lazy,
    )  # fmt: skip
    while run.step():
        pass
    assert run.result is not None
    return run.result


def warm_up_lifted(
    task: LiftedTask, heuristic: str | Any, symmetry: bool = True, lazy: bool = False
) -> float:
    """Compile (or load from numba's cache) the lifted engine for this heuristic by a search of a
    few evaluations on `task`; its seconds (what ``compile_seconds`` reports)."""
    t0 = time.perf_counter()
    lifted_gbfs(task, heuristic, max_evaluations=20, symmetry=symmetry, lazy=lazy)
    return time.perf_counter() - t0
