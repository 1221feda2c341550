"""The compiled best-first search engine behind `gbfs` and `astar`: Fast Downward's eager search.

What it reproduces, so that evaluation and expansion counts can be compared with Fast Downward
node for node (``eager_greedy([h])`` for GBFS, ``astar(h)`` for A*; ``search/search_algorithms/
eager_search.cc``):

- successors are generated in the order of Fast Downward's successor generator
  (`FDRLayout.succ_order`) and each new one is evaluated when generated (eager search);
- the goal test happens when a state is expanded;
- the open list is keyed by h (GBFS) or by (g + h, h) (A*), first in first out among equal
  keys; a state is closed when expanded and skipped when popped again;
- a state whose value is infinite is a dead end and never evaluated again (a heuristic may also
  give a provisional value, a lower bound of its value, and the value only when the state is
  about to be expanded, `pddlgym_sl.heuristics.compiled.value_on_expansion`: a dead end is then
  closed unexpanded, and a larger value files the state again under it);
- a cheaper path to a known state updates its g and parent; an open state is inserted again
  with its new key; a closed one is reopened (A*) or only re-parented (GBFS);
- the initial state counts as one evaluation.

The search can also stop when the next evaluation would exceed ``max_evaluations`` (it then
evaluates the successors that still fit, as the paper's protocol counts), which Fast Downward
does not offer.

**Memory.** Long searches keep millions of states, so a node costs what Fast Downward's costs:
its state packed at Fast Downward's density (`packing`: ceil(log2 |domain|) bits per variable),
a parent (int32), g (int32), a status byte and its value (int32 for the built-in heuristics,
whose values are integers; float64 otherwise); the operator that created a node is not stored
but found again from its parent when the plan is extracted (`creating_operator`). The hash
table of seen states holds int32 node ids (linear probing; the state is compared in place), and
a search with integer values keeps its open list in buckets of 4-byte entries (`open_lists`).
The node arrays are allocated once for as many nodes as the memory limit allows; the operating
system gives their pages only when they are first written, so an unused reservation costs
nothing, and no array is copied while the search grows.

**Heuristics.** Two ways to evaluate states share one loop: a heuristic with compiled arguments
(`pddlgym_sl.heuristics.compiled.state_values`) runs inside the loop, the new states of an
expansion in generation order (its state, e.g. an adaptive queue, then evolves as in
Fast Downward); any
other heuristic (a learned one) is called from Python once per expansion with all the new
successors as one batch: the engine returns, the caller evaluates, and the engine inserts the
values in generation order and goes on. Both give the same search, because nothing in an
expansion depends on the values of its earlier successors. numba compiles `run` once per
heuristic type and open-list type (and caches each), so a search compiles only its own kernels.

The loop is one long function on purpose: numba passes every array to a function as seven
scalars, so a helper called per successor (applicability, application, hashing) cost up to ten
times its body; such helpers are inlined.
"""

from __future__ import annotations

from types import FunctionType
from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from pddlgym_sl.heuristics.compiled import lazy_values, state_values, value_on_expansion
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.search.open_lists import (
    Buckets,
    Heap,
    buckets_free_chunks,
    buckets_key,
    buckets_pop,
    buckets_push,
    heap_pop,
    heap_push,
)
from pddlgym_sl.search.packing import apply_packed, hash_words, unpack

# node status (PROVISIONAL: open, filed under a provisional value, `value_on_expansion`)
NEW, PENDING, OPEN, CLOSED, DEAD, PROVISIONAL = 0, 1, 2, 3, 4, 5
# engine status returned by `run`
SOLVED, EXHAUSTED, EVALUATION_LIMIT, PAUSED, NEED_VALUES, GROW_NODES, GROW_TABLE, GROW_OPEN = range(8)
# fields of Work.info
(
    N_NODES,
    _STARTED,
    EVALUATIONS,
    EXPANSIONS,
    GENERATED,
    _AWAITING,
    _N_PENDING,
    N_NEW,
    GOAL_NODE,
    DEAD_ENDS,
    _STOP_AFTER_PENDING,
    NEED_KEYS,
    VALUED,
    REVALUED,
) = range(14)
_INFO_SIZE = 14

MAX_LOAD = 0.6
"""The hash table grows before more than this fraction of its slots would be used."""


