"""Driving the compiled engine from Python: heuristic resolution, memory, growth, batches, time limit.

`search` is what `gbfs` and `astar` call. A heuristic with compiled arguments (every built-in one:
a name or an instance of `pddlgym_sl.heuristics`, and any object with ``engine_args()``) runs
inside the compiled loop; anything else (an object with ``batch(states)``, or a plain function of
a state batch) is called once per expansion with the new successors. The loop runs in slices of
expansions so that a time limit is checked a few times per second.

Memory: the search counts its own bytes (nodes, hash table, open list) on top of the resident
memory the process had when it started, and ends with status ``memory_limit`` before the total
would pass the limit (`pddlgym_sl.memory`: by default three quarters of the machine's memory). Its
statistics say how far it got.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics import HEURISTICS, Heuristic, make_heuristic
from pddlgym_sl.heuristics.compiled import INTEGER_VALUED
from pddlgym_sl.memory import address_space_left, memory_limit_bytes, rss_bytes
from pddlgym_sl.search import engine as eng
from pddlgym_sl.search import open_lists as ol
from pddlgym_sl.search.packing import task_packing
from pddlgym_sl.search.result import SearchResult, evaluation_budget
from pddlgym_sl.search.successor_generator import successor_generator
from pddlgym_sl.task import CompiledTask

BatchEvaluator = Callable[[np.ndarray], np.ndarray]

_STATUS = {eng.SOLVED: "solved", eng.EXHAUSTED: "exhausted", eng.EVALUATION_LIMIT: "evaluation_limit"}
_NO_HEURISTIC = eng.NoHeuristic(np.zeros(1, dtype=np.int64))
_RESERVE_SHARE = 0.8
"""Share of the address space left under ``ulimit -v`` that the node arrays may reserve."""
_MIN_NODES = 1 << 14
MAX_BATCH = 4096
"""The most states `SearchRun.step` hands out at once: an expansion rarely has more new states, and
one with hundreds of thousands (childsnack's hard IPC tasks) is evaluated in slices, the time
limit checked between them."""
_FIRST_NODES = 1 << 10
"""Nodes a search starts with: most searches of a learned heuristic's test set are that short,
and reserving the limit's worth of address space (`_reserve_nodes`) costs tens of microseconds
(an mmap and its munmap), as much as a whole 10-evaluation search. The first growth reserves."""
_HEADROOM_SHARE, _HEADROOM_MIN = 0.01, 8 << 20
"""Memory the count leaves unused (bytes): what the process allocates besides the search's arrays
(page granularity, Python objects) is not counted."""


class BatchHeuristic(Protocol):
    """What search needs from a heuristic: one value per row of a (n, n_words) uint64 state batch."""

    def batch(self, states: np.ndarray) -> np.ndarray: ...


def _heuristic_args(task: CompiledTask, heuristic: Any) -> tuple[Any, BatchEvaluator | None]:
    """(the engine's heuristic arguments, the external batch function or None)."""
    if isinstance(heuristic, str):
        heuristic = make_heuristic(heuristic, task)
    engine_args = getattr(heuristic, "engine_args", None)
    hargs = engine_args() if callable(engine_args) else None
    if hargs is not None:
        if isinstance(heuristic, Heuristic) and heuristic.task is not task:
            raise ConfigError(f"{heuristic!r} was built for another task than {task.name!r}")
        return hargs, None
    batch = getattr(heuristic, "batch", None)
    if callable(batch):
        return _NO_HEURISTIC, batch
    if callable(heuristic):
        return _NO_HEURISTIC, heuristic
    raise ConfigError(
        f"heuristic must be a name ({', '.join(HEURISTICS)}), an object with .batch(states) "
        f"or a callable, not {heuristic!r}"
    )


_SEARCH_TASKS: weakref.WeakKeyDictionary[CompiledTask, eng.SearchTask] = weakref.WeakKeyDictionary()


def _search_task(task: CompiledTask) -> eng.SearchTask:
    """The task as the engine reads it: unsigned index arrays (no wrap-around checks); cached per
    task, since converting them costs as much as a short search's expansions."""
    st = _SEARCH_TASKS.get(task)
    if st is None:
        packing, _ = task_packing(task)
        u = [a.astype(np.uint32) for a in (task.add_ptr, task.add_idx, task.del_ptr, task.del_idx)]
        st = _SEARCH_TASKS[task] = eng.SearchTask(
            successor_generator(task), *u, task.goal.astype(np.uint32), task.goal_neg.astype(np.uint32),
            task.fdr.cost, packing,
        )  # fmt: skip
    return st


class SearchRun:
    """One search advanced step by step: what `search` runs, and what a caller that evaluates the
    states of several searches together (lockstep batches across problems) drives by hand.

    ``states = run.step()`` advances the search until it needs heuristic values (it returns the
    (n, n_words) uint64 batch of new states, a view valid until the next call) or has ended (it
    returns None; `result` then holds the outcome). After a batch, ``run.supply(values)`` hands
    back one value per state (inf = dead end) before the next `step`. With a compiled heuristic
    `step` never returns a batch. A time limit is checked between slices of expansions, the
    memory limit (MB; None: `pddlgym_sl.memory.default_memory_limit`) before every growth. An
    expansion with more than `MAX_BATCH` new states comes in several batches, the limit checked
    between them.
    """

    def __init__(
        self,
        task: CompiledTask,
        heuristic: str | BatchHeuristic | BatchEvaluator,
        *,
        astar: bool,
        max_evaluations: int | None,
        time_limit: float | None,
        memory_limit: float | None = None,
    ) -> None:
        self._budget = evaluation_budget(max_evaluations, time_limit)
        self.task, self.astar = task, astar
        self._limit = memory_limit_bytes(memory_limit)
        self._hargs, self.external = _heuristic_args(task, heuristic)
        self._start = time.perf_counter()
        self._deadline = None if time_limit is None else self._start + time_limit
        # units of work (an expansion, an evaluation) before the first pause: a time-limited search
        # starts at one and doubles while slices take under 20 ms, since a unit may cost seconds
        # (LM-cut on floortile's hard IPC tasks: the 64 of an unlimited start overran 60 s by 90 s)
        self._chunk = 1 if time_limit is not None else 64
        self._awaiting = 0  # states of the batch `step` returned, not yet supplied
        self.result: SearchResult | None = None
        if not task.solvable:  # the translator proved it: the initial state is a dead end
            stats = {"evaluations": min(1, self._budget), "expansions": 0, "generated": 0}
            self.result = SearchResult.of(task, "exhausted", None, self._elapsed(), **stats)
            return
        packing, self._init_packed = task_packing(task)
        self._st = _search_task(task)
        self._init_words = np.array(task.init.words, dtype=np.uint64)
        n_packed = packing.n_words
        integer = self.external is None and type(self._hargs) in INTEGER_VALUED
        h_dtype = np.dtype(np.int32 if integer else np.float64)
        self._node_bytes = eng.node_bytes(n_packed, h_dtype)
        self._work = eng.new_work(task.n_words, n_packed, task.n_actions)
        self._table = eng.new_table(_FIRST_NODES)
        self._open = ol.new_buckets(paired=astar) if integer else ol.new_heap(2 if astar else 1)
        self._base = rss_bytes()  # what the process held before this search
        self._nodes = eng.new_nodes(_FIRST_NODES, n_packed, h_dtype)
        self._reserved = False

    # ----------------------------------------------------------------- memory
    def _other_bytes(self) -> int:
        """The search's memory besides its nodes: the table, the open list, the work buffers."""
        arrays = (*self._open, self._table, *self._work)
        return sum(a.nbytes for a in arrays)

    def _room(self) -> int:
        """Bytes the limit leaves for more nodes."""
        n = int(self._work.info[eng.N_NODES])
        headroom = max(_HEADROOM_MIN, int(_HEADROOM_SHARE * self._limit))
        return self._limit - headroom - self._base - self._other_bytes() - n * self._node_bytes

    def _reserve_nodes(self, n: int) -> eng.Nodes:
        """Node arrays for as many nodes as the limit allows, holding the first `n` nodes of the
        current ones; their pages are committed only when first written (module docstring of
        `engine`), so the reservation costs no memory. Under ``ulimit -v`` it stays within the
        address space left, and a refused reservation is halved; the engine then grows the
        arrays by copying."""
        capacity = max(n + self._room() // self._node_bytes, _MIN_NODES)
        left = address_space_left()
        if left is not None:
            capacity = max(min(capacity, int(_RESERVE_SHARE * left) // self._node_bytes), _MIN_NODES)
        capacity = min(capacity, np.iinfo(np.int32).max)
        while True:
            try:
                return eng.grow_nodes(self._nodes, n, capacity)
            except MemoryError:
                if capacity <= _MIN_NODES:
                    raise
                capacity //= 2

    def _grow(self, code: int) -> bool:
        """Make room after a GROW_* code; False when the memory limit does not allow it."""
        n = int(self._work.info[eng.N_NODES])
        if code == eng.GROW_NODES:
            capacity = len(self._nodes.status)
            if not self._reserved:
                self._reserved = True
                reserved = self._reserve_nodes(n)
                if len(reserved.status) > capacity:
                    self._nodes = reserved
                    return True
            if n + self.task.n_actions + 1 <= capacity:  # the limit stopped it, not the arrays
                return False
            bigger = max(2 * capacity, n + self.task.n_actions + 1)
            if self._base + self._other_bytes() + (n + bigger) * self._node_bytes > self._limit:
                return False
            self._nodes = eng.grow_nodes(self._nodes, n, bigger)
        elif code == eng.GROW_TABLE:
            size = 2 * len(self._table)
            if self._room() < 4 * size:  # the old table and the new one, during the rehash
                return False
            table = np.full(size, -1, dtype=np.int32)
            eng.rehash(table, self._nodes.packed, n)
            self._table = table
        else:
            need = self.task.n_actions + 2
            before = sum(a.nbytes for a in self._open)
            if isinstance(self._open, ol.Buckets):
                keys = max(int(self._work.info[eng.NEED_KEYS]), len(self._open.head))
                if keys > ol.MAX_KEYS:  # values too large for buckets: the same entries in a heap
                    bigger = ol.buckets_to_heap(self._open, need)
                else:
                    bigger = ol.grow_buckets(self._open, keys, need)
            else:
                bigger = ol.grow_heap(self._open, need)
            if self._room() < sum(a.nbytes for a in bigger) + before:
                return False
            self._open = bigger
        return True

    def _max_nodes(self) -> int:
        n = int(self._work.info[eng.N_NODES])
        return n + max(self._room() // self._node_bytes, 0)

    # ----------------------------------------------------------------- stepping
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
        info = self._work.info
        done = int(info[eng.VALUED])
        self._work.values[done : done + n] = values
        info[eng.VALUED] = done + n
        self._awaiting = 0

    def _limit_passed(self) -> bool:
        """Whether the time limit or the process's resident memory passed its limit (then the
        search is finished with that status). The memory the search does not count, its caller's
        and a Python heuristic's own (the NLM's memo of arity-3 tensors), shows only there: a read
        of /proc, a microsecond beside a slice of work or a forward pass."""
        if self._deadline is not None and time.perf_counter() > self._deadline:
            self._finish("time_limit")
        elif rss_bytes() > self._limit:
            self._finish("memory_limit")
        return self.result is not None

    def _next_batch(self) -> np.ndarray | None:
        """The next slice of the expansion's new states, or None (finished) past the time or the
        memory limit, checked before each call of a Python heuristic."""
        if self._limit_passed():
            return None
        done = int(self._work.info[eng.VALUED])
        self._awaiting = min(eng.values_missing(self._work.info), MAX_BATCH)
        return self._work.batch[done : done + self._awaiting]

    def step(self) -> np.ndarray | None:
        """Advance to the next batch to evaluate (returned) or to the end (None)."""
        if self.result is not None:
            return None
        if self._awaiting:
            raise ConfigError("step() before supply() of the pending batch")
        external = self.external is not None
        if external and eng.values_missing(self._work.info):  # the rest of an expansion's states
            return self._next_batch()
        while True:
            t0 = time.perf_counter()
            code = eng.run_for(type(self._hargs))(
                self._nodes, self._table, self._open, self._work, self._st, self._init_words,
                self._init_packed, self._hargs, external, self.astar, self.astar, self._budget,
                self._chunk, self._max_nodes(),
            )  # fmt: skip
            if code in (eng.GROW_NODES, eng.GROW_TABLE, eng.GROW_OPEN):
                if not self._grow(code):
                    self._finish("memory_limit")
                    return None
            elif code == eng.NEED_VALUES:
                return self._next_batch()
            elif code == eng.PAUSED:
                elapsed = time.perf_counter() - t0
                if elapsed < 0.02:
                    self._chunk = min(self._chunk * 2, 1 << 20)
                else:  # aim at 10 ms: a unit of work may cost far more than the last chunk's did
                    self._chunk = max(int(self._chunk * 0.01 / elapsed), 1)
            else:
                self._finish(_STATUS[code])
                return None
            if self._limit_passed():  # after a pause or a growth
                return None

    def out_of_memory(self) -> None:
        """End the search with status ``memory_limit``: its Python heuristic could not allocate
        what the pending batch needed (`supply` is then never called)."""
        self._awaiting = 0
        self._finish("memory_limit")

    def _plan(self, goal_node: int) -> list[int]:
        """The operators from the initial state to `goal_node` (`engine.plan_to`)."""
        words = np.empty(self.task.n_words, dtype=np.uint64)
        return eng.plan_to(goal_node, self._nodes.packed, self._nodes.parent, self._st, words).tolist()

    def _finish(self, status: str) -> None:
        info = self._work.info
        stats = {
            "evaluations": eng.evaluations_done(info),
            "expansions": int(info[eng.EXPANSIONS]),
            "generated": int(info[eng.GENERATED]),
        }
        plan = self._plan(int(info[eng.GOAL_NODE])) if status == "solved" else None
        self.result = SearchResult.of(self.task, status, plan, self._elapsed(), **stats)
        if plan is None:  # compile the plan extraction now (a warm-up search rarely finds a plan):
            self._plan(0)  # the initial state's empty plan, no walk
        self._nodes = self._table = self._open = None  # type: ignore[assignment]  # free the memory


def search(
    task: CompiledTask,
    heuristic: str | BatchHeuristic | BatchEvaluator,
    *,
    astar: bool,
    max_evaluations: int | None,
    time_limit: float | None,
    memory_limit: float | None = None,
) -> SearchResult:
    """Run the engine (see `pddlgym_sl.search.engine`) to the end; A* when `astar`, else GBFS."""
    run = SearchRun(
        task, heuristic, astar=astar, max_evaluations=max_evaluations, time_limit=time_limit,
        memory_limit=memory_limit,
    )  # fmt: skip
    while (states := run.step()) is not None:
        try:
            values = run.external(states)
        except MemoryError:  # the heuristic's own arrays (a learned model's) do not fit
            run.out_of_memory()
            break
        run.supply(values)
    assert run.result is not None
    return run.result
