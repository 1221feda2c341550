"""The compiled best-first search engine behind `gbfs` and `astar`: Fast Downward's eager search.

What it reproduces, so that evaluation and expansion counts can be compared with Fast Downward
node for node (``eager_greedy([h])`` for GBFS, ``astar(h)`` for A*; ``search/search_algorithms/
eager_search.cc``):

- successors are generated in the order of Fast Downward's successor generator
  (`FDRLayout.succ_order`) and each new one is evaluated when generated (eager search);
- the goal test happens when a state is expanded;
- the open list is keyed by h (GBFS) or by (g + h, h) (A*), first in first out among equal
  keys; a state is closed when expanded and skipped when popped again;
- a state whose value is infinite is a dead end and never evaluated again;
- a cheaper path to a known state updates its g and parent; an open state is inserted again
  with its new key; a closed one is reopened (A*) or only re-parented (GBFS);
- the initial state counts as one evaluation.

The search can also stop when the next evaluation would exceed ``max_evaluations`` (it then
evaluates the successors that still fit, as the paper's protocol counts), which Fast Downward
does not offer.

Two ways to evaluate states share one loop: a built-in heuristic runs inside the compiled loop,
one state at a time in generation order (its adaptive queue then evolves as in Fast Downward);
any other heuristic (a learned one) is called from Python once per expansion with all the new
successors as one batch: the engine returns, the caller evaluates, and the engine inserts the
values in generation order and goes on. Both give the same search, because nothing in an
expansion depends on the values of its earlier successors.

The engine's state lives in numpy arrays (`Engine`), so the loop can pause (to check a time
limit, grow its arrays, or ask for values) and resume exactly where it stopped.

The loop is one long function on purpose: numba passes every array to a function as seven
scalars, so a helper called per successor (applicability, application, hashing) cost up to ten
times its body. The per-expansion and per-evaluation helpers stay functions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from pddlgym_sl.heuristics.lmcut import lmcut_value
from pddlgym_sl.heuristics.relaxation import explore, ff_value
from pddlgym_sl.heuristics.simple import goal_count_one
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.successors import satisfies

# heuristic kinds
EXTERNAL, BLIND, GOAL_COUNT, HMAX, HADD, HFF, LMCUT = range(7)
# node status
_NEW, _PENDING, _OPEN, _CLOSED, _DEAD = 0, 1, 2, 3, 4
# engine status returned by `run`
SOLVED, EXHAUSTED, EVALUATION_LIMIT, PAUSED, GROW, NEED_VALUES = range(6)
# fields of Engine.info
(
    _N_NODES,
    _HEAP_SIZE,
    _SEQ,
    EVALUATIONS,
    EXPANSIONS,
    GENERATED,
    _AWAITING,
    _N_PENDING,
    N_NEW,
    GOAL_NODE,
    DEAD_ENDS,
    _STARTED,
    _STOP_AFTER_PENDING,
) = range(13)
_INFO_SIZE = 13


class Engine(NamedTuple):
    """The search state (see the module docstring); grown by `grow` when full."""

    info: np.ndarray  # int64 (_INFO_SIZE): counters and the phase of the loop
    states: np.ndarray  # uint64 (capacity, n_words): the packed state of every node
    hashes: np.ndarray  # uint64 (capacity)
    node: np.ndarray  # int64 (capacity, 4): parent (-1 for the root), action from it, g, status
    h: np.ndarray  # float64 (capacity)
    table: np.ndarray  # int64 (power of two >= 2 capacity): hash table of node ids, -1 empty
    heap: np.ndarray  # float64 (capacity, 4): the open list: first key (h, or g + h), second key
    #                   (0, or h), insertion number (first in, first out among equal keys), node
    pending: np.ndarray  # int64 (n_actions + 1, 2): successors of the expansion in progress, and
    #                      1 for one to be evaluated, 0 for one to insert again
    batch: np.ndarray  # uint64 (n_actions + 1, n_words): the states to evaluate (external heuristic)
    values: np.ndarray  # float64 (n_actions + 1): their values
    scratch: np.ndarray  # uint64 (n_words)


_PARENT, _ACTION, _G, _STATUS = range(4)


def new_engine(n_words: int, n_actions: int, capacity: int = 1024) -> Engine:
    table_size = 1
    while table_size < 2 * capacity:
        table_size *= 2
    width = n_actions + 1
    info = np.zeros(_INFO_SIZE, dtype=np.int64)
    info[GOAL_NODE] = -1
    return Engine(
        info=info,
        states=np.zeros((capacity, n_words), dtype=np.uint64),
        hashes=np.zeros(capacity, dtype=np.uint64),
        node=np.zeros((capacity, 4), dtype=np.int64),
        h=np.empty(capacity, dtype=np.float64),
        table=np.full(table_size, -1, dtype=np.int64),
        heap=np.empty((capacity, 4), dtype=np.float64),
        pending=np.empty((width, 2), dtype=np.int64),
        batch=np.empty((width, n_words), dtype=np.uint64),
        values=np.empty(width, dtype=np.float64),
        scratch=np.empty(n_words, dtype=np.uint64),
    )


def grow(e: Engine) -> Engine:
    """An engine with twice the node and open-list capacity and the same contents."""
    n = int(e.info[_N_NODES])
    bigger = new_engine(e.states.shape[1], len(e.pending) - 1, 2 * len(e.h))
    bigger.info[:] = e.info
    for name in ("states", "hashes", "node", "h"):
        getattr(bigger, name)[:n] = getattr(e, name)[:n]
    size = int(e.info[_HEAP_SIZE])
    bigger.heap[:size] = e.heap[:size]
    _rehash(bigger.table, bigger.hashes, n)
    return bigger


@njit(cache=CACHE)
def _rehash(table, hashes, n):
    mask = np.uint64(table.shape[0] - 1)
    for node in range(n):
        slot = hashes[node] & mask
        while table[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = node


@njit(cache=CACHE, inline="always")
def _push(heap, info, k1, k2, node):
    """Push onto the open list's binary heap (ordered by key1, key2, insertion number)."""
    i = info[_HEAP_SIZE]
    info[_HEAP_SIZE] = i + 1
    seq = float(info[_SEQ])
    info[_SEQ] += 1
    while i > 0:
        parent = (i - 1) // 2
        if heap[parent, 0] < k1 or (
            heap[parent, 0] == k1
            and (heap[parent, 1] < k2 or (heap[parent, 1] == k2 and heap[parent, 2] < seq))
        ):
            break
        heap[i, 0] = heap[parent, 0]
        heap[i, 1] = heap[parent, 1]
        heap[i, 2] = heap[parent, 2]
        heap[i, 3] = heap[parent, 3]
        i = parent
    heap[i, 0] = k1
    heap[i, 1] = k2
    heap[i, 2] = seq
    heap[i, 3] = node


