"""Fast Downward's adaptive priority queue, as numba functions on preallocated arrays.

Which of several equally cheap propositions a relaxation heuristic settles first decides its
best supporters, so hFF's relaxed plan and LM-cut's cuts (and their values) depend on the exact
pop order. To give Fast Downward's values this module reproduces its ``AdaptiveQueue``
(``search/algorithms/priority_queues.h``), behaviour only:

- it starts as a **bucket queue** with one stack per integer key (last in, first out within a
  key) and a cursor on the lowest possibly non-empty bucket;
- a push whose key is at least 100 and larger than the number of pushes since the last `clear`
  turns it, for good, into a **binary heap** on the keys alone, laid out like libstdc++'s
  ``std::priority_queue`` (its ``push_heap`` / ``pop_heap``), starting from the entries in
  (key, bucket order) order; ties in the heap are broken the way those routines break them;
- `add_virtual_pushes` counts pushes that did not happen (LM-cut uses it so that its
  incremental explorations do not switch the queue too eagerly).

The switch persists across `clear` calls, as in Fast Downward, so a heuristic object's values
can depend on the states it evaluated before (only through tie-breaking, and only on tasks whose
relaxed costs reach 100).

Entries are allocated from a pool that is reset whenever the queue is empty; callers size it for
the pushes one exploration can make (`new_queue`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

_MODE, _CURRENT, _ENTRIES, _PUSHES, _ALLOC, _HIGH, _HEAP_SIZE = range(7)
_BUCKET, _HEAP = 0, 1
_MIN_BUCKETS_BEFORE_SWITCH = 100


class Queue(NamedTuple):
    """Arrays of one adaptive queue (see the module docstring)."""

    info: np.ndarray  # int64 (7): mode, current bucket, entries, pushes, allocated, highest key, heap size
    head: np.ndarray  # int32 (n_keys): top entry of each bucket, -1 when empty
    below: np.ndarray  # int32 (capacity): the entry under each entry in its bucket
    value: np.ndarray  # int32 (capacity): the value of each entry
    hkey: np.ndarray  # int64 (capacity): heap keys
    hval: np.ndarray  # int32 (capacity): heap values


def new_queue(n_keys: int, capacity: int) -> Queue:
    """A queue whose bucket keys stay below `n_keys` and which holds up to `capacity` entries
    between two moments it is empty."""
    info = np.zeros(7, dtype=np.int64)
    info[_HIGH] = -1
    return Queue(
        info=info,
        head=np.full(max(n_keys, _MIN_BUCKETS_BEFORE_SWITCH + 1), -1, dtype=np.int32),
        below=np.empty(capacity, dtype=np.int32),
        value=np.empty(capacity, dtype=np.int32),
        hkey=np.empty(capacity, dtype=np.int64),
        hval=np.empty(capacity, dtype=np.int32),
    )


@njit(cache=True, nogil=True)
def clear(q):
    """Empty the queue and reset its push count (a heap stays a heap)."""
    info = q.info
    if info[_MODE] == _BUCKET:
        for k in range(info[_CURRENT], info[_HIGH] + 1):
            q.head[k] = -1
    info[_CURRENT] = 0
    info[_ENTRIES] = 0
    info[_PUSHES] = 0
    info[_ALLOC] = 0
    info[_HIGH] = -1
    info[_HEAP_SIZE] = 0


@njit(cache=True, nogil=True)
def is_empty(q):
    if q.info[_MODE] == _BUCKET:
        return q.info[_ENTRIES] == 0
    return q.info[_HEAP_SIZE] == 0


@njit(cache=True, nogil=True)
def add_virtual_pushes(q, n):
    if q.info[_MODE] == _BUCKET:
        q.info[_PUSHES] += n


@njit(cache=True, nogil=True, inline="always")
def _heap_sift_up(hkey, hval, hole, top, key, val):
    """libstdc++ ``__push_heap`` with ``comp(a, b) = a.key > b.key``."""
    parent = (hole - 1) // 2
    while hole > top and hkey[parent] > key:
        hkey[hole] = hkey[parent]
        hval[hole] = hval[parent]
        hole = parent
        parent = (hole - 1) // 2
    hkey[hole] = key
    hval[hole] = val


@njit(cache=True, nogil=True)
def _to_heap(q):
    """Move every entry into the heap in (key, bucket order) order: a sorted array is a heap."""
    info = q.info
    n = 0
    for k in range(info[_CURRENT], info[_HIGH] + 1):
        e = q.head[k]
        start = n
        while e >= 0:  # top to bottom, then reversed: bucket order is bottom to top
            q.hkey[n] = k
            q.hval[n] = q.value[e]
            n += 1
            e = q.below[e]
        i, j = start, n - 1
        while i < j:
            q.hval[i], q.hval[j] = q.hval[j], q.hval[i]
            i += 1
            j -= 1
        q.head[k] = -1
    info[_MODE] = _HEAP
    info[_HEAP_SIZE] = n
    info[_ENTRIES] = 0
    info[_ALLOC] = 0
    info[_HIGH] = -1
    info[_CURRENT] = 0


@njit(cache=True, nogil=True)
def push(q, key, val):
    """Insert `val` with integer `key` >= 0."""
    info = q.info
    if info[_MODE] == _BUCKET and key >= _MIN_BUCKETS_BEFORE_SWITCH and key > info[_PUSHES]:
        _to_heap(q)
    if info[_MODE] == _HEAP:
        size = info[_HEAP_SIZE]
        info[_HEAP_SIZE] = size + 1
        _heap_sift_up(q.hkey, q.hval, size, 0, key, val)
        return
    info[_ENTRIES] += 1
    info[_PUSHES] += 1
    e = info[_ALLOC]
    info[_ALLOC] = e + 1
    q.value[e] = val
    q.below[e] = q.head[key]
    q.head[key] = e
    if key < info[_CURRENT]:
        info[_CURRENT] = key
    if key > info[_HIGH]:
        info[_HIGH] = key


@njit(cache=True, nogil=True)
def pop(q):
    """Remove and return (key, value) of a minimal entry (see the module docstring for ties)."""
    info = q.info
    if info[_MODE] == _HEAP:
        hkey, hval = q.hkey, q.hval
        size = info[_HEAP_SIZE]
        key = hkey[0]
        val = hval[0]
        last = size - 1
        if last > 0:
            # libstdc++ pop_heap: move the last entry into the hole left at the top
            lkey = hkey[last]
            lval = hval[last]
            hole = 0
            child = 0
            while child < (last - 1) // 2:
                child = 2 * (child + 1)
                if hkey[child] > hkey[child - 1]:
                    child -= 1
                hkey[hole] = hkey[child]
                hval[hole] = hval[child]
                hole = child
            if (last & 1) == 0 and child == (last - 2) // 2:
                child = 2 * (child + 1)
                hkey[hole] = hkey[child - 1]
                hval[hole] = hval[child - 1]
                hole = child - 1
            _heap_sift_up(hkey, hval, hole, 0, lkey, lval)
        info[_HEAP_SIZE] = last
        return key, val
    k = info[_CURRENT]
    while q.head[k] < 0:
        k += 1
    info[_CURRENT] = k
    e = q.head[k]
    q.head[k] = q.below[e]
    info[_ENTRIES] -= 1
    if info[_ENTRIES] == 0:
        info[_ALLOC] = 0  # every entry is dead: reuse the pool
    return k, q.value[e]
