r"""The arity-3 block of `agents.models.nlm_block3` for inference, memoised on its costly part.

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
  the triples that hold a changed pair (`_patch_q`);
* otherwise ``Q`` is computed in full (`_full_q`, the blocked products of `_gh_rows`).

Every entry of ``Q`` is computed by the same sequence of floating-point operations whichever way
it is obtained (``T`` as in `_sigmoid_t`, then two fused multiply-add chains in the same order and
one addition), so the outputs are a function of the state alone, bit for bit: they do not depend
on what was evaluated before, and a search with a learned heuristic stays deterministic. They
agree with `agents.models.nlm_block3._block3_run` to rounding (the additions of ``A'`` and ``B'``
come in another order); the tests compare the two.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from numba import njit
from torch import Tensor

from agents.models.nlm_block3 import (
    _block3_run,
    _exists_t,
    _expand_weight,
    _gh_rows,
    _own_weight,
    _pair_terms,
    _sigmoid_t,
)
from agents.models.nlm_kernels import INLINE, JIT, fill_padding, pad_lanes, pad_last
from agents.models.nlm_simd import LANES, vadd, vbcast, vfill, vfma, vgt_select, vload, vsigmoid, vstore

__all__ = ["Block3Memo"]

_FULL, _PATCH, _REUSE = 0, 1, 2


# ----------------------------------------------------------------------------- kernels
@njit(**JIT)
def _full_q(pair, wq, ct, cp, n, q):
    """``Q`` of one state in full into ``q`` (flat ``[n, n, n, C_p]``), from ``pair = (A, B, C)``."""
    dt = q.dtype
    tb = np.empty(n**3 * ct, dt)
    _sigmoid_t(pair, n, ct, tb)
    zeros = np.zeros(n * n * cp, dt)
    gh = np.empty(n * n * 2 * cp, dt)
    c2p = 2 * cp
    for i in range(n):
        for u in range(n):
            for v0 in range(0, n, 4):
                _gh_rows(tb, wq, (zeros, zeros), ct, cp, n, i, u, v0, min(4, n - v0), gh)
        for j in range(n):
            for k in range(n):
                out = ((i * n + j) * n + k) * cp
                for ob in range(0, cp, LANES):
                    g, h = vload(gh, (j * n + k) * c2p + ob), vload(gh, (k * n + j) * c2p + cp + ob)
                    vstore(q, out + ob, vadd(g, h))


@njit(**INLINE)
def _t_row(pair, n, ct, x, y, z, tt, off):
    """``T[x, y, z]`` (``ct`` channels) into ``tt[off:]``, computed exactly as `_sigmoid_t` does."""
    pa, pb, pc = pair
    a_off, b_off, c_off = (y * n + z) * ct, (x * n + z) * ct, (x * n + y) * ct
    for c0 in range(0, ct, LANES):
        v = vadd(vadd(vload(pa, a_off + c0), vload(pb, b_off + c0)), vload(pc, c_off + c0))
        vstore(tt, off + c0, vsigmoid(v))


@njit(**INLINE)
def _q_entry(pair, wq, ct, cp, n, i, j, k, tt, q):
    """``Q[i, j, k]``: the ``G`` row ``(j, k)`` and the ``H`` row ``(k, j)`` of `_gh_rows` for first
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
                mx, mn = vfill(q, -np.inf), vfill(q, np.inf)
                for k in range(n):
                    if exclude_self and (k == i or k == j):  # noqa: SIM109 (numba)
                        continue
                    v = vadd(vload(q, ((i * n + j) * n + k) * cp + ob), vload(pa, (j * n + k) * cp + ob))
                    v = vadd(v, vload(pb, (i * n + k) * cp + ob))
                    mx, mn = vgt_select(v, mx, v, mx), vgt_select(mn, v, v, mn)
                post = vload(pc, (i * n + j) * cp + ob)
                vstore(ex, out + ob, vsigmoid(vadd(mx, post)))
                vstore(fa, out + ob, vsigmoid(vadd(mn, post)))