@njit(cache=CACHE, inline="always")
def _pop(heap, info):
    """Pop the open list's minimum; returns its node."""
    node = int(heap[0, 3])
    size = info[_HEAP_SIZE] - 1
    info[_HEAP_SIZE] = size
    if size > 0:
        k1, k2, seq, last = heap[size, 0], heap[size, 1], heap[size, 2], heap[size, 3]
        i = 0
        while True:
            child = 2 * i + 1
            if child >= size:
                break
            right = child + 1
            if right < size and (
                heap[right, 0] < heap[child, 0]
                or (
                    heap[right, 0] == heap[child, 0]
                    and (
                        heap[right, 1] < heap[child, 1]
                        or (heap[right, 1] == heap[child, 1] and heap[right, 2] < heap[child, 2])
                    )
                )
            ):
                child = right
            if k1 < heap[child, 0] or (
                k1 == heap[child, 0]
                and (k2 < heap[child, 1] or (k2 == heap[child, 1] and seq < heap[child, 2]))
            ):
                break
            heap[i, 0] = heap[child, 0]
            heap[i, 1] = heap[child, 1]
            heap[i, 2] = heap[child, 2]
            heap[i, 3] = heap[child, 3]
            i = child
        heap[i, 0] = k1
        heap[i, 1] = k2
        heap[i, 2] = seq
        heap[i, 3] = last
    return node


@njit(cache=CACHE, inline="always")
def _evaluate(words, kind, fdr, ut, rw, ct, lw, gc_fact, gc_neg_ptr, gc_neg_idx, goal, goal_neg, step):
    """Value of one state under a built-in heuristic (inf for a dead end)."""
    if kind == HFF:
        h, _ = ff_value(words, ut, fdr, rw)
    elif kind == LMCUT:
        h = lmcut_value(words, ct, fdr, lw, True, True)
    elif kind == HADD:
        h = explore(words, ut, fdr, True, rw)
    elif kind == HMAX:
        h = explore(words, ut, fdr, False, rw)
    elif kind == GOAL_COUNT:
        return float(goal_count_one(words, gc_fact, gc_neg_ptr, gc_neg_idx))
    else:
        return 0.0 if satisfies(words, goal, goal_neg) else step
    return np.inf if h < 0 else float(h)


