"""The lifted search's compiled loop: eager GBFS over lifted states, as Fast Downward's
``eager_greedy([h])`` orders it, or lazy GBFS (``lazy``), as its ``lazy_greedy([h])`` without
preferred operators.

A state is stored once, as its sorted fact ids in one growing *pool* (uint16 or uint32,
`pool_dtype`; `Store`: where each
state starts, its length, its parent and the action row that generated it, its hash). A hash
table (open addressing, linear probing, at most half full, keyed by a Zobrist hash: a successor's
hash is its parent's plus its changes, so a duplicate successor is found, and compared, before
anything is written) maps states to their index; the open
list is a binary heap keyed by (h, insertion order): lowest h first, first in first out among
equal values. Semantics as the grounded engine's GBFS (`pddlgym_sl.search.gbfs`): goal test when
a state is expanded (the goal state counted as expanded), each new successor evaluated when it is
generated, a state never evaluated twice, dead ends (``inf``) not queued, the evaluation budget
counting the initial state.

Lazy GBFS is for tasks whose states have hundreds of successors (transport, rovers, satellite): an
expansion stores each successor as a *node* (its parent and action row, length -1: about 100 bytes
with its open-list and table entries, where a stored state of a hard transport task takes about 500),
queued under its parent's value. A popped node is written as a state (`_materialize`; dropped when
an equal state is stored already: duplicates are found when popped, not when generated), tested
for the goal, evaluated (a dead end then dropped) and expanded: one evaluation per expansion
instead of one per successor. The initial state, evaluated by `start`, is not evaluated again.

`run` works until the search ends or has expanded ``max_expansions`` states (`PAUSED`: the driver
checks the clock and the memory in between), or until an array is too small for the next
expansion (`GROW`: the state being expanded is kept in ``info[PENDING]`` and expanded again after
the driver has grown the arrays, ``info[NEED_*]`` saying how much room it needs). Compiled once
per heuristic argument class (`heuristics.lifted_value`), each class's copy cached apart
(`run_for`, as `pddlgym_sl.search.engine.run_for` does: one shared cache index would make a
search with goal count import the learning code of the WL heuristic's class).
"""

from __future__ import annotations

from types import FunctionType
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from pddlgym_sl.lifted.heuristics import lifted_value
from pddlgym_sl.lifted.join import (
    OVERFLOW,
    build_views,
    effect_changes,
    enumerate_bindings,
    equals_changed,
    is_goal,
    merge_changes,
)
from pddlgym_sl.lifted.symmetry import SymmetryArgs, classes_of
from pddlgym_sl.numba_cache import CACHE

__all__ = [
    "EngineTask",
    "Store",
    "Work",
    "new_store",
    "new_work",
    "plan_rows",
    "pool_dtype",
    "rehash",
    "run",
    "run_for",
    "start",
    "start_for",
]

_JIT = {"cache": CACHE, "nogil": True}

# run's return codes (BROKEN: an add effect outside the reachable atoms, a bug of the analysis)
SOLVED, EXHAUSTED, EVALUATION_LIMIT, PAUSED, GROW, BROKEN = range(6)
# Work.info fields
(
    N_STATES, POOL_USED, HEAP_SIZE, SEQ, EVALUATIONS, EXPANSIONS, GENERATED, GOAL_STATE, PENDING,
    NEED_ACTS, NEED_POOL, NEED_STATES, INFO_SIZE,
) = range(13)  # fmt: skip
_FNV = np.uint64(1099511628211)
_FNV_BASIS = np.uint64(14695981039346656037)


class EngineTask(NamedTuple):
    """The task as the loop reads it: the join plan, the effects, the fact codes, the goal, the
    symmetry arguments (`symmetry.SymmetryArgs`), the widest effect list (``max_adds``) and each
    fact's random hash key (``zobrist``, uint64)."""

    plan: Any
    effects: np.ndarray
    effect_ptr: np.ndarray
    fact_code: np.ndarray
    goal: np.ndarray
    goal_neg: np.ndarray
    sym: SymmetryArgs
    max_adds: int
    zobrist: np.ndarray


