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

The queue is one int64 array (a header, then the bucket heads, the entry lists and the heap)
rather than a tuple of arrays: numba passes every array to a function as seven scalars, so a
push or pop that took six arrays, and was not inlined, cost ten times more than the operation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pddlgym_sl.numba_cache import CACHE

(
    _MODE,
    _CURRENT,
    _ENTRIES,
    _PUSHES,
    _ALLOC,
    _HIGH,
    _HEAP_SIZE,
    _HEAD,
    _BELOW,
    _VALUE,
    _HKEY,
    _HVAL,
    _KEY,
    _VAL,
) = range(14)
_HEADER = 14
_BUCKET, _HEAP = 0, 1
_MIN_BUCKETS_BEFORE_SWITCH = 100


def new_queue(n_keys: int, capacity: int) -> np.ndarray:
    """A queue whose bucket keys stay below `n_keys` and which holds up to `capacity` entries
    between two moments it is empty: one int64 array (see the module docstring)."""
    n_keys = max(n_keys, _MIN_BUCKETS_BEFORE_SWITCH + 1)
    q = np.zeros(_HEADER + n_keys + 4 * capacity, dtype=np.int64)
    q[_HIGH] = -1
    q[_HEAD] = _HEADER
    q[_BELOW] = _HEADER + n_keys
    q[_VALUE] = q[_BELOW] + capacity
    q[_HKEY] = q[_VALUE] + capacity
    q[_HVAL] = q[_HKEY] + capacity
    q[_HEADER : _HEADER + n_keys] = -1
    return q


@njit(cache=CACHE, nogil=True)
def clear(q):
    """Empty the queue and reset its push count (a heap stays a heap)."""
    if q[_MODE] == _BUCKET:
        head = q[_HEAD]
        for k in range(q[_CURRENT], q[_HIGH] + 1):
            q[head + k] = -1
    q[_CURRENT] = 0
    q[_ENTRIES] = 0
    q[_PUSHES] = 0
    q[_ALLOC] = 0
    q[_HIGH] = -1
    q[_HEAP_SIZE] = 0


@njit(cache=CACHE, nogil=True, inline="always")
def is_empty(q):
    if q[_MODE] == _BUCKET:
        return q[_ENTRIES] == 0
    return q[_HEAP_SIZE] == 0


@njit(cache=CACHE, nogil=True)
def add_virtual_pushes(q, n):
    if q[_MODE] == _BUCKET:
        q[_PUSHES] += n


@njit(cache=CACHE, nogil=True, inline="always")
def _heap_sift_up(q, hole, key, val):
    """libstdc++ ``__push_heap`` with ``comp(a, b) = a.key > b.key``: move the hole up from
    `hole` while its parent's key is larger, then put (key, val) there."""
    hkey, hval = q[_HKEY], q[_HVAL]
    parent = (hole - 1) // 2
    while hole > 0 and q[hkey + parent] > key:
        q[hkey + hole] = q[hkey + parent]
        q[hval + hole] = q[hval + parent]
        hole = parent
        parent = (hole - 1) // 2
    q[hkey + hole] = key
    q[hval + hole] = val


@njit(cache=CACHE, nogil=True, inline="always")
def _to_heap(q):
    """Switch to the heap: every entry in (key, bucket order) order, which is a valid heap as it
    is sorted."""
    head, below, value, hkey, hval = q[_HEAD], q[_BELOW], q[_VALUE], q[_HKEY], q[_HVAL]
    n = 0
    for k in range(q[_CURRENT], q[_HIGH] + 1):
        e = q[head + k]
        start = n
        while e >= 0:  # top to bottom, then reversed: bucket order is bottom to top
            q[hkey + n] = k
            q[hval + n] = q[value + e]
            n += 1
            e = q[below + e]
        i, j = start, n - 1
        while i < j:
            q[hval + i], q[hval + j] = q[hval + j], q[hval + i]
            i += 1
            j -= 1
        q[head + k] = -1
    q[_MODE] = _HEAP
    q[_HEAP_SIZE] = n
    q[_ENTRIES] = 0
    q[_ALLOC] = 0
    q[_HIGH] = -1
    q[_CURRENT] = 0


@njit(cache=CACHE, nogil=True, inline="always")
def push(q, key, val):
    """Insert `val` with integer `key` >= 0."""
    if q[_MODE] == _BUCKET and key >= _MIN_BUCKETS_BEFORE_SWITCH and key > q[_PUSHES]:
        _to_heap(q)
    if q[_MODE] == _HEAP:
        size = q[_HEAP_SIZE]
        q[_HEAP_SIZE] = size + 1
        _heap_sift_up(q, size, key, val)
        return
    q[_ENTRIES] += 1
    q[_PUSHES] += 1
    e = q[_ALLOC]
    q[_ALLOC] = e + 1
    slot = np.uint64(q[_HEAD] + key)
    q[np.uint64(q[_VALUE] + e)] = val
    q[np.uint64(q[_BELOW] + e)] = q[slot]
    q[slot] = e
    if key < q[_CURRENT]:
        q[_CURRENT] = key
    if key > q[_HIGH]:
        q[_HIGH] = key


@njit(cache=CACHE, nogil=True, inline="always")
def _heap_pop(q):
    """libstdc++ ``pop_heap``: take the top (into the header's key and value slots), move the
    last entry into the hole it leaves."""
    hkey, hval = q[_HKEY], q[_HVAL]
    q[_KEY] = q[hkey]
    q[_VAL] = q[hval]
    last = q[_HEAP_SIZE] - 1
    q[_HEAP_SIZE] = last
    if last > 0:
        lkey = q[hkey + last]
        lval = q[hval + last]
        hole = 0
        child = 0
        while child < (last - 1) // 2:
            child = 2 * (child + 1)
            if q[hkey + child] > q[hkey + child - 1]:
                child -= 1
            q[hkey + hole] = q[hkey + child]
            q[hval + hole] = q[hval + child]
            hole = child
        if (last & 1) == 0 and child == (last - 2) // 2:
            child = 2 * (child + 1)
            q[hkey + hole] = q[hkey + child - 1]
            q[hval + hole] = q[hval + child - 1]
            hole = child - 1
        _heap_sift_up(q, hole, lkey, lval)


@njit(cache=CACHE, nogil=True, inline="always")
def pop(q):
    """Remove and return (key, value) of a minimal entry (see the module docstring for ties)."""
    if q[_MODE] == _HEAP:
        _heap_pop(q)
        return q[_KEY], q[_VAL]
    head = q[_HEAD]
    k = q[_CURRENT]
    while q[np.uint64(head + k)] < 0:
        k += 1
    q[_CURRENT] = k
    slot = np.uint64(head + k)
    e = q[slot]
    q[slot] = q[np.uint64(q[_BELOW] + e)]
    q[_ENTRIES] -= 1
    if q[_ENTRIES] == 0:
        q[_ALLOC] = 0  # every entry is dead: reuse the pool
    return k, q[np.uint64(q[_VALUE] + e)]