@njit(cache=CACHE, inline="always")
def _apply_pending(e, n_values, astar):
    """Insert the successors of the expansion in progress in generation order: evaluated ones
    with their value (dead ends marked), re-inserted ones with their new key. Only the first
    `n_values` evaluations happened (the rest exceeded the budget)."""
    info, node, heap = e.info, e.node, e.heap
    k = 0
    for i in range(info[_N_PENDING]):
        child = e.pending[i, 0]
        if e.pending[i, 1]:
            if k >= n_values:
                break
            h = e.values[k]
            k += 1
            e.h[child] = h
            if h == np.inf:
                node[child, _STATUS] = _DEAD
                info[DEAD_ENDS] += 1
                continue
            node[child, _STATUS] = _OPEN
        elif node[child, _STATUS] != _OPEN:
            continue
        h = e.h[child]
        if astar:
            _push(heap, info, node[child, _G] + h, h, child)
        else:
            _push(heap, info, h, 0.0, child)
    info[EVALUATIONS] += k
    info[_N_PENDING] = 0
    info[_AWAITING] = 0


@njit(cache=CACHE)
def _start(
    e,
    init,
    max_evaluations,
    external,
    kind,
    fdr,
    ut,
    rw,
    ct,
    lw,
    gc_fact,
    gc_neg_ptr,
    gc_neg_idx,
    goal,
    goal_neg,
    step,
    astar,
):
    """Register and evaluate the initial state; returns the status to report, or -1 to go on."""
    info = e.info
    info[_STARTED] = 1
    hv = _hash(init)
    root = 0
    info[_N_NODES] = 1
    e.table[hv & np.uint64(e.table.shape[0] - 1)] = root
    e.hashes[root] = hv
    e.states[root, :] = init
    e.node[root, _PARENT] = -1
    e.node[root, _ACTION] = -1
    e.node[root, _G] = 0
    e.node[root, _STATUS] = _PENDING
    e.pending[0, 0] = root
    e.pending[0, 1] = 1
    info[_N_PENDING] = 1
    if max_evaluations < 1:
        return EVALUATION_LIMIT
    info[N_NEW] = 1
    if external:
        e.batch[0, :] = init
        info[_AWAITING] = 1
        return NEED_VALUES
    e.values[0] = _evaluate(
        init, kind, fdr, ut, rw, ct, lw, gc_fact, gc_neg_ptr, gc_neg_idx, goal, goal_neg, step
    )
    _apply_pending(e, 1, astar)
    return -1


@njit(cache=CACHE, inline="always")
def _hash(words):
    """splitmix64-style mixing of the state's words."""
    x = np.uint64(0x9E3779B97F4A7C15)
    for w in words:
        x ^= w + np.uint64(0x9E3779B97F4A7C15) + (x << np.uint64(6)) + (x >> np.uint64(2))
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