@njit(**INLINE)
def _copy_t(src, dst, b, objs, n, into_outs):
    """Copy ∃T or ∀T of batch row ``b`` between the padded ``dst`` (``[B, N, N, C_t]``) and the
    compact ``src`` (``[n, n, C_t]`` flat): into ``dst`` when ``into_outs``, else out of it."""
    big_n, ct = dst.shape[1], dst.shape[3]
    for i in range(n):
        for j in range(n):
            out, mem = ((b * big_n + objs[i]) * big_n + objs[j]) * ct, (i * n + j) * ct
            for c0 in range(0, ct, LANES):
                if into_outs:
                    vstore(dst, out + c0, vload(src, mem + c0))
                else:
                    vstore(src, mem + c0, vload(dst, out + c0))


@njit(**JIT)
def _memo_row(xs, weights, wq, b, objs, n, exclude_self, mode, pairs, memo, outs):
    """One batch row: ``memo = (Q, ∃T, ∀T)`` of its ``X`` reused, or computed (``Q`` patched on
    ``pairs`` or in full, by ``mode``), then the outputs (``outs``: ∃T, ∀T, scratch arguments,
    ∃Y, ∀Y; padded ``[B, N, N, C]``). ∃T and ∀T depend on ``X`` alone, like ``Q``."""
    x, x2 = xs
    w0, b0, w1, b1 = weights
    q, ex_t, fa_t = memo
    big_n = x.shape[1]
    ct, cp = b0.shape[0], b1.shape[0]
    dt = b0.dtype
    for k in range(6):
        fill_padding(outs[k], b, n, -1.0 if k in (2, 3) else 0.0)
    if n == 0:
        return
    if mode == _REUSE:
        _copy_t(ex_t, outs[0], b, objs, n, True)
        _copy_t(fa_t, outs[1], b, objs, n, True)
    else:
        pair = (np.empty(n * n * ct, dt), np.empty(n * n * ct, dt), np.empty(n * n * ct, dt))
        _pair_terms(x, w0, b0, b, objs, n, pair)
        _exists_t(pair, b, objs, n, big_n, exclude_self, outs[:4])
        _copy_t(ex_t, outs[0], b, objs, n, False)
        _copy_t(fa_t, outs[1], b, objs, n, False)
        if mode == _FULL:
            _full_q(pair, wq, ct, cp, n, q)
        else:
            _patch_q(pair, wq, ct, cp, n, pairs, q)
    pair2 = (np.empty(n * n * cp, dt), np.empty(n * n * cp, dt), np.empty(n * n * cp, dt))
    _pair_terms(x2, w1, b1, b, objs, n, pair2)
    _exists_p(q, pair2, b, objs, n, big_n, exclude_self, outs[4], outs[5])