class Store(NamedTuple):
    """The states (module docstring) and the open list. ``action`` int32 (cap, 1 + max params):
    the ground action row that generated each state (schema, objects)."""

    pool: np.ndarray
    start: np.ndarray
    length: np.ndarray
    parent: np.ndarray
    action: np.ndarray
    hashes: np.ndarray
    table: np.ndarray
    heap_key: np.ndarray
    heap_seq: np.ndarray
    heap_id: np.ndarray


class Work(NamedTuple):
    """Counters (``info``, the ``N_STATES``.. fields) and the scratch arrays of one expansion."""

    info: np.ndarray
    codes: np.ndarray
    view_codes: np.ndarray
    view_ptr: np.ndarray
    binding: np.ndarray
    pos: np.ndarray
    end: np.ndarray
    acts: np.ndarray
    adds: np.ndarray
    dels: np.ndarray
    cls: np.ndarray
    rank: np.ndarray
    value: np.ndarray
    """float64 (1,): lazy: the value of the state being expanded (its successors' key)."""


def pool_dtype(n_facts: int) -> np.dtype:
    """The narrowest unsigned type of a fact id: uint16 up to 65,536 facts (transport's, rovers' and
    childsnack's hard tasks: a stored state then takes half the memory), else uint32."""
    return np.dtype(np.uint16 if n_facts <= 1 << 16 else np.uint32)


def new_store(states: int, pool: int, width: int, dtype: type = np.uint32) -> Store:
    """Empty arrays for `states` states holding `pool` fact ids (of `dtype`) in all (the table: twice
    as many slots as states, a power of two)."""
    slots = 1 << max(4, int(2 * states - 1).bit_length())
    return Store(
        pool=np.zeros(pool, dtype=dtype),
        start=np.zeros(states, dtype=np.int64),
        length=np.zeros(states, dtype=np.int32),
        parent=np.zeros(states, dtype=np.int32),
        action=np.zeros((states, width), dtype=np.int32),
        hashes=np.zeros(states, dtype=np.uint64),
        table=np.full(slots, -1, dtype=np.int64),
        heap_key=np.zeros(states, dtype=np.float64),
        heap_seq=np.zeros(states, dtype=np.int64),
        heap_id=np.zeros(states, dtype=np.int32),
    )


def new_work(
    n_facts: int, n_objects: int, width: int, view_capacity: int, n_views: int, n_steps: int, max_effects: int
) -> Work:
    info = np.zeros(INFO_SIZE, dtype=np.int64)
    info[GOAL_STATE] = info[PENDING] = -1
    return Work(
        info=info,
        codes=np.zeros(max(n_facts, 1), dtype=np.int64),
        view_codes=np.zeros(max(view_capacity, 1), dtype=np.int64),
        view_ptr=np.zeros(n_views + 1, dtype=np.int64),
        binding=np.zeros(max(width, 1), dtype=np.int64),
        pos=np.zeros(max(n_steps, 1), dtype=np.int64),
        end=np.zeros(max(n_steps, 1), dtype=np.int64),
        acts=np.zeros((1024, width), dtype=np.int64),
        adds=np.zeros(max(max_effects, 1), dtype=np.int64),
        dels=np.zeros(max(max_effects, 1), dtype=np.int64),
        cls=np.full(max(n_objects, 1), -1, dtype=np.int64),
        rank=np.zeros(max(n_objects, 1), dtype=np.int64),
        value=np.zeros(1, dtype=np.float64),
    )


@njit(**_JIT)
def state_hash(zobrist, pool, lo, n):
    """The state's hash: the sum of its facts' random 64-bit keys (Zobrist), so that a successor's
    hash follows from its parent's and the action's changes, before the successor is written."""
    h = np.uint64(0)
    for i in range(lo, lo + n):
        h += zobrist[pool[i]]
    return h


@njit(inline="always", **_JIT)
def _changed_hash(zobrist, h, adds, na, dels, nd):
    """The hash of a successor from its parent's (`h`) and the action's changes (Zobrist)."""
    for i in range(na):
        h += zobrist[adds[i]]
    for i in range(nd):
        h -= zobrist[dels[i]]
    return h