@njit(cache=CACHE)
def run(
    e,
    init,
    gen,
    add_ptr,
    add_idx,
    del_ptr,
    del_idx,
    goal,
    goal_neg,
    cost,
    astar,
    reopen,
    max_evaluations,
    max_expansions,
    kind,
    fdr,
    ut,
    rw,
    ct,
    lw,
    gc_fact,
    gc_neg_ptr,
    gc_neg_idx,
    step,
):
    """Advance the search until it ends or pauses; returns one of SOLVED, EXHAUSTED,
    EVALUATION_LIMIT, PAUSED (after `max_expansions` expansions), GROW (call again with a
    `grow`n engine) or NEED_VALUES (fill ``e.values[:e.info[N_NEW]]`` with the values of
    ``e.batch[:e.info[N_NEW]]`` and call again). `gen` is the task's `SuccessorGenerator`;
    ``add_*``/``del_*`` are the effects as uint32 CSR arrays."""
    info, node, states, scratch = e.info, e.node, e.states, e.scratch
    external = kind == EXTERNAL
    one = np.uint64(1)
    if info[_AWAITING]:
        _apply_pending(e, info[N_NEW], astar)
        if info[_STOP_AFTER_PENDING]:
            return EVALUATION_LIMIT
    if not info[_STARTED]:
        code = _start(
            e,
            init,
            max_evaluations,
            external,
            kind,
            fdr,
            ut,
            rw,
            ct,
            lw,
            gc_fact,
            gc_neg_ptr,
            gc_neg_idx,
            goal,
            goal_neg,
            step,
            astar,
        )
        if code >= 0:
            return code
    n_words = scratch.shape[0]
    n_actions = e.pending.shape[0] - 1
    g_fact, g_none_ptr, g_none_idx, g_skip, g_ops_ptr, g_ops_idx = gen
    n_gen = g_skip.shape[0]
    table = e.table
    mask = np.uint64(table.shape[0] - 1)
    expanded = 0
    while True:
        if expanded >= max_expansions:
            return PAUSED
        if info[_N_NODES] + n_actions > node.shape[0] or info[_HEAP_SIZE] + n_actions > e.heap.shape[0]:
            return GROW
        # ---- next node to expand
        current = -1
        while info[_HEAP_SIZE] > 0:
            candidate = _pop(e.heap, info)
            if node[candidate, _STATUS] != _CLOSED:
                current = candidate
                break
        if current < 0:
            return EXHAUSTED
        node[current, _STATUS] = _CLOSED
        info[EXPANSIONS] += 1
        expanded += 1
        words = states[current]
        goal_holds = True
        for k in range(goal.shape[0]):
            f = goal[k]
            if (words[f >> 6] >> np.uint64(f & 63)) & one == 0:
                goal_holds = False
                break
        if goal_holds:
            for k in range(goal_neg.shape[0]):
                f = goal_neg[k]
                if (words[f >> 6] >> np.uint64(f & 63)) & one != 0:
                    goal_holds = False
                    break
        if goal_holds:
            info[GOAL_NODE] = current
            return SOLVED
        # ---- its successors, in the successor generator's order
        g_node = node[current, _G]
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
                for w in range(n_words):
                    scratch[w] = words[w]
                for k in range(del_ptr[a], del_ptr[a + 1]):
                    df = del_idx[k]
                    scratch[df >> 6] &= ~(one << np.uint64(df & 63))
                for k in range(add_ptr[a], add_ptr[a + 1]):
                    af = add_idx[k]
                    scratch[af >> 6] |= one << np.uint64(af & 63)
                # look the successor up in the hash table, registering it when new
                hv = _hash(scratch)
                slot = hv & mask
                child = -1
                while True:
                    c = table[slot]
                    if c < 0:
                        break
                    if e.hashes[c] == hv:
                        same = True
                        for w in range(n_words):
                            if states[c, w] != scratch[w]:
                                same = False
                                break
                        if same:
                            child = c
                            break
                    slot = (slot + one) & mask
                if child < 0:
                    child = info[_N_NODES]
                    info[_N_NODES] = child + 1
                    table[slot] = child
                    e.hashes[child] = hv
                    for w in range(n_words):
                        states[child, w] = scratch[w]
                    node[child, _STATUS] = _NEW
                status = node[child, _STATUS]
                if status == _DEAD:
                    continue
                g_child = g_node + cost[a]
                if status == _NEW:
                    node[child, _STATUS] = _PENDING
                    node[child, _G] = g_child
                    node[child, _PARENT] = current
                    node[child, _ACTION] = a
                    e.pending[n_pending, 0] = child
                    e.pending[n_pending, 1] = 1
                    n_pending += 1
                    if external:
                        for w in range(n_words):
                            e.batch[n_new, w] = scratch[w]
                    n_new += 1
                elif node[child, _G] > g_child:
                    node[child, _G] = g_child
                    node[child, _PARENT] = current
                    node[child, _ACTION] = a
                    if status == _OPEN or (status == _CLOSED and reopen):
                        node[child, _STATUS] = _OPEN
                        e.pending[n_pending, 0] = child
                        e.pending[n_pending, 1] = 0
                        n_pending += 1
            i += 1
        info[_N_PENDING] = n_pending
        budget = max_evaluations - info[EVALUATIONS]
        if n_new > budget:
            n_new = budget
            info[_STOP_AFTER_PENDING] = 1
        info[N_NEW] = n_new
        if external and n_new > 0:
            info[_AWAITING] = 1
            return NEED_VALUES
        k = 0
        for j in range(n_pending):
            if e.pending[j, 1]:
                if k >= n_new:
                    break
                e.values[k] = _evaluate(
                    states[e.pending[j, 0]],
                    kind,
                    fdr,
                    ut,
                    rw,
                    ct,
                    lw,
                    gc_fact,
                    gc_neg_ptr,
                    gc_neg_idx,
                    goal,
                    goal_neg,
                    step,
                )
                k += 1
        _apply_pending(e, n_new, astar)
        if info[_STOP_AFTER_PENDING]:
            return EVALUATION_LIMIT
