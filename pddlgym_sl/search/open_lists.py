"""The engine's open lists: a bucket queue for integer keys and a binary heap for the rest.

Both order entries by key, then first in first out, as Fast Downward's open lists do
(``tiebreaking_open_list`` / ``standard_scalar_open_list``: a map from keys to FIFO deques).

- `Buckets` (GBFS and A* with an integer heuristic, the common case): one FIFO per key, each a
  chain of fixed-size chunks of node ids drawn from a shared pool; emptied chunks return to the
  pool. An entry costs 4 bytes, as in Fast Downward's deques, and push and pop are O(1) (the pop
  scans up from the smallest key that may be non-empty). GBFS keys by h; A* by the pair (f, h),
  f = g + h, numbered ``f (f + 1) / 2 + h`` (`pair_key`): since 0 <= h <= f, that number orders
  pairs as Fast Downward's ``tiebreaking([sum([g(), h]), h])`` does, with no bound on f known in
  advance. A queue that would need more than `MAX_KEYS` keys (huge action costs) becomes a heap
  with the same contents in the same order (`buckets_to_heap`).
- `Heap` (any heuristic with non-integer values): keys in ``keys[:, :nk]`` (A*: g + h, then h),
  compared lexicographically, then the insertion number, kept with the node id in one uint64
  (``seq << 32 | node``): 24 bytes an entry for A*, why integer searches use buckets.

Capacity is checked by the engine before each expansion (`free_slots`); the driver grows a full
list (`grow_buckets`, `grow_heap`) and the engine resumes. The functions are inlined into the
engine's loop (numba passes each array as several scalars, so a call per push would cost more
than the push).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from pddlgym_sl.numba_cache import CACHE

CHUNK = 256
"""Node ids per chunk of a bucket's FIFO."""
MAX_KEYS = 1 << 22
"""Keys a bucket queue may have (its head and tail arrays: 32 MB); more, and it becomes a heap."""

# fields of Buckets.meta
_LO, _FREE, _USED, _SIZE, _NFREE, _PAIRED = range(6)
# fields of Heap.meta
_HSIZE, _SEQ = range(2)


class Buckets(NamedTuple):
    """A bucket queue (module docstring). head / tail: int32 (n_keys): first and last chunk of each
    key's FIFO (-1: empty); data: int32 (n_chunks, CHUNK); next: int32 (n_chunks): the next chunk of
    the FIFO, or of the free list; read / write: int32 (n_chunks): positions in a chunk; meta: int64
    (4): the smallest key that may be non-empty, the free list's head, chunks ever used, entries."""

    head: np.ndarray
    tail: np.ndarray
    data: np.ndarray
    next: np.ndarray
    read: np.ndarray
    write: np.ndarray
    meta: np.ndarray


class Heap(NamedTuple):
    """A binary heap (module docstring). keys: float64 (capacity, nk); ids: uint64 (capacity);
    meta: int64 (2): size, insertion counter."""

    keys: np.ndarray
    ids: np.ndarray
    meta: np.ndarray


def new_buckets(n_keys: int = 64, n_chunks: int = 64, paired: bool = False) -> Buckets:
    """An empty bucket queue keyed by one integer, or by (f, h) pairs when `paired` (A*)."""
    meta = np.zeros(6, dtype=np.int64)
    meta[_LO] = n_keys
    meta[_FREE] = -1
    meta[_PAIRED] = int(paired)
    return Buckets(
        head=np.full(n_keys, -1, dtype=np.int32),
        tail=np.full(n_keys, -1, dtype=np.int32),
        data=np.empty((n_chunks, CHUNK), dtype=np.int32),
        next=np.empty(n_chunks, dtype=np.int32),
        read=np.empty(n_chunks, dtype=np.int32),
        write=np.empty(n_chunks, dtype=np.int32),
        meta=meta,
    )


