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
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from pddlgym_sl.heuristics.lmcut import lmcut_value
from pddlgym_sl.heuristics.relaxation import explore, ff_value
from pddlgym_sl.heuristics.simple import goal_count_one
from pddlgym_sl.successors import _apply_into, is_applicable, satisfies

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
    parent: np.ndarray  # int32 (capacity): parent node, -1 for the root
    action: np.ndarray  # int32 (capacity): action from the parent
    g: np.ndarray  # int64 (capacity)
    h: np.ndarray  # float64 (capacity)
    status: np.ndarray  # int8 (capacity)
    table: np.ndarray  # int32 (power of two >= 2 capacity): hash table of node ids, -1 empty
    key1: np.ndarray  # float64 (heap capacity): open-list heap: first key (h, or g + h)
    key2: np.ndarray  # float64: second key (0, or h)
    seq: np.ndarray  # int64: insertion number (first in, first out among equal keys)
    heap_node: np.ndarray  # int32
    pending: np.ndarray  # int32 (n_actions + 1): successors of the expansion in progress
    pending_new: np.ndarray  # int8: 1 for a successor to be evaluated, 0 for a re-insertion
    batch: np.ndarray  # uint64 (n_actions + 1, n_words): the states to evaluate (external heuristic)
    values: np.ndarray  # float64 (n_actions + 1): their values
    scratch: np.ndarray  # uint64 (n_words)


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
        parent=np.empty(capacity, dtype=np.int32),
        action=np.empty(capacity, dtype=np.int32),
        g=np.empty(capacity, dtype=np.int64),
        h=np.empty(capacity, dtype=np.float64),
        status=np.zeros(capacity, dtype=np.int8),
        table=np.full(table_size, -1, dtype=np.int32),
        key1=np.empty(capacity, dtype=np.float64),
        key2=np.empty(capacity, dtype=np.float64),
        seq=np.empty(capacity, dtype=np.int64),
        heap_node=np.empty(capacity, dtype=np.int32),
        pending=np.empty(width, dtype=np.int32),
        pending_new=np.empty(width, dtype=np.int8),
        batch=np.empty((width, n_words), dtype=np.uint64),
        values=np.empty(width, dtype=np.float64),
        scratch=np.empty(n_words, dtype=np.uint64),
    )


def grow(e: Engine) -> Engine:
    """An engine with twice the node and open-list capacity and the same contents."""
    n = int(e.info[_N_NODES])
    cap = 2 * len(e.parent)
    bigger = new_engine(e.states.shape[1], len(e.pending) - 1, cap)
    bigger.info[:] = e.info
    for old, new in zip(e[1:9], bigger[1:9], strict=True):
        new[:n] = old[:n]
    size = int(e.info[_HEAP_SIZE])
    for old, new in zip(e[9:13], bigger[9:13], strict=True):
        new[:size] = old[:size]
    _rehash(bigger.table, bigger.hashes, n)
    return bigger