@njit(**_JIT)
def _slot(st, h):
    """The first slot of hash h in the table (the high bits: the low ones of a sum are weaker)."""
    return np.int64((h ^ (h >> np.uint64(32))) & np.uint64(st.table.shape[0] - 1))


@njit(**_JIT)
def _find(st, lo, n, h):
    """The index of the stored state equal to ``pool[lo:lo + n]`` with hash h, or -(slot + 1) of
    the free slot where it goes."""
    mask = st.table.shape[0] - 1
    slot = _slot(st, h)
    while True:
        s = st.table[slot]
        if s < 0:
            return -(slot + 1)
        if st.hashes[s] == h and st.length[s] == n:
            a = st.start[s]
            same = True
            for i in range(n):
                if st.pool[a + i] != st.pool[lo + i]:
                    same = False
                    break
            if same:
                return s
        slot = (slot + 1) & mask


@njit(**_JIT)
def _find_changed(st, lo, n, adds, na, dels, nd, h):
    """`_find` for the successor of the state ``pool[lo:lo + n]`` by the changes of
    `join.effect_changes`, compared without writing it."""
    mask = st.table.shape[0] - 1
    slot = _slot(st, h)
    m = n + na - nd
    while True:
        s = st.table[slot]
        if s < 0:
            return -(slot + 1)
        if (
            st.hashes[s] == h
            and st.length[s] == m
            and equals_changed(st.pool[lo : lo + n], n, adds, na, dels, nd, st.pool, st.start[s])
        ):
            return s
        slot = (slot + 1) & mask


@njit(**_JIT)
def rehash(st, n_states):
    """Re-insert the first `n_states` states into ``st.table`` (fresh, all -1)."""
    mask = st.table.shape[0] - 1
    for s in range(n_states):
        if st.length[s] < 0:  # a lazy node not written as a state: not in the table
            continue
        slot = _slot(st, st.hashes[s])
        while st.table[slot] >= 0:
            slot = (slot + 1) & mask
        st.table[slot] = s


@njit(**_JIT)
def _push(st, info, key, s):
    i = info[HEAP_SIZE]
    seq = info[SEQ]
    info[SEQ] = seq + 1
    info[HEAP_SIZE] = i + 1
    while i > 0:
        p = (i - 1) >> 1
        if st.heap_key[p] < key or (st.heap_key[p] == key and st.heap_seq[p] < seq):
            break
        st.heap_key[i] = st.heap_key[p]
        st.heap_seq[i] = st.heap_seq[p]
        st.heap_id[i] = st.heap_id[p]
        i = p
    st.heap_key[i] = key
    st.heap_seq[i] = seq
    st.heap_id[i] = s