class Nodes(NamedTuple):
    """Per-node arrays (capacity rows; the first ``info[N_NODES]`` are in use)."""

    packed: np.ndarray  # uint32 (capacity, n_packed): the state, packed
    parent: np.ndarray  # int32 (capacity): parent node, -1 for the root
    g: np.ndarray  # int32 (capacity)
    status: np.ndarray  # int8 (capacity): NEW, PENDING, OPEN, PROVISIONAL, CLOSED or DEAD
    h: np.ndarray  # int32 or float64 (capacity): the heuristic value


class Work(NamedTuple):
    """Counters and per-expansion buffers (sized by the task, not the search)."""

    info: np.ndarray  # int64 (_INFO_SIZE): counters and the phase of the loop
    pending: np.ndarray  # int64 (n_actions + 1, 2): successors of the expansion in progress, and
    #                      1 for one to be evaluated, 0 for one to insert again
    batch: np.ndarray  # uint64 (n_actions + 1, n_words): the fact bit sets of the states to evaluate
    values: np.ndarray  # float64 (n_actions + 1): their values
    words: np.ndarray  # uint64 (n_words): the fact bit set of the state being expanded
    child: np.ndarray  # uint32 (n_packed): the packed successor being generated


class SearchTask(NamedTuple):
    """What the loop reads of the task: the successor generator (`successor_generator`), the
    effects as uint32 CSR fact lists, the goal, operator costs and the packing."""

    gen: tuple
    add_ptr: np.ndarray
    add_idx: np.ndarray
    del_ptr: np.ndarray
    del_idx: np.ndarray
    goal: np.ndarray
    goal_neg: np.ndarray
    cost: np.ndarray
    packing: tuple


class NoHeuristic(NamedTuple):
    """The heuristic arguments of a search whose values come from Python (never evaluated)."""

    unused: np.ndarray


@overload(state_values)
def _no_heuristic_values(args, states, n, out):
    if isinstance(args, types.BaseNamedTuple) and args.instance_class is NoHeuristic:
        return lambda args, states, n, out: None
    return None


def node_bytes(n_packed: int, h_dtype: np.dtype) -> int:
    """Bytes per node in the node arrays."""
    return 4 * n_packed + 4 + 4 + 1 + np.dtype(h_dtype).itemsize


def new_nodes(capacity: int, n_packed: int, h_dtype: np.dtype) -> Nodes:
    """Node arrays for `capacity` nodes (uninitialised: pages are committed when first written)."""
    return Nodes(
        packed=np.empty((capacity, n_packed), dtype=np.uint32),
        parent=np.empty(capacity, dtype=np.int32),
        g=np.empty(capacity, dtype=np.int32),
        status=np.empty(capacity, dtype=np.int8),
        h=np.empty(capacity, dtype=h_dtype),
    )


def grow_nodes(nodes: Nodes, n: int, capacity: int) -> Nodes:
    """Node arrays of `capacity` rows holding the first `n` rows of `nodes`."""
    bigger = new_nodes(capacity, nodes.packed.shape[1], nodes.h.dtype)
    for old, new in zip(nodes, bigger, strict=True):
        new[:n] = old[:n]
    return bigger


def new_work(n_words: int, n_packed: int, n_actions: int) -> Work:
    width = n_actions + 1
    info = np.zeros(_INFO_SIZE, dtype=np.int64)
    info[GOAL_NODE] = -1
    return Work(
        info=info,
        pending=np.empty((width, 2), dtype=np.int64),
        batch=np.empty((width, n_words), dtype=np.uint64),
        values=np.empty(width, dtype=np.float64),
        words=np.empty(n_words, dtype=np.uint64),
        child=np.empty(n_packed, dtype=np.uint32),
    )


def new_table(min_nodes: int) -> np.ndarray:
    """A hash table with room for `min_nodes` nodes under `MAX_LOAD`."""
    size = 1024
    while size * MAX_LOAD < min_nodes:
        size *= 2
    return np.full(size, -1, dtype=np.int32)