@njit(cache=True)
def _rehash(table, hashes, n):
    mask = table.shape[0] - 1
    for node in range(n):
        slot = hashes[node] & mask
        while table[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = node


@njit(cache=True, inline="always")
def _hash(words):
    """splitmix64-style mixing of the state's words."""
    x = np.uint64(0x9E3779B97F4A7C15)
    for w in words:
        x ^= w + np.uint64(0x9E3779B97F4A7C15) + (x << np.uint64(6)) + (x >> np.uint64(2))
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


@njit(cache=True)
def _lookup_or_add(e, words):
    """The node of state `words`, registering it (status new) when unknown."""
    hv = _hash(words)
    mask = e.table.shape[0] - 1
    slot = hv & mask
    n_words = words.shape[0]
    while True:
        node = e.table[slot]
        if node < 0:
            break
        if e.hashes[node] == hv:
            same = True
            for k in range(n_words):
                if e.states[node, k] != words[k]:
                    same = False
                    break
            if same:
                return node
        slot = (slot + 1) & mask
    node = e.info[_N_NODES]
    e.info[_N_NODES] = node + 1
    e.table[slot] = node
    e.hashes[node] = hv
    e.states[node, :] = words
    e.status[node] = _NEW
    return node


@njit(cache=True, inline="always")
def _less(e, i, j):
    if e.key1[i] != e.key1[j]:
        return e.key1[i] < e.key1[j]
    if e.key2[i] != e.key2[j]:
        return e.key2[i] < e.key2[j]
    return e.seq[i] < e.seq[j]


@njit(cache=True, inline="always")
def _swap(e, i, j):
    e.key1[i], e.key1[j] = e.key1[j], e.key1[i]
    e.key2[i], e.key2[j] = e.key2[j], e.key2[i]
    e.seq[i], e.seq[j] = e.seq[j], e.seq[i]
    e.heap_node[i], e.heap_node[j] = e.heap_node[j], e.heap_node[i]


@njit(cache=True)
def _push(e, node, astar):
    i = e.info[_HEAP_SIZE]
    e.info[_HEAP_SIZE] = i + 1
    h = e.h[node]
    e.key1[i] = e.g[node] + h if astar else h
    e.key2[i] = h if astar else 0.0
    e.seq[i] = e.info[_SEQ]
    e.info[_SEQ] += 1
    e.heap_node[i] = node
    while i > 0:
        parent = (i - 1) // 2
        if not _less(e, i, parent):
            break
        _swap(e, i, parent)
        i = parent


@njit(cache=True)
def _pop(e):
    size = e.info[_HEAP_SIZE] - 1
    node = e.heap_node[0]
    e.info[_HEAP_SIZE] = size
    if size > 0:
        _swap(e, 0, size)
        i = 0
        while True:
            left = 2 * i + 1
            if left >= size:
                break
            best = left
            if left + 1 < size and _less(e, left + 1, left):
                best = left + 1
            if not _less(e, best, i):
                break
            _swap(e, i, best)
            i = best
    return node


@njit(cache=True, inline="always")
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


@njit(cache=True)
def _apply_pending(e, n_values, astar):
    """Insert the successors of the expansion in progress in generation order: evaluated ones
    with their value (dead ends marked), re-inserted ones with their new key. Only the first
    `n_values` evaluations happened (the rest exceeded the budget)."""
    k = 0
    for i in range(e.info[_N_PENDING]):
        node = e.pending[i]
        if e.pending_new[i]:
            if k >= n_values:
                break
            h = e.values[k]
            k += 1
            e.h[node] = h
            if h == np.inf:
                e.status[node] = _DEAD
                e.info[DEAD_ENDS] += 1
            else:
                e.status[node] = _OPEN
                _push(e, node, astar)
        elif e.status[node] == _OPEN:
            _push(e, node, astar)
    e.info[EVALUATIONS] += k
    e.info[_N_PENDING] = 0
    e.info[_AWAITING] = 0


@njit(cache=True)
def run(
    e,
    init,
    pre_ptr,
    pre_idx,
    neg_ptr,
    neg_idx,
    add_ptr,
    add_idx,
    del_ptr,
    del_idx,
    goal,
    goal_neg,
    cost,
    succ_order,
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
    ``e.batch[:e.info[N_NEW]]`` and call again)."""
    info = e.info
    n_actions = succ_order.shape[0]
    if info[_AWAITING]:
        _apply_pending(e, info[N_NEW], astar)
        if info[_STOP_AFTER_PENDING]:
            return EVALUATION_LIMIT
    if not info[_STARTED]:
        info[_STARTED] = 1
        root = _lookup_or_add(e, init)
        e.parent[root] = -1
        e.action[root] = -1
        e.g[root] = 0
        e.pending[0] = root
        e.pending_new[0] = 1
        info[_N_PENDING] = 1
        if max_evaluations < 1:
            return EVALUATION_LIMIT
        info[N_NEW] = 1
        if kind == EXTERNAL:
            e.batch[0, :] = init
            info[_AWAITING] = 1
            return NEED_VALUES
        e.values[0] = _evaluate(
            init, kind, fdr, ut, rw, ct, lw, gc_fact, gc_neg_ptr, gc_neg_idx, goal, goal_neg, step
        )
        _apply_pending(e, 1, astar)
    expanded = 0
    while True:
        if expanded >= max_expansions:
            return PAUSED
        if info[_N_NODES] + n_actions > e.parent.shape[0] or info[_HEAP_SIZE] + n_actions > e.key1.shape[0]:
            return GROW
        # ---- next node to expand
        node = -1
        while info[_HEAP_SIZE] > 0:
            candidate = _pop(e)
            if e.status[candidate] != _CLOSED:
                node = candidate
                break
        if node < 0:
            return EXHAUSTED
        e.status[node] = _CLOSED
        info[EXPANSIONS] += 1
        expanded += 1
        words = e.states[node]
        if satisfies(words, goal, goal_neg):
            info[GOAL_NODE] = node
            return SOLVED
        # ---- generate its successors in the successor generator's order
        g_node = e.g[node]
        n_pending = 0
        n_new = 0
        for i in range(n_actions):
            a = succ_order[i]
            if not is_applicable(words, a, pre_ptr, pre_idx, neg_ptr, neg_idx):
                continue
            info[GENERATED] += 1
            _apply_into(words, e.scratch, a, add_ptr, add_idx, del_ptr, del_idx)
            child = _lookup_or_add(e, e.scratch)
            status = e.status[child]
            if status == _DEAD:
                continue
            g_child = g_node + cost[a]
            if status == _NEW:
                e.status[child] = _PENDING
                e.g[child] = g_child
                e.parent[child] = node
                e.action[child] = a
                e.pending[n_pending] = child
                e.pending_new[n_pending] = 1
                n_pending += 1
                if kind == EXTERNAL:
                    e.batch[n_new, :] = e.scratch
                n_new += 1
            elif e.g[child] > g_child:
                e.g[child] = g_child
                e.parent[child] = node
                e.action[child] = a
                if status == _OPEN or (status == _CLOSED and reopen):
                    e.status[child] = _OPEN
                    e.pending[n_pending] = child
                    e.pending_new[n_pending] = 0
                    n_pending += 1
        info[_N_PENDING] = n_pending
        budget = max_evaluations - info[EVALUATIONS]
        if n_new > budget:
            n_new = budget
            info[_STOP_AFTER_PENDING] = 1
        info[N_NEW] = n_new
        if kind == EXTERNAL and n_new > 0:
            info[_AWAITING] = 1
            return NEED_VALUES
        k = 0
        for j in range(n_pending):
            if e.pending_new[j]:
                if k >= n_new:
                    break
                e.values[k] = _evaluate(
                    e.states[e.pending[j]],
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
