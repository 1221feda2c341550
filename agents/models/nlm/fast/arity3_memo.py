r"""The arity-3 block of `agents.models.nlm.fast.arity3_block` for inference, memoised on its costly part.

In that module's notation, the second layer's pre-activation that the block reduces over ``k`` is

.. math::
    P[i,j,k] = Q[i,j,k] + A'[j,k] + B'[i,k],
    \qquad
    Q[i,j,k] = T[i,j,k] W_0 + T[i,k,j] W_1 + T[j,i,k] W_2 + T[k,i,j] W_3 + T[j,k,i] W_4 + T[k,j,i] W_5

``Q`` costs ``6 C_t C_p`` multiply-adds per object triple (``n³`` triples: nearly all of the
block's time), and it is a function of ``X``, the first layer's arity-2 input, alone (``T`` is
built from ``X``'s expansions); ``A'``, ``B'`` and ``C'`` are pairwise terms of the second layer's
arity-2 input, which depends on every input arity and is recomputed every time.

Why memoise: a search evaluates the successors of one expansion, and each differs from its parent
by one action. An action that changes no arity-2 atom (ferry's sail, gripper's move, every visitall
move, blocksworld's pick-up and put-down) leaves ``X`` as it was, and one that changes ``d`` of
them changes ``T`` only on triples holding both objects of a changed pair, so ``Q`` only on at most
``3 n`` triples per changed ordered pair. `Block3Memo` keeps ``Q`` (and the ∃ / ∀ of ``T``, also
functions of ``X`` alone) for recent ``X`` (least recently used first out, within an entry count
and a byte budget) and, for the ``X`` of a new state:

* an entry with the same ``X``: its ``Q`` is reused as it is;
* a recent entry whose ``X`` differs on few object pairs: its ``Q`` is copied and recomputed on
  the triples that hold a changed pair (`_patch_q`), its ∃T / ∀T on the rows ``(i, j)`` where
  ``i`` or ``j`` belongs to a changed pair (`_exists_t_rows`);
* otherwise ``Q`` is computed in full (`_full_q`, the blocked products of `gh_rows`).

Every entry of ``Q`` is computed by the same sequence of floating-point operations whichever way
it is obtained (``T`` as in `sigmoid_t`, then two fused multiply-add chains in the same order and
one addition), and so is every row of ∃T / ∀T (`_row_max_min`), so the outputs are a function of
the state alone, bit for bit: they do not depend on what was evaluated before, and a search
with a learned heuristic stays deterministic. They agree with
`agents.models.nlm.fast.arity3_block.block3_forward` to rounding (the additions of ``A'`` and
``B'`` come in another order); the tests compare the two.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from numba import njit

from agents.errors import AgentError
from agents.models.nlm.fast.arity3_block import (
    expand_weight,
    gh_rows,
    own_weight,
    pair_terms,
    sigmoid_t,
)
from agents.models.nlm.fast.arrays import pad_lanes, pad_last
from agents.models.nlm.fast.jit import INLINE, JIT, fill_padding
from agents.models.nlm.fast.simd import LANES, vadd, vbcast, vfill, vfma, vgt_select, vload, vsigmoid, vstore

__all__ = ["Block3Memo"]

_FULL, _PATCH, _REUSE = 0, 1, 2


# ----------------------------------------------------------------------------- kernels
@njit(**JIT)
def _full_q(pair, wq, ct, cp, n, q):
    """``Q`` of one state in full into ``q`` (flat ``[n, n, n, C_p]``), from ``pair = (A, B, C)``."""
    dt = q.dtype
    tb = np.empty(n**3 * ct, dt)
    sigmoid_t(pair, n, ct, tb)
    zeros = np.zeros(n * n * cp, dt)
    gh = np.empty(n * n * 2 * cp, dt)
    c2p = 2 * cp
    for i in range(n):
        for u in range(n):
            for v0 in range(0, n, 4):
                gh_rows(tb, wq, (zeros, zeros), ct, cp, n, i, u, v0, min(4, n - v0), gh)
        for j in range(n):
            for k in range(n):
                out = ((i * n + j) * n + k) * cp
                for ob in range(0, cp, LANES):
                    g, h = vload(gh, (j * n + k) * c2p + ob), vload(gh, (k * n + j) * c2p + cp + ob)
                    vstore(q, out + ob, vadd(g, h))


@njit(**INLINE)
def _t_row(pair, n, ct, x, y, z, tt, off):
    """``T[x, y, z]`` (``ct`` channels) into ``tt[off:]``, computed exactly as `sigmoid_t` does."""
    pa, pb, pc = pair
    a_off, b_off, c_off = (y * n + z) * ct, (x * n + z) * ct, (x * n + y) * ct
    for c0 in range(0, ct, LANES):
        v = vadd(vadd(vload(pa, a_off + c0), vload(pb, b_off + c0)), vload(pc, c_off + c0))
        vstore(tt, off + c0, vsigmoid(v))


@njit(**INLINE)
def _q_entry(pair, wq, ct, cp, n, i, j, k, tt, q):
    """``Q[i, j, k]``: the ``G`` row ``(j, k)`` and the ``H`` row ``(k, j)`` of `gh_rows` for first
    object ``i`` (same products in the same order, from zero), then their sum."""
    c2p = 2 * cp
    _t_row(pair, n, ct, i, j, k, tt, 0)  # G: T[i, u, v], T[u, i, v], T[u, v, i] with (u, v) = (j, k)
    _t_row(pair, n, ct, j, i, k, tt, ct)
    _t_row(pair, n, ct, j, k, i, tt, 2 * ct)
    _t_row(pair, n, ct, i, k, j, tt, 3 * ct)  # H: the same with (u, v) = (k, j)
    _t_row(pair, n, ct, k, i, j, tt, 4 * ct)
    _t_row(pair, n, ct, k, j, i, tt, 5 * ct)
    out = ((i * n + j) * n + k) * cp
    for ob in range(0, cp, LANES):
        g = h = vfill(q, 0.0)
        for s in range(3):
            for c2 in range(ct):
                w_off = (s * ct + c2) * c2p + ob
                g = vfma(vbcast(tt, s * ct + c2), vload(wq, w_off), g)
                h = vfma(vbcast(tt, (3 + s) * ct + c2), vload(wq, w_off + cp), h)
        vstore(q, out + ob, vadd(g, h))


@njit(**JIT)
def _patch_q(pair, wq, ct, cp, n, pairs, q):
    """Recompute ``q`` on every triple with an ordered pair of ``pairs`` (``[m, 2]``, closed under
    swapping) in positions (1, 2), (1, 3) or (2, 3); the other entries are kept."""
    tt = np.empty(6 * ct, q.dtype)
    for p in range(pairs.shape[0]):
        a, b = pairs[p, 0], pairs[p, 1]
        for m in range(n):
            _q_entry(pair, wq, ct, cp, n, a, b, m, tt, q)
            _q_entry(pair, wq, ct, cp, n, a, m, b, tt, q)
            _q_entry(pair, wq, ct, cp, n, m, a, b, tt, q)


@njit(**INLINE)
def _row_max_min(pa, pb, q, with_q, i, j, n, ch, c0, exclude_self):
    """∃ / ∀ pre-activations of row ``(i, j)``, channels ``c0 .. c0 + 7``: max and min over the
    valid ``k`` (``k`` not ``i`` or ``j`` with ``exclude_self``) of ``(Q[i, j, k] +) A[j, k] +
    B[i, k]`` (compact ``[n, n, ch]`` pair terms, ``Q`` ``[n, n, n, ch]``, read when ``with_q``);
    -inf / inf when no ``k`` is valid. Offsets are hoisted out of the loop and the exclusion is
    one comparison with two precomputed indices (measured 1.5-2.5x faster than recomputing them
    per ``k``, and faster than two accumulators or branch-free split ranges)."""
    lo, hi = (min(i, j), max(i, j)) if exclude_self else (n, n)
    a_off, b_off, q_off = j * n * ch + c0, i * n * ch + c0, (i * n + j) * n * ch + c0
    mx, mn = vfill(pa, -np.inf), vfill(pa, np.inf)
    for k in range(n):
        if k == lo or k == hi:  # noqa: SIM109 (numba)
            continue
        o = k * ch
        if with_q:
            v = vadd(vadd(vload(q, q_off + o), vload(pa, a_off + o)), vload(pb, b_off + o))
        else:
            v = vadd(vload(pa, a_off + o), vload(pb, b_off + o))
        mx, mn = vgt_select(v, mx, v, mx), vgt_select(mn, v, v, mn)
    return mx, mn


@njit(**JIT)
def _exists_t_rows(pair, n, exclude_self, touched, ex, fa):
    """∃ / ∀ over valid ``k`` of ``T[i, j, k]``, ``σ(max_k (A[j, k] + B[i, k]) + C[i, j])`` and
    the min, into the compact ``[n, n, C_t]`` ``ex`` and ``fa``, on the rows ``(i, j)`` with ``i``
    or ``j`` touched (the others are kept): when ``X`` changed only on pairs of touched objects,
    ``A``, ``B`` and ``C`` changed only there, and so only these rows."""
    pa, pb, pc = pair
    ct = ex.size // (n * n)
    for i in range(n):
        for j in range(n):
            if not (touched[i] or touched[j]):
                continue
            out = (i * n + j) * ct
            for c0 in range(0, ct, LANES):
                mx, mn = _row_max_min(pa, pb, pa, False, i, j, n, ct, c0, exclude_self)
                post = vload(pc, out + c0)
                vstore(ex, out + c0, vsigmoid(vadd(mx, post)))
                vstore(fa, out + c0, vsigmoid(vadd(mn, post)))


@njit(**JIT)
def _exists_p(q, pair2, b, objs, n, big_n, exclude_self, ex, fa):
    """∃ / ∀ over valid ``k`` of ``Y[i, j, k]``: ``σ(max_k (Q[i, j, k] + A'[j, k] + B'[i, k]) +
    C'[i, j])`` and the min, into the padded ``[B, N, N, C_p]`` ``ex`` and ``fa``."""
    pa, pb, pc = pair2
    cp = ex.shape[3]
    for i in range(n):
        for j in range(n):
            out = ((b * big_n + objs[i]) * big_n + objs[j]) * cp
            for ob in range(0, cp, LANES):
                mx, mn = _row_max_min(pa, pb, q, True, i, j, n, cp, ob, exclude_self)
                post = vload(pc, (i * n + j) * cp + ob)
                vstore(ex, out + ob, vsigmoid(vadd(mx, post)))
                vstore(fa, out + ob, vsigmoid(vadd(mn, post)))


@njit(**INLINE)
def _copy_t(src, dst, b, objs, n):
    """Copy the compact ``src`` (``[n, n, C_t]`` flat: ∃T or ∀T of batch row ``b``) into the padded
    ``dst`` (``[B, N, N, C_t]``)."""
    big_n, ct = dst.shape[1], dst.shape[3]
    for i in range(n):
        for j in range(n):
            out, mem = ((b * big_n + objs[i]) * big_n + objs[j]) * ct, (i * n + j) * ct
            for c0 in range(0, ct, LANES):
                vstore(dst, out + c0, vload(src, mem + c0))


@njit(**JIT)
def _memo_row(xs, weights, wq, b, objs, n, exclude_self, mode, pairs, memo, outs):
    """One batch row: ``memo = (Q, ∃T, ∀T)`` of its ``X`` reused, or computed by ``mode``: in full,
    or patched (``Q``, ∃T and ∀T hold a copy of a near entry's, which differs on the ordered object
    ``pairs``); then the outputs (``outs``: ∃T, ∀T, ∃Y, ∀Y, padded ``[B, N, N, C]``). ∃T and ∀T
    depend on ``X`` alone, like ``Q``."""
    x, x2 = xs
    w0, b0, w1, b1 = weights
    q, ex_t, fa_t = memo
    big_n = x.shape[1]
    ct, cp = b0.shape[0], b1.shape[0]
    dt = b0.dtype
    for k in range(4):
        fill_padding(outs[k], b, n, 0.0)
    if n == 0:
        return
    if mode != _REUSE:
        pair = (np.empty(n * n * ct, dt), np.empty(n * n * ct, dt), np.empty(n * n * ct, dt))
        pair_terms(x, w0, b0, b, objs, n, pair)
        touched = np.full(n, mode == _FULL)
        for p in range(pairs.shape[0]):
            touched[pairs[p, 0]] = True
        _exists_t_rows(pair, n, exclude_self, touched, ex_t, fa_t)
        if mode == _FULL:
            _full_q(pair, wq, ct, cp, n, q)
        else:
            _patch_q(pair, wq, ct, cp, n, pairs, q)
    _copy_t(ex_t, outs[0], b, objs, n)
    _copy_t(fa_t, outs[1], b, objs, n)
    pair2 = (np.empty(n * n * cp, dt), np.empty(n * n * cp, dt), np.empty(n * n * cp, dt))
    pair_terms(x2, w1, b1, b, objs, n, pair2)
    _exists_p(q, pair2, b, objs, n, big_n, exclude_self, outs[2], outs[3])


@njit(**JIT)
def _t_only_row(x, w0, b0, b, objs, n, exclude_self, outs):
    """∃T and ∀T of batch row ``b`` alone (no second layer, so no ``Q``) into ``outs``."""
    ct = b0.shape[0]
    dt = b0.dtype
    for k in range(2):
        fill_padding(outs[k], b, n, 0.0)
    if n == 0:
        return
    pair = (np.empty(n * n * ct, dt), np.empty(n * n * ct, dt), np.empty(n * n * ct, dt))
    pair_terms(x, w0, b0, b, objs, n, pair)
    ex_t, fa_t = np.empty(n * n * ct, dt), np.empty(n * n * ct, dt)
    _exists_t_rows(pair, n, exclude_self, np.ones(n, np.bool_), ex_t, fa_t)
    _copy_t(ex_t, outs[0], b, objs, n)
    _copy_t(fa_t, outs[1], b, objs, n)


# ----------------------------------------------------------------------------- memo
class Block3Memo:
    """`agents.models.nlm.fast.arity3_block`'s block without gradients, ``Q`` memoised per first-layer input
    (module docstring), for one set of weights: `agents.models.nlm.fast.inference.InferencePlan` owns one
    and is rebuilt when the weights change.

    Args:
        w0, b0: the first layer's arity-3 linear map (``[C_t, 6 C_x]``, built from expansions of
            ``X`` only).
        w1, b1: the second layer's (``[C_p, 6 (C_x2 + C_t)]``), or None when the second layer has
            no arity-3 output: then only ∃T and ∀T are computed (no ``Q``, nothing memoised).
        max_entries: most entries kept (a search's successors mostly share or nearly share the
            ``X`` of states evaluated a few calls before).
        budget_bytes: most bytes kept (``Q`` is ``4 n³ C_p`` bytes in float32: 0.9 MB on 30
            objects, 6.9 MB on 60).
        candidates: how many of the most recent entries are compared with a new ``X`` to find one
            to patch.

    The buffers of evicted entries are reused for new ones: fresh memory of this size costs a page
    fault per 4 KiB on first touch, about as much as computing ``Q`` by a patch.
    """

    def __init__(
        self,
        w0: np.ndarray,
        b0: np.ndarray,
        w1: np.ndarray | None = None,
        b1: np.ndarray | None = None,
        max_entries: int = 64,
        budget_bytes: int = 256 << 20,
        candidates: int = 8,
    ):
        self.max_entries, self.budget_bytes, self.candidates = max_entries, budget_bytes, candidates
        self.ct, self.cx = w0.shape[0], w0.shape[1] // 6
        self.w0, self.b0 = expand_weight(w0, self.cx)[0], pad_last(b0, pad_lanes(self.ct))
        self.cp = 0 if w1 is None else w1.shape[0]
        if w1 is not None and b1 is not None:
            self.cx2 = w1.shape[1] // 6 - self.ct
            self.w1, self.b1 = expand_weight(w1, self.cx2)[0], pad_last(b1, pad_lanes(self.cp))
            self.wq = own_weight(w1, self.cx2, self.ct)[0]
        self._spare: list[np.ndarray] = []  # Q buffers of evicted entries (rows are computed one
        # after the other, so an evicted entry's last reader has finished), free for reuse
        self._entries: OrderedDict[bytes, tuple[np.ndarray, ...]] = OrderedDict()  # X, Q, ∃T, ∀T
        self._bytes = 0
        self.counts = {"reused": 0, "patched": 0, "full": 0}
        """How each row's ``Q`` was obtained (for benchmarks and tests)."""

    def __len__(self) -> int:
        return len(self._entries)

    def _nearest(self, xc: np.ndarray) -> tuple[tuple[np.ndarray, ...], np.ndarray] | None:
        """Copies of ``(Q, ∃T, ∀T)`` of the most recent entries' closest ``X`` (fewest differing
        entries), and the ordered object pairs where the two differ (closed under swapping); None
        when computing them in full is cheaper."""
        best: tuple[int, np.ndarray, tuple[np.ndarray, ...]] | None = None
        for seen, entry in enumerate(reversed(self._entries.values())):
            if seen == self.candidates:
                break
            if entry[0].shape == xc.shape:
                diff = entry[0] != xc
                count = np.count_nonzero(diff)
                if best is None or count < best[0]:
                    best = (count, diff, entry)
        if best is None:
            return None
        _, diff, (_, q_old, ex_t, fa_t) = best
        changed = diff.any(axis=-1)
        changed |= changed.T
        pairs = np.argwhere(changed)
        # a patched triple computes six T rows where a full Q computes one per triple, and each
        # changed pair has 3 n triples: patching pays while 18 n |pairs| < n³
        n = xc.shape[0]
        if 18 * n * len(pairs) >= n**3:
            return None
        q = self._buffer(q_old.size, q_old.dtype)
        np.copyto(q, q_old)
        return (q, ex_t.copy(), fa_t.copy()), pairs

    def _buffer(self, size: int, dtype: np.dtype) -> np.ndarray:
        """A ``Q`` buffer: a spare one of this size and type, else a new one."""
        for k, spare in enumerate(self._spare):
            if spare.size == size and spare.dtype == dtype:
                return self._spare.pop(k)
        return np.empty(size, dtype)

    def _store(self, key: bytes, entry: tuple[np.ndarray, ...]) -> None:
        self._entries[key] = entry
        self._bytes += sum(a.nbytes for a in entry)
        while len(self._entries) > 1 and (
            self._bytes > self.budget_bytes or len(self._entries) > self.max_entries
        ):
            _, old = self._entries.popitem(last=False)
            self._bytes -= sum(a.nbytes for a in old)
            self._spare = [old[1], *self._spare[:3]]

    def __call__(
        self, x: np.ndarray, x2: np.ndarray | None, mask: np.ndarray, exclude_self: bool
    ) -> tuple[np.ndarray, ...]:
        """``(∃T, ∀T)``, and ``(∃Y, ∀Y)`` with a second layer: channel-padded ``[B, N, N, C8]``
        arrays (padded lanes hold values that zero weights ignore), from ``x`` (``[B, N, N, C_x]``),
        ``x2`` (``[B, N, N, C_x2]``, the second layer's arity-2 input; None without a second
        layer) and the bool ``[B, N]`` mask of real objects."""
        x = np.ascontiguousarray(x)
        nb, big_n, _, _ = x.shape
        dt = self.b0.dtype
        ct8, cp8 = pad_lanes(self.ct), pad_lanes(self.cp)
        if (x2 is None) != (self.cp == 0):
            raise AgentError("x2 is the second layer's input: give it exactly when w1 was given")
        outs = tuple(
            np.empty((nb, big_n, big_n, ct8 if k < 2 else cp8), dt) for k in range(2 if x2 is None else 4)
        )
        if x2 is None:
            for b in range(nb):
                objs = np.flatnonzero(mask[b]).astype(np.int64)
                _t_only_row(x, self.w0, self.b0, b, objs, objs.size, bool(exclude_self), outs)
            return outs
        x2 = np.ascontiguousarray(x2)
        weights = (self.w0, self.b0, self.w1, self.b1)
        no_pairs = np.empty((0, 2), np.int64)
        for b in range(nb):
            objs = np.flatnonzero(mask[b]).astype(np.int64)
            n = objs.size
            xc = x[b] if n == big_n else np.ascontiguousarray(x[b][np.ix_(objs, objs)])
            key = xc.tobytes() + n.to_bytes(4, "little") + bytes([bool(exclude_self)])
            entry = self._entries.get(key)
            pairs = no_pairs
            if entry is not None:
                mode, memo = _REUSE, entry[1:]
                self._entries.move_to_end(key)
                self.counts["reused"] += 1
            else:
                near = self._nearest(xc)
                if near is None:
                    mode = _FULL
                    t_size = n * n * ct8
                    memo = (self._buffer(n**3 * cp8, dt), np.empty(t_size, dt), np.empty(t_size, dt))
                    self.counts["full"] += 1
                else:
                    (memo, pairs), mode = near, _PATCH
                    self.counts["patched"] += 1
            # one thread: the second core computes the search's bounds meanwhile (agents.learned_heuristic)
            _memo_row((x, x2), weights, self.wq, b, objs, n, bool(exclude_self), mode, pairs, memo, outs)
            if entry is None:
                self._store(key, (xc.copy(), *memo))
        return outs