def grow_buckets(b: Buckets, min_keys: int, min_free_chunks: int) -> Buckets:
    """A bucket queue with the same contents and room for keys below `min_keys` and at least
    `min_free_chunks` more chunks."""
    n_keys = len(b.head)
    while n_keys < min_keys:
        n_keys *= 2
    used = int(b.meta[_USED])
    n_chunks = len(b.next)
    while n_chunks - used < min_free_chunks:
        n_chunks *= 2
    out = new_buckets(n_keys, n_chunks) if n_chunks != len(b.next) else None
    head = np.full(n_keys, -1, dtype=np.int32)
    tail = np.full(n_keys, -1, dtype=np.int32)
    head[: len(b.head)] = b.head
    tail[: len(b.tail)] = b.tail
    meta = b.meta.copy()
    if meta[_LO] == len(b.head):  # "empty" was marked by the old key count
        meta[_LO] = n_keys
    if out is None:
        return b._replace(head=head, tail=tail, meta=meta)
    for name in ("data", "next", "read", "write"):
        getattr(out, name)[:used] = getattr(b, name)[:used]
    return out._replace(head=head, tail=tail, meta=meta)


def buckets_to_heap(b: Buckets, min_free: int) -> Heap:
    """A heap holding the queue's entries in the order the queue would pop them, with room for
    `min_free` more: the entries sorted by key and, within a key, first in first out, which is a
    valid heap as it stands (the insertion numbers restart at 0 in that order)."""
    keys, nodes = [np.empty(0, np.int64)], [np.empty(0, np.int32)]
    for key in np.flatnonzero(b.head >= 0):
        c = int(b.head[key])
        while c >= 0:  # the key's chain of chunks ends with next = -1
            nodes.append(b.data[c, b.read[c] : b.write[c]])
            keys.append(np.full(len(nodes[-1]), key, dtype=np.int64))
            c = int(b.next[c])
    key, ids = np.concatenate(keys), np.concatenate(nodes).astype(np.uint64)
    n = len(ids)
    paired = bool(b.meta[_PAIRED])
    h = new_heap(2 if paired else 1, max(1024, n + min_free))
    if paired:  # f and h back from f (f + 1) / 2 + h
        f = ((np.sqrt(8.0 * key + 1.0) - 1.0) // 2).astype(np.int64)
        f -= (f * (f + 1) // 2 > key).astype(np.int64)  # the float square root may round up
        f += ((f + 1) * (f + 2) // 2 <= key).astype(np.int64)  # or down
        h.keys[:n, 0] = f
        h.keys[:n, 1] = key - f * (f + 1) // 2
    else:
        h.keys[:n, 0] = key
    h.ids[:n] = (np.arange(n, dtype=np.uint64) << np.uint64(32)) | ids
    h.meta[_HSIZE] = n
    h.meta[_SEQ] = n
    return h


@njit(cache=CACHE, inline="always")
def pair_key(f, h):
    """The bucket of A*'s key (f, h), 0 <= h <= f: ``f (f + 1) / 2 + h``, increasing in f, then h."""
    return f * (f + 1) // 2 + h


@njit(cache=CACHE, inline="always")
def buckets_key(b, k0, k1):
    """The bucket of keys (k0, k1): k0 (GBFS: h), or `pair_key` (A*: k0 = f, k1 = h)."""
    if b.meta[_PAIRED]:
        return pair_key(np.int64(k0), np.int64(k1))
    return np.int64(k0)


@njit(cache=CACHE, inline="always")
def buckets_free_chunks(b):
    """Chunks that pushes can still take without growing the pool (free list included)."""
    return b.next.shape[0] - b.meta[_USED] + b.meta[_NFREE]


@njit(cache=CACHE, inline="always")
def _take_chunk(b):
    c = b.meta[_FREE]
    if c >= 0:
        b.meta[_FREE] = b.next[c]
        b.meta[_NFREE] -= 1
    else:
        c = b.meta[_USED]
        b.meta[_USED] = c + 1
    b.read[c] = 0
    b.write[c] = 0
    b.next[c] = -1
    return c


@njit(cache=CACHE, inline="always")
def buckets_push(b, key, node):
    """Append `node` to key `key`'s FIFO (the caller made room: key < n_keys, a free chunk)."""
    t = b.tail[key]
    if t < 0:
        c = _take_chunk(b)
        b.head[key] = c
        b.tail[key] = c
        t = c
    elif b.write[t] == b.data.shape[1]:
        c = _take_chunk(b)
        b.next[t] = c
        b.tail[key] = c
        t = c
    b.data[t, b.write[t]] = node
    b.write[t] += 1
    b.meta[_SIZE] += 1
    if key < b.meta[_LO]:
        b.meta[_LO] = key


@njit(cache=CACHE, inline="always")
def buckets_pop(b):
    """Remove and return the first node of the smallest non-empty key (-1 if the queue is empty)."""
    if b.meta[_SIZE] == 0:
        b.meta[_LO] = b.head.shape[0]
        return -1
    key = b.meta[_LO]
    while b.head[key] < 0:
        key += 1
    b.meta[_LO] = key
    c = b.head[key]
    node = b.data[c, b.read[c]]
    b.read[c] += 1
    b.meta[_SIZE] -= 1
    if b.read[c] == b.write[c]:  # the chunk is used up: the FIFO continues in the next one, if any
        nxt = b.next[c]
        b.next[c] = b.meta[_FREE]
        b.meta[_FREE] = c
        b.meta[_NFREE] += 1
        b.head[key] = nxt
        if nxt < 0:
            b.tail[key] = -1
    return node


def new_heap(nk: int, capacity: int = 1024) -> Heap:
    return Heap(
        keys=np.empty((capacity, nk), dtype=np.float64),
        ids=np.empty(capacity, dtype=np.uint64),
        meta=np.zeros(2, dtype=np.int64),
    )


def grow_heap(h: Heap, min_free: int) -> Heap:
    """A heap with the same contents and room for `min_free` more entries."""
    size = int(h.meta[_HSIZE])
    capacity = len(h.ids)
    while capacity - size < min_free:
        capacity *= 2
    out = new_heap(h.keys.shape[1], capacity)
    out.keys[:size] = h.keys[:size]
    out.ids[:size] = h.ids[:size]
    out.meta[:] = h.meta
    return out


@njit(cache=CACHE, inline="always")
def _before(a0, a1, a_id, b0, b1, b_id, nk):
    """Entry (a0, a1, a_id) orders before (b0, b1, b_id): keys first (a1, b1 only with two key
    columns), then the id, whose high half is the insertion number."""
    if a0 != b0:
        return a0 < b0
    if nk > 1 and a1 != b1:
        return a1 < b1
    return a_id < b_id


@njit(cache=CACHE, inline="always")
def heap_push(h, k0, k1, node):
    """Push `node` with keys (k0, k1) (k1 ignored with one key column)."""
    keys, ids = h.keys, h.ids
    nk = keys.shape[1]
    i = h.meta[_HSIZE]
    h.meta[_HSIZE] = i + 1
    new_id = (np.uint64(h.meta[_SEQ]) << np.uint64(32)) | np.uint64(node)
    h.meta[_SEQ] += 1
    while i > 0:
        parent = (i - 1) // 2
        if keys[parent, 0] < k0:
            break
        if keys[parent, 0] == k0:
            if nk == 1 or keys[parent, 1] < k1:
                break
            if keys[parent, 1] == k1:
                break  # an older entry with equal keys: the new one goes after it
        keys[i, 0] = keys[parent, 0]
        if nk > 1:
            keys[i, 1] = keys[parent, 1]
        ids[i] = ids[parent]
        i = parent
    keys[i, 0] = k0
    if nk > 1:
        keys[i, 1] = k1
    ids[i] = new_id


@njit(cache=CACHE, inline="always")
def heap_pop(h):
    """Remove and return the node of the smallest entry (-1 if the heap is empty)."""
    size = h.meta[_HSIZE]
    if size == 0:
        return -1
    keys, ids = h.keys, h.ids
    nk = keys.shape[1]
    node = np.int64(ids[0] & np.uint64(0xFFFFFFFF))
    size -= 1
    h.meta[_HSIZE] = size
    if size > 0:
        l0 = keys[size, 0]
        l1 = keys[size, 1] if nk > 1 else 0.0
        last_id = ids[size]
        i = 0
        while True:
            child = 2 * i + 1
            if child >= size:
                break
            right = child + 1
            c1 = keys[child, 1] if nk > 1 else 0.0
            if right < size:
                r1 = keys[right, 1] if nk > 1 else 0.0
                if _before(keys[right, 0], r1, ids[right], keys[child, 0], c1, ids[child], nk):
                    child = right
                    c1 = r1
            if _before(l0, l1, last_id, keys[child, 0], c1, ids[child], nk):
                break
            keys[i, 0] = keys[child, 0]
            if nk > 1:
                keys[i, 1] = c1
            ids[i] = ids[child]
            i = child
        keys[i, 0] = l0
        if nk > 1:
            keys[i, 1] = l1
        ids[i] = last_id
    return node