# ----------------------------------------------------------------------------- memo
class Block3Memo:
    """`agents.models.nlm_block3`'s block without gradients, ``Q`` memoised per first-layer input
    (module docstring). One memo serves one set of weights, whose layouts it keeps from its first
    call: `agents.models.nlm_infer.InferencePlan` owns one and is rebuilt when the weights change.

    Args:
        max_entries: most entries kept (a search's successors mostly share or nearly share the
            ``X`` of states evaluated a few calls before).
        budget_bytes: most bytes kept (``Q`` is ``4 n³ C_p`` bytes in float32: 0.9 MB on 30
            objects, 6.9 MB on 60).
        candidates: how many of the most recent entries are compared with a new ``X`` to find one
            to patch.

    The buffers of evicted entries are reused for new ones: fresh memory of this size costs a page
    fault per 4 KiB on first touch, about as much as computing ``Q`` by a patch.
    """

    def __init__(self, max_entries: int = 64, budget_bytes: int = 256 << 20, candidates: int = 8):
        self.max_entries, self.budget_bytes, self.candidates = max_entries, budget_bytes, candidates
        self._spare: list[np.ndarray] = []  # Q buffers of evicted entries (rows are computed one
        # after the other, so an evicted entry's last reader has finished), free for reuse
        self._entries: OrderedDict[bytes, tuple[np.ndarray, ...]] = OrderedDict()  # X, Q, ∃T, ∀T
        self._bytes = 0
        self._layouts: tuple | None = None  # the kernels' weight layouts, built on the first call
        self.counts = {"reused": 0, "patched": 0, "full": 0}
        """How each row's ``Q`` was obtained (for benchmarks and tests)."""

    def __len__(self) -> int:
        return len(self._entries)

    def _nearest(self, xc: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The ``Q`` of the most recent entries' closest ``X`` (fewest differing entries), copied,
        and the object pairs where the two differ (with their transposes); None when computing
        ``Q`` in full is cheaper."""
        best: tuple[int, np.ndarray, np.ndarray] | None = None
        for seen, (x_old, q_old, _, _) in enumerate(reversed(self._entries.values())):
            if seen == self.candidates:
                break
            if x_old.shape == xc.shape:
                count = np.count_nonzero(x_old != xc)
                if best is None or count < best[0]:
                    best = (count, x_old, q_old)
        if best is None:
            return None
        changed = (best[1] != xc).any(axis=-1)
        changed |= changed.T
        pairs = np.argwhere(changed)
        # a patched triple computes six T rows where a full Q computes one per triple, and each
        # changed pair has 3 n triples: patching pays while 18 n |pairs| < n³
        n = xc.shape[0]
        if 18 * n * len(pairs) >= n**3:
            return None
        q = self._buffer(best[2].size, best[2].dtype)
        np.copyto(q, best[2])
        return q, pairs

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
        self,
        x: Tensor,
        w0: Tensor,
        b0: Tensor,
        x2: Tensor | None,
        w1: Tensor | None,
        b1: Tensor | None,
        mask: Tensor,
        exclude_self: bool,
    ) -> tuple[np.ndarray | None, ...]:
        """``(∃T, ∀T, ∃Y, ∀Y)`` as arrays, like `agents.models.nlm_block3.block3` (its arguments)."""
        if x2 is None or w1 is None or b1 is None:  # no second layer: nothing worth memoising
            ex_t, fa_t, _, _ = _block3_run(x, w0, b0, None, None, None, mask, exclude_self, False)[0]
            return ex_t.numpy(), fa_t.numpy(), None, None
        xn, x2n = x.detach().contiguous().numpy(), x2.detach().contiguous().numpy()
        nb, big_n, _, cx = xn.shape
        ct, cp, cx2 = w0.shape[0], w1.shape[0], x2n.shape[3]
        ct8, cp8 = pad_lanes(ct), pad_lanes(cp)
        if self._layouts is None:  # the weights are fixed for the memo's lifetime (class docstring)
            self._layouts = (
                (
                    _expand_weight(w0.detach().numpy(), cx)[0],
                    pad_last(b0.detach().numpy(), ct8),
                    _expand_weight(w1.detach().numpy(), cx2)[0],
                    pad_last(b1.detach().numpy(), cp8),
                ),
                _own_weight(w1.detach().numpy(), cx2, ct)[0],
            )
        weights, wq = self._layouts
        mk = mask.bool().numpy()
        dt = xn.dtype
        outs = tuple(np.empty((nb, big_n, big_n, ct8 if k < 4 else cp8), dt) for k in range(6))
        no_pairs = np.empty((0, 2), np.int64)
        for b in range(nb):
            objs = np.flatnonzero(mk[b]).astype(np.int64)
            n = objs.size
            xc = xn[b] if n == big_n else np.ascontiguousarray(xn[b][np.ix_(objs, objs)])
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
                    mode, q = _FULL, self._buffer(n**3 * cp8, dt)
                    self.counts["full"] += 1
                else:
                    (q, pairs), mode = near, _PATCH
                    self.counts["patched"] += 1
                memo = (q, np.empty(n * n * ct8, dt), np.empty(n * n * ct8, dt))
            # one thread: the second core computes the search's bounds meanwhile (agents.learned_heuristic)
            _memo_row((xn, x2n), weights, wq, b, objs, n, bool(exclude_self), mode, pairs, memo, outs)
            if entry is None:
                self._store(key, (xc.copy(), *memo))
        return outs[0][..., :ct], outs[1][..., :ct], outs[4][..., :cp], outs[5][..., :cp]