@njit(**_JIT)
def _pop(st, info):
    top = st.heap_id[0]
    n = info[HEAP_SIZE] - 1
    info[HEAP_SIZE] = n
    if n == 0:
        return top
    key, seq, s = st.heap_key[n], st.heap_seq[n], st.heap_id[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (
            st.heap_key[c + 1] < st.heap_key[c]
            or (st.heap_key[c + 1] == st.heap_key[c] and st.heap_seq[c + 1] < st.heap_seq[c])
        ):
            c += 1
        if key < st.heap_key[c] or (key == st.heap_key[c] and seq < st.heap_seq[c]):
            break
        st.heap_key[i] = st.heap_key[c]
        st.heap_seq[i] = st.heap_seq[c]
        st.heap_id[i] = st.heap_id[c]
        i = c
    st.heap_key[i] = key
    st.heap_seq[i] = seq
    st.heap_id[i] = s
    return top


@njit(**_JIT)
def start(t, st, w, hargs, init):
    """Store and evaluate the initial state; `EXHAUSTED` when it is a dead end, else `PAUSED`."""
    info = w.info
    n = init.shape[0]
    for i in range(n):
        st.pool[i] = init[i]
    h = state_hash(t.zobrist, st.pool, 0, n)
    slot = -_find(st, 0, n, h) - 1
    st.table[slot] = 0
    st.start[0] = 0
    st.length[0] = n
    st.parent[0] = -1
    st.hashes[0] = h
    info[N_STATES] = 1
    info[POOL_USED] = n
    info[EVALUATIONS] = 1
    v = lifted_value(hargs, st.pool[0:n], n)
    if v == np.inf:
        return EXHAUSTED
    _push(st, info, v, 0)
    return PAUSED


@njit(**_JIT)
def _materialize(t, st, w, s):
    """Lazy GBFS: write node `s` (so far its parent and action row only) as a state. Returns 1 when
    the state is new (stored, hashed, in the table), 0 when an equal state is stored already (the
    node is dropped), -1 when the pool lacks room (``info[NEED_POOL]`` set) or -2 (`BROKEN`)."""
    info = w.info
    p = st.parent[s]
    lo, n = st.start[p], st.length[p]
    parent = st.pool[lo : lo + n]
    na, nd = effect_changes(
        t.effects, t.effect_ptr, t.plan.pw, t.fact_code, st.action[s], parent, n, w.adds, w.dels
    )
    if na < 0:
        return -2
    h = _changed_hash(t.zobrist, st.hashes[p], w.adds, na, w.dels, nd)
    found = _find_changed(st, lo, n, w.adds, na, w.dels, nd, h)
    if found >= 0:
        return 0
    used = info[POOL_USED]
    if used + n + na > st.pool.shape[0]:
        info[NEED_POOL] = used + n + t.max_adds
        info[NEED_STATES] = info[N_STATES]
        return -1
    m = merge_changes(parent, n, w.adds, na, w.dels, nd, st.pool[used:])
    st.table[-found - 1] = s
    st.start[s] = used
    st.length[s] = m
    st.hashes[s] = h
    info[POOL_USED] = used + m
    return 1


@njit(**_JIT)
def run(t, st, w, hargs, use_sym, budget, max_expansions, lazy):
    """Advance the search (module docstring; `lazy`: lazy GBFS); returns one of the codes."""
    info = w.info
    plan = t.plan
    n_queries = plan.queries.shape[0]
    expanded = 0
    while True:
        s = info[PENDING]
        if s >= 0:  # its expansion (or, lazy, its writing) waited for the arrays to grow
            info[PENDING] = -1
            popped = st.length[s] < 0
        else:
            if info[HEAP_SIZE] == 0:
                return EXHAUSTED
            if expanded >= max_expansions:
                return PAUSED
            if lazy:  # the node's key: its parent's value, its successors' key unless it is the initial state
                w.value[0] = st.heap_key[0]
            s = _pop(st, info)
            popped = True
        expanded += 1  # towards the slice, duplicates and dead ends too, so that a run of them pauses
        if popped:
            if st.length[s] < 0:  # lazy: a node generated but not yet written as a state
                made = _materialize(t, st, w, s)
                if made == -2:
                    return BROKEN
                if made == -1:
                    info[PENDING] = s
                    return GROW
                if made == 0:
                    continue
            info[EXPANSIONS] += 1
            lo, n = st.start[s], st.length[s]
            if is_goal(st.pool[lo : lo + n], n, t.goal, t.goal_neg):
                info[GOAL_STATE] = s
                return SOLVED
            if lazy and s != 0:  # queued under its parent's value: evaluated now (the initial state was)
                if info[EVALUATIONS] >= budget:
                    return EVALUATION_LIMIT
                info[EVALUATIONS] += 1
                w.value[0] = lifted_value(hargs, st.pool[lo : lo + n], n)
                if w.value[0] == np.inf:
                    continue
        lo, n = st.start[s], st.length[s]
        for i in range(n):
            w.codes[i] = t.fact_code[st.pool[lo + i]]
        if use_sym:
            classes_of(t.sym, w.codes, n, w.cls, w.rank)
        build_views(plan, w.codes, n, w.view_codes, w.view_ptr)
        n_acts = enumerate_bindings(
            plan, 0, n_queries, w.codes, n, w.view_codes, w.view_ptr, w.binding, w.pos, w.end, w.cls, w.rank,
            use_sym, False, w.acts, 0,
        )  # fmt: skip
        if n_acts == OVERFLOW:
            info[PENDING] = s
            info[NEED_ACTS] = 2 * w.acts.shape[0]
            return GROW
        used, n_states = info[POOL_USED], info[N_STATES]
        need_pool = used if lazy else used + n_acts * (n + t.max_adds)
        need_states = n_states + n_acts
        if (
            need_pool > st.pool.shape[0]
            or need_states > st.start.shape[0]
            or info[HEAP_SIZE] + n_acts > st.heap_key.shape[0]
            or 2 * need_states > st.table.shape[0]
        ):
            info[PENDING] = s
            info[NEED_POOL] = need_pool
            info[NEED_STATES] = need_states
            return GROW
        if lazy:  # a node per successor, written as a state only when popped (`_materialize`)
            for k in range(n_acts):
                new = info[N_STATES]
                st.start[new] = 0
                st.length[new] = -1
                st.parent[new] = s
                for j in range(st.action.shape[1]):
                    st.action[new, j] = w.acts[k, j]
                st.hashes[new] = 0
                info[N_STATES] = new + 1
                info[GENERATED] += 1
                _push(st, info, w.value[0], new)
            continue
        parent = st.pool[lo : lo + n]
        h_parent = st.hashes[s]
        for k in range(n_acts):
            row = w.acts[k]
            na, nd = effect_changes(
                t.effects, t.effect_ptr, plan.pw, t.fact_code, row, parent, n, w.adds, w.dels
            )
            if na < 0:
                return BROKEN
            info[GENERATED] += 1
            h = _changed_hash(t.zobrist, h_parent, w.adds, na, w.dels, nd)
            found = _find_changed(st, lo, n, w.adds, na, w.dels, nd, h)
            if found >= 0:
                continue
            if info[EVALUATIONS] >= budget:
                return EVALUATION_LIMIT
            used = info[POOL_USED]
            m = merge_changes(parent, n, w.adds, na, w.dels, nd, st.pool[used:])
            new = info[N_STATES]
            st.table[-found - 1] = new
            st.start[new] = used
            st.length[new] = m
            st.parent[new] = s
            for j in range(st.action.shape[1]):
                st.action[new, j] = row[j]
            st.hashes[new] = h
            info[N_STATES] = new + 1
            info[POOL_USED] = used + m
            info[EVALUATIONS] += 1
            v = lifted_value(hargs, st.pool[used : used + m], m)
            if v != np.inf:
                _push(st, info, v, new)


@njit(**_JIT)
def plan_rows(st, goal):
    """The action rows from the initial state to state `goal`, in order."""
    k = 0
    s = goal
    while st.parent[s] >= 0:
        k += 1
        s = st.parent[s]
    out = np.zeros((k, st.action.shape[1]), dtype=np.int64)
    s = goal
    for i in range(k - 1, -1, -1):
        for j in range(st.action.shape[1]):
            out[i, j] = st.action[s, j]
        s = st.parent[s]
    return out


_COPIES: dict[tuple[str, type], Any] = {}


def _copy_for(function: Any, args_class: type) -> Any:
    """`function` (a kernel) compiled under a name of its own for the heuristic argument class."""
    key = (function.py_func.__name__, args_class)
    if key not in _COPIES:
        source = function.py_func
        name = f"{source.__name__}__{args_class.__module__}.{args_class.__qualname__}".replace(".", "_")
        copy = FunctionType(source.__code__, source.__globals__, name, source.__defaults__)
        copy.__qualname__, copy.__module__, copy.__doc__ = name, source.__module__, source.__doc__
        _COPIES[key] = njit(**_JIT)(copy)
    return _COPIES[key]


def run_for(args_class: type) -> Any:
    """`run` compiled for the heuristic argument class `args_class` (the module docstring)."""
    return _copy_for(run, args_class)


def start_for(args_class: type) -> Any:
    """`start` compiled for the heuristic argument class `args_class`."""
    return _copy_for(start, args_class)