@njit(cache=CACHE)
def rehash(table, packed, n):
    """Insert nodes 0..n-1 into the empty `table`."""
    mask = np.uint64(table.shape[0] - 1)
    for node in range(n):
        slot = hash_words(packed[node]) & mask
        while table[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = node


# ----------------------------------------------------------------- the open list, by type
def open_push(openl, k0, k1, node):
    raise TypeError("compiled code only")


def open_pop(openl):
    raise TypeError("compiled code only")


def open_room(openl, n):
    raise TypeError("compiled code only")


_ANY_KEY = 1 << 62
"""What `open_keys` says of a heap."""


def _is(ty, cls) -> bool:
    return isinstance(ty, types.BaseNamedTuple) and ty.instance_class is cls


@overload(open_push)
def _open_push(openl, k0, k1, node):
    if _is(openl, Buckets):
        return lambda openl, k0, k1, node: buckets_push(openl, buckets_key(openl, k0, k1), node)
    if _is(openl, Heap):
        return lambda openl, k0, k1, node: heap_push(openl, k0, k1, node)
    return None


@overload(open_pop)
def _open_pop(openl):
    if _is(openl, Buckets):
        return lambda openl: buckets_pop(openl)
    if _is(openl, Heap):
        return lambda openl: heap_pop(openl)
    return None


@overload(open_room)
def _open_room(openl, n):
    """Whether `n` more pushes fit (buckets: chunks; their keys are checked when pushed)."""
    if _is(openl, Buckets):
        return lambda openl, n: buckets_free_chunks(openl) > n
    if _is(openl, Heap):
        return lambda openl, n: openl.ids.shape[0] - openl.meta[0] > n
    return None


def open_keys(openl):
    raise TypeError("compiled code only")


def open_key(openl, k0, k1):
    raise TypeError("compiled code only")


@overload(open_key)
def _open_key(openl, k0, k1):
    """The integer key under which `open_push` files keys (k0, k1) (a heap: 0, it has no limit)."""
    if _is(openl, Buckets):
        return lambda openl, k0, k1: buckets_key(openl, k0, k1)
    if _is(openl, Heap):
        return lambda openl, k0, k1: np.int64(0)
    return None


@overload(open_keys)
def _open_keys(openl):
    """Keys the open list can take (buckets: its key count; a heap: any)."""
    if _is(openl, Buckets):
        return lambda openl: openl.head.shape[0]
    if _is(openl, Heap):
        return lambda openl: _ANY_KEY
    return None


# ----------------------------------------------------------------- the loop
@njit(cache=CACHE, inline="always")
def _apply_pending(nodes, openl, work, n_values, astar, lazy):
    """Insert the successors of the expansion in progress in generation order: evaluated ones with
    their value (dead ends marked; provisional with a `lazy` heuristic), re-inserted ones with
    their new key. Only the first `n_values` evaluations happened (the rest exceeded the budget).
    Returns False, inserting nothing, when a bucket queue needs more keys (``info[NEED_KEYS]``)."""
    info, pending = work.info, work.pending
    limit = open_keys(openl)
    if limit < _ANY_KEY:  # a bucket queue: it must have the keys before anything is inserted
        top = np.int64(-1)
        k = 0
        for i in range(info[_N_PENDING]):
            child = pending[i, 0]
            if pending[i, 1]:
                if k >= n_values:
                    break
                h = work.values[k]
                k += 1
                if h == np.inf:
                    continue
            elif nodes.status[child] == OPEN or nodes.status[child] == PROVISIONAL:
                h = np.float64(nodes.h[child])
            else:
                continue
            key = open_key(openl, np.float64(nodes.g[child]) + h if astar else h, h)
            if key > top:
                top = key
        if top >= limit:
            info[NEED_KEYS] = top + 1
            return False
    k = 0
    for i in range(info[_N_PENDING]):
        child = pending[i, 0]
        if pending[i, 1]:
            if k >= n_values:
                break
            h = work.values[k]
            k += 1
            if h == np.inf:
                nodes.status[child] = DEAD
                info[DEAD_ENDS] += 1
                continue
            nodes.h[child] = h
            nodes.status[child] = PROVISIONAL if lazy else OPEN
        elif nodes.status[child] != OPEN and nodes.status[child] != PROVISIONAL:
            continue
        hv = nodes.h[child]
        if astar:
            open_push(openl, np.float64(nodes.g[child]) + hv, np.float64(hv), child)
        else:
            open_push(openl, hv, 0.0, child)
    info[EVALUATIONS] += k
    info[_N_PENDING] = 0
    info[_AWAITING] = 0
    return True


@njit(cache=CACHE, inline="always")
def _fact_successor(words, a, st, out):
    """The fact bit set of `words` after operator `a`, into `out`."""
    one = np.uint64(1)
    for w in range(words.shape[0]):
        out[w] = words[w]
    for k in range(st.del_ptr[a], st.del_ptr[a + 1]):
        f = st.del_idx[k]
        out[f >> 6] &= ~(one << np.uint64(f & 63))
    for k in range(st.add_ptr[a], st.add_ptr[a + 1]):
        f = st.add_idx[k]
        out[f >> 6] |= one << np.uint64(f & 63)


@njit(cache=CACHE, inline="always")
def _holds_goal(words, st):
    one = np.uint64(1)
    for k in range(st.goal.shape[0]):
        f = st.goal[k]
        if (words[f >> 6] >> np.uint64(f & 63)) & one == 0:
            return False
    for k in range(st.goal_neg.shape[0]):
        f = st.goal_neg[k]
        if (words[f >> 6] >> np.uint64(f & 63)) & one != 0:
            return False
    return True


def evaluations_done(info: np.ndarray) -> int:
    """Evaluations so far, counting those of an expansion whose valuation a pause interrupted."""
    return int(info[EVALUATIONS]) + (int(info[VALUED]) if info[_AWAITING] else 0)


def values_missing(info: np.ndarray) -> int:
    """How many of the expansion's new states (``work.batch[info[VALUED]:info[N_NEW]]``) still
    need a value before the search can go on; 0 when none are awaited."""
    return int(info[N_NEW] - info[VALUED]) if info[_AWAITING] else 0


@njit  # not cached on its own: its cache index would hold every heuristic class (`run_for`)
def _value_batch(hargs, work, expanded, max_expansions):
    """Evaluate the new states ``work.batch[info[VALUED]:info[N_NEW]]`` (the initial state, or an
    expansion's successors) in order, each counting one unit of work, until they are all valued or
    `max_expansions` units are done; returns the units done. A pause may so fall inside one
    expansion: on childsnack's hard tasks a state has over 100,000 successors, each costing hFF
    milliseconds, and a time limit checked only between expansions was overrun by hours. Slices
    give the same values as one batch (the kernels evaluate states one by one, in row order)."""
    info = work.info
    n_new = info[N_NEW]
    while info[VALUED] < n_new and expanded < max_expansions:
        v = info[VALUED]
        m = min(n_new - v, max_expansions - expanded)
        state_values(hargs, work.batch[v:], m, work.values[v:])
        info[VALUED] = v + m
        expanded += m
    return expanded


@njit(cache=CACHE)
def run(
    nodes,
    table,
    openl,
    work,
    st,
    init_words,
    init_packed,
    hargs,
    external,
    astar,
    reopen,
    max_evaluations,
    max_expansions,
    max_nodes,
):
    """Advance the search until it ends or pauses; returns SOLVED, EXHAUSTED, EVALUATION_LIMIT,
    PAUSED (after `max_expansions` units of work: an expansion and each state it evaluates count
    one, so that a pause comes after about the same time whether the expansions meet new states or
    only duplicates; it may come between two evaluations of one expansion), NEED_VALUES (fill
    ``work.values[:info[N_NEW]]`` with the values of ``work.batch[:info[N_NEW]]`` and call
    again), or GROW_NODES (the next expansion could exceed `max_nodes` or the node arrays),
    GROW_TABLE or GROW_OPEN (call again with a bigger one: `grow_nodes`, `new_table` + `rehash`,
    `open_lists.grow_*`)."""
    info, pending = work.info, work.pending
    status, packed = nodes.status, nodes.packed
    n_packed = packed.shape[1]
    child_packed = work.child
    one = np.uint64(1)
    expanded = 0
    lazy = lazy_values(hargs)
    if info[_AWAITING]:
        if not external:  # an expansion's successors whose valuation a pause interrupted
            expanded = _value_batch(hargs, work, expanded, max_expansions)
            if info[VALUED] < info[N_NEW]:
                return PAUSED
        if not _apply_pending(nodes, openl, work, info[N_NEW], astar, lazy):
            return GROW_OPEN
        if info[_STOP_AFTER_PENDING]:
            return EVALUATION_LIMIT
    if not info[_STARTED]:
        info[_STARTED] = 1
        mask = np.uint64(table.shape[0] - 1)
        table[hash_words(init_packed) & mask] = 0
        info[N_NODES] = 1
        for w in range(init_packed.shape[0]):
            packed[0, w] = init_packed[w]
        nodes.parent[0] = -1
        nodes.g[0] = 0
        status[0] = PENDING
        pending[0, 0] = 0
        pending[0, 1] = 1
        info[_N_PENDING] = 1
        if max_evaluations < 1:
            return EVALUATION_LIMIT
        info[N_NEW] = 1
        info[VALUED] = 0
        info[_AWAITING] = 1
        for w in range(init_words.shape[0]):
            work.batch[0, w] = init_words[w]
        if external:
            return NEED_VALUES
        expanded = _value_batch(hargs, work, expanded, max_expansions)
        if info[VALUED] < info[N_NEW]:
            return PAUSED
        if not _apply_pending(nodes, openl, work, 1, astar, lazy):
            return GROW_OPEN
    n_actions = pending.shape[0] - 1
    g_fact, g_none_ptr, g_none_idx, g_skip, g_ops_ptr, g_ops_idx = st.gen
    pk = st.packing
    n_gen = g_skip.shape[0]
    capacity = min(status.shape[0], max_nodes)
    mask = np.uint64(table.shape[0] - 1)
    words = work.words
    while True:
        if expanded >= max_expansions:
            return PAUSED
        if info[N_NODES] + n_actions > capacity:
            return GROW_NODES
        if (info[N_NODES] + n_actions) > MAX_LOAD * table.shape[0]:
            return GROW_TABLE
        if not open_room(openl, n_actions + 1):
            return GROW_OPEN
        # ---- next node to expand
        current = -1
        while True:
            candidate = open_pop(openl)
            if candidate < 0:
                break
            if status[candidate] == OPEN or status[candidate] == PROVISIONAL:
                current = candidate
                break
        if current < 0:
            return EXHAUSTED
        unpack(packed[current], pk, words)
        if lazy and status[current] == PROVISIONAL:  # its value, now (`value_on_expansion`)
            h_now = np.float64(nodes.h[current])
            value = value_on_expansion(hargs, words, h_now)
            expanded += 1
            if value == np.inf:  # a dead end its evaluation left open
                status[current] = DEAD
                info[DEAD_ENDS] += 1
                continue
            status[current] = OPEN
            if value > h_now:  # filed again under its value (room: checked above)
                info[REVALUED] += 1
                nodes.h[current] = value
                hv = nodes.h[current]
                if astar:
                    open_push(openl, np.float64(nodes.g[current]) + hv, np.float64(hv), current)
                else:
                    open_push(openl, hv, 0.0, current)
                continue
        status[current] = CLOSED
        info[EXPANSIONS] += 1
        expanded += 1
        if _holds_goal(words, st):
            info[GOAL_NODE] = current
            return SOLVED
        # ---- its successors, in the successor generator's order
        g_node = nodes.g[current]
        n_pending = 0
        n_new = 0
        i = 0
        while i < n_gen:
            f = g_fact[i]
            if f >= 0:
                holds = (words[f >> 6] >> np.uint64(f & 63)) & one != 0
            else:
                holds = True
                for j in range(g_none_ptr[i], g_none_ptr[i + 1]):
                    nf = g_none_idx[j]
                    if (words[nf >> 6] >> np.uint64(nf & 63)) & one != 0:
                        holds = False
                        break
            if not holds:
                i = g_skip[i]
                continue
            for j in range(g_ops_ptr[i], g_ops_ptr[i + 1]):
                a = g_ops_idx[j]
                info[GENERATED] += 1
                apply_packed(packed[current], a, pk, child_packed)
                # look the successor up in the hash table, registering it when new
                slot = hash_words(child_packed) & mask
                child = -1
                while True:
                    c = table[slot]
                    if c < 0:
                        break
                    same = True
                    for w in range(n_packed):
                        if packed[c, w] != child_packed[w]:
                            same = False
                            break
                    if same:
                        child = c
                        break
                    slot = (slot + one) & mask
                if child < 0:
                    child = info[N_NODES]
                    info[N_NODES] = child + 1
                    table[slot] = child
                    for w in range(n_packed):
                        packed[child, w] = child_packed[w]
                    status[child] = NEW
                s = status[child]
                if s == DEAD:
                    continue
                g_child = g_node + st.cost[a]
                if s == NEW:
                    status[child] = PENDING
                    nodes.g[child] = g_child
                    nodes.parent[child] = current
                    pending[n_pending, 0] = child
                    pending[n_pending, 1] = 1
                    n_pending += 1
                    _fact_successor(words, a, st, work.batch[n_new])
                    n_new += 1
                elif nodes.g[child] > g_child:
                    nodes.g[child] = g_child
                    nodes.parent[child] = current
                    if s == OPEN or s == PROVISIONAL or (s == CLOSED and reopen):  # noqa: SIM109 (numba)
                        if s == CLOSED:
                            status[child] = OPEN
                        pending[n_pending, 0] = child
                        pending[n_pending, 1] = 0
                        n_pending += 1
            i += 1
        info[_N_PENDING] = n_pending
        budget = max_evaluations - info[EVALUATIONS]
        if n_new > budget:
            n_new = budget
            info[_STOP_AFTER_PENDING] = 1
        info[N_NEW] = n_new
        info[_AWAITING] = 1
        info[VALUED] = 0
        if external:
            expanded += n_new
            if n_new > 0:
                return NEED_VALUES
        else:
            expanded = _value_batch(hargs, work, expanded, max_expansions)
            if info[VALUED] < n_new:
                return PAUSED
        if not _apply_pending(nodes, openl, work, n_new, astar, lazy):
            return GROW_OPEN
        if info[_STOP_AFTER_PENDING]:
            return EVALUATION_LIMIT


_ENGINES: dict[type, Any] = {}


def run_for(args_class: type) -> Any:
    """`run` compiled for the heuristic argument class `args_class`, cached on disk under a name
    of its own. numba keeps one cache index per function, holding every signature compiled in
    that cache directory, and loading the index unpickles the classes of all of them: with one
    shared `run`, a core-only search would import the learning code (the classes of the compiled
    WL heuristic, compiled in the same cache), which a core install does not have. A copy of
    `run` per class keeps each index to its own class."""
    engine = _ENGINES.get(args_class)
    if engine is None:
        source = run.py_func
        name = f"run__{args_class.__module__}.{args_class.__qualname__}".replace(".", "_")
        copy = FunctionType(source.__code__, source.__globals__, name, source.__defaults__)
        copy.__qualname__, copy.__module__, copy.__doc__ = name, source.__module__, source.__doc__
        engine = _ENGINES[args_class] = njit(cache=CACHE)(copy)
    return engine


@njit(cache=CACHE)
def plan_to(goal_node, packed, parent, st, words):
    """The operators from the initial state (node 0) to `goal_node`, following the parent
    pointers and finding each step's operator again (`creating_operator`); `words` is scratch
    for a fact bit set. One compiled call: from Python, a call per step cost more than a short
    search itself."""
    n = 0
    node = goal_node
    while node > 0:
        n += 1
        node = parent[node]
    plan = np.empty(n, dtype=np.int64)
    scratch = np.empty(packed.shape[1], dtype=np.uint32)
    node = goal_node
    for k in range(n - 1, -1, -1):
        up = parent[node]
        unpack(packed[up], st.packing, words)
        plan[k] = creating_operator(packed[up], packed[node], words, st, scratch)
        node = up
    return plan


@njit(cache=CACHE)
def creating_operator(parent_packed, child_packed, words, st, scratch):
    """The operator the engine recorded for reaching `child_packed` from `parent_packed` (whose
    fact bit set is `words`): the cheapest that leads there, the first in the successor
    generator's order among equally cheap ones (what an expansion keeps, as it updates a node only
    on a strictly cheaper path); -1 if none does."""
    g_fact, g_none_ptr, g_none_idx, g_skip, g_ops_ptr, g_ops_idx = st.gen
    one = np.uint64(1)
    best, best_cost = -1, np.int64(0)
    i = 0
    while i < g_skip.shape[0]:
        # the node test of `run`'s loop, written out there too: as a shared helper (even with
        # inline="always") it cost blind GBFS a third of its rate (1.9M -> 1.2M evals per CPU s)
        f = g_fact[i]
        if f >= 0:
            holds = (words[f >> 6] >> np.uint64(f & 63)) & one != 0
        else:
            holds = True
            for j in range(g_none_ptr[i], g_none_ptr[i + 1]):
                nf = g_none_idx[j]
                if (words[nf >> 6] >> np.uint64(nf & 63)) & one != 0:
                    holds = False
                    break
        if not holds:
            i = g_skip[i]
            continue
        for j in range(g_ops_ptr[i], g_ops_ptr[i + 1]):
            a = g_ops_idx[j]
            apply_packed(parent_packed, a, st.packing, scratch)
            same = True
            for w in range(scratch.shape[0]):
                if scratch[w] != child_packed[w]:
                    same = False
                    break
            if same and (best < 0 or st.cost[a] < best_cost):
                best, best_cost = a, st.cost[a]
        i += 1
    return best
