r"""Fused CPU kernels for the arity-3 part of an NLM whose inputs have arity <= 2.

With inputs of arity <= 2, the first layer's arity-3 output is built from expansions only, so it
is a sigmoid of three pairwise terms, and (with depth 5) the next layer only *reduces* its own
arity-3 output:

.. math::
    T[i,j,k] = \sigma(A[j,k] + B[i,k] + C[i,j]),
    \qquad
    P[i,j,k] = \sum_{\pi \in S_3} T[\pi^{-1}(i,j,k)]\, W_\pi + A'[j,k] + B'[i,k]

The network needs only, for each ``(i, j)``, the max and min over the valid ``k`` of
``A[j,k] + B[i,k]`` (the ∃/∀ of ``T`` before the monotone ``σ(· + C[i,j])``) and of ``P``.
`Block3` computes them with compiled loops that keep ``P`` in registers: no
``[B, N, N, N, ·]`` tensor enters autograd (only ``T`` is kept for the backward pass), and the
backward pass visits only the selected ``(i, j, k*)`` entries. The generic PyTorch path of
`agents.models.nlm` computes the same function (the tests compare the two).

The kernels are serial and release the GIL; `Block3` splits the batch over
``torch.get_num_threads()`` Python threads (no second OpenMP runtime beside PyTorch's).

Shapes (``C_t`` channels of ``T``, ``C_p`` of ``P``): ``A, B, C``: ``[B, N, N, C_t]`` indexed
``[b, j, k]``, ``[b, i, k]``, ``[b, i, j]``; ``W``: ``[6, C_t, C_p]`` (``W[p]`` belongs to
``itertools.permutations(range(3))[p]``); ``A', B'``: ``[B, N, N, C_p]``; ``mask``: ``[B, N]``.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from numba import njit
from torch import Tensor

__all__ = ["Block3"]

# The permuted view of NLM maps out[o_0, o_1, o_2] <- in[s_0, s_1, s_2] with s[perm[d]] = o_d;
# _SRC[p, e] is the d with perm[d] == e, i.e. which of (i, j, k) is the e-th source index.
_SRC = np.array([[perm.index(e) for e in range(3)] for perm in itertools.permutations(range(3))], np.int64)
_FM = {"nsz", "arcp", "contract", "afn", "reassoc"}  # fastmath without nnan/ninf: we use ±inf
_T_CHUNK = 1 << 22  # entries of T computed at once when T is not kept for the backward pass


@njit(cache=True, fastmath=_FM, inline="always")
def _pick(e, i, j, k):
    return i if e == 0 else (j if e == 1 else k)


@njit(cache=True, fastmath=_FM, inline="always")
def _gemm8(tt, wq, pre, r, c0, two):
    """``pre[r(+1), c0:c0+8] += tt[r(+1)] @ wq[:, c0:c0+8]`` (one or two rows, sums in registers)."""
    x0, x1, x2, x3 = pre[r, c0], pre[r, c0 + 1], pre[r, c0 + 2], pre[r, c0 + 3]
    x4, x5, x6, x7 = pre[r, c0 + 4], pre[r, c0 + 5], pre[r, c0 + 6], pre[r, c0 + 7]
    r2 = r + 1 if two else r
    y0, y1, y2, y3 = pre[r2, c0], pre[r2, c0 + 1], pre[r2, c0 + 2], pre[r2, c0 + 3]
    y4, y5, y6, y7 = pre[r2, c0 + 4], pre[r2, c0 + 5], pre[r2, c0 + 6], pre[r2, c0 + 7]
    for q in range(tt.shape[1]):
        u, v = tt[r, q], tt[r2, q]
        w0, w1, w2, w3 = wq[q, c0], wq[q, c0 + 1], wq[q, c0 + 2], wq[q, c0 + 3]
        w4, w5, w6, w7 = wq[q, c0 + 4], wq[q, c0 + 5], wq[q, c0 + 6], wq[q, c0 + 7]
        x0 += u * w0
        x1 += u * w1
        x2 += u * w2
        x3 += u * w3
        x4 += u * w4
        x5 += u * w5
        x6 += u * w6
        x7 += u * w7
        y0 += v * w0
        y1 += v * w1
        y2 += v * w2
        y3 += v * w3
        y4 += v * w4
        y5 += v * w5
        y6 += v * w6
        y7 += v * w7
    pre[r, c0], pre[r, c0 + 1], pre[r, c0 + 2], pre[r, c0 + 3] = x0, x1, x2, x3
    pre[r, c0 + 4], pre[r, c0 + 5], pre[r, c0 + 6], pre[r, c0 + 7] = x4, x5, x6, x7
    if two:
        pre[r2, c0], pre[r2, c0 + 1], pre[r2, c0 + 2], pre[r2, c0 + 3] = y0, y1, y2, y3
        pre[r2, c0 + 4], pre[r2, c0 + 5], pre[r2, c0 + 6], pre[r2, c0 + 7] = y4, y5, y6, y7


@njit(cache=True, fastmath=_FM, nogil=True)
def _forward(a, bb, t, wq, a2, b2, mask, exclude_self, with_p, m0x, m0n, i0x, i0n, m1x, m1n, i1x, i1n):
    """Max/min (and arg) over valid ``k``; ``t``: ``T``; ``wq[p * C_t + c2, ch] = W[p, c2, ch]``
    with ``C_p`` (``wq.shape[1]``) a multiple of 8. An empty row gets ``-inf`` / ``inf`` and -1."""
    nb, n, _, ct = a.shape
    cp = wq.shape[1]
    tt = np.empty((n, 6 * ct), dtype=a.dtype)  # row q: the 6 permuted rows of T for k = ks[q]
    pre = np.empty((n, cp), dtype=a.dtype)
    ks = np.empty(n, dtype=np.int64)
    for b in range(nb):
        for i in range(n):
            for j in range(n):
                nk = 0
                for k in range(n):
                    if mask[b, k] and not (exclude_self and (k == i or k == j)):  # noqa: SIM109 (numba)
                        ks[nk] = k
                        nk += 1
                for ch in range(ct):
                    mx, ix, mn, im = -np.inf, -1, np.inf, -1
                    for q in range(nk):
                        k = ks[q]
                        v = a[b, j, k, ch] + bb[b, i, k, ch]
                        if v > mx:
                            mx, ix = v, k
                        if v < mn:
                            mn, im = v, k
                    m0x[b, i, j, ch], i0x[b, i, j, ch] = mx, ix
                    m0n[b, i, j, ch], i0n[b, i, j, ch] = mn, im
                if not with_p:
                    continue
                for q in range(nk):
                    k = ks[q]
                    for p in range(6):
                        s0 = _pick(_SRC[p, 0], i, j, k)
                        s1 = _pick(_SRC[p, 1], i, j, k)
                        s2 = _pick(_SRC[p, 2], i, j, k)
                        for c2 in range(ct):
                            tt[q, p * ct + c2] = t[b, s0, s1, s2, c2]
                    for ch in range(cp):
                        pre[q, ch] = a2[b, j, k, ch] + b2[b, i, k, ch]
                for c0 in range(0, cp, 8):
                    for q in range(0, nk, 2):
                        _gemm8(tt, wq, pre, q, c0, q + 1 < nk)
                for ch in range(cp):
                    mx, ix, mn, im = -np.inf, -1, np.inf, -1
                    for q in range(nk):
                        v = pre[q, ch]
                        if v > mx:
                            mx, ix = v, ks[q]
                        if v < mn:
                            mn, im = v, ks[q]
                    m1x[b, i, j, ch], i1x[b, i, j, ch] = mx, ix
                    m1n[b, i, j, ch], i1n[b, i, j, ch] = mn, im


@njit(cache=True, fastmath=_FM, nogil=True)
def _backward(t, wt, i0x, i0n, i1x, i1n, g0x, g0n, g1x, g1n, with_p, da, db, dc, da2, db2, dwt):
    """Route the gradients of the selected entries; ``dwt`` like ``wt`` (this slice's partial sum).

    The gradient w.r.t. ``T`` is gathered densely per batch element, then pushed through
    ``σ' = T (1 - T)`` onto its three pairwise terms in one pass.
    """
    nb, n, _, ct = da.shape
    cp = wt.shape[0]
    dt = np.zeros((n, n, n, ct) if with_p else (1, 1, 1, ct), dtype=da.dtype)
    for b in range(nb):
        for i in range(n):
            for j in range(n):
                for ch in range(ct):
                    k = i0x[b, i, j, ch]
                    if k >= 0:
                        da[b, j, k, ch] += g0x[b, i, j, ch]
                        db[b, i, k, ch] += g0x[b, i, j, ch]
                    k = i0n[b, i, j, ch]
                    if k >= 0:
                        da[b, j, k, ch] += g0n[b, i, j, ch]
                        db[b, i, k, ch] += g0n[b, i, j, ch]
        if not with_p:
            continue
        dt[:] = 0.0
        for i in range(n):
            for j in range(n):
                for ch in range(cp):
                    for sel in range(2):
                        k = i1x[b, i, j, ch] if sel == 0 else i1n[b, i, j, ch]
                        g = g1x[b, i, j, ch] if sel == 0 else g1n[b, i, j, ch]
                        if k < 0 or g == 0.0:
                            continue
                        da2[b, j, k, ch] += g
                        db2[b, i, k, ch] += g
                        for p in range(6):
                            s0 = _pick(_SRC[p, 0], i, j, k)
                            s1 = _pick(_SRC[p, 1], i, j, k)
                            s2 = _pick(_SRC[p, 2], i, j, k)
                            q0 = p * ct
                            for c2 in range(ct):
                                dwt[ch, q0 + c2] += t[b, s0, s1, s2, c2] * g
                                dt[s0, s1, s2, c2] += wt[ch, q0 + c2] * g
        for x in range(n):
            for y in range(n):
                for z in range(n):
                    for c2 in range(ct):
                        tv = t[b, x, y, z, c2]
                        d = dt[x, y, z, c2] * tv * (1.0 - tv)
                        da[b, y, z, c2] += d
                        db[b, x, z, c2] += d
                        dc[b, x, y, c2] += d


_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0


def _parallel(jobs: list) -> None:
    """Run zero-argument callables (GIL-free kernels) on a thread pool; inline when only one."""
    global _POOL, _POOL_SIZE
    if len(jobs) <= 1:
        for job in jobs:
            job()
        return
    if _POOL is None or len(jobs) > _POOL_SIZE:
        _POOL, _POOL_SIZE = (
            ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="nlm-block3"),
            len(jobs),
        )
    for f in [_POOL.submit(job) for job in jobs]:
        f.result()


def _splits(nb: int) -> list[slice]:
    """The batch split into ``torch.get_num_threads()`` contiguous slices (fewer when small)."""
    parts = max(1, min(torch.get_num_threads(), nb))
    bounds = np.linspace(0, nb, parts + 1).astype(int)
    return [slice(b0, b1) for b0, b1 in itertools.pairwise(bounds) if b1 > b0]


def _np(t: Tensor) -> np.ndarray:
    return t.detach().contiguous().numpy()


class Block3(torch.autograd.Function):
    """Differentiable fused block: ``(A, B, C, W, A', B', mask, exclude_self, needs_grad)`` ->
    ``(m0x, m0n, m1x, m1n)`` (``needs_grad``: keep ``T`` for a backward pass).

    ``m0x[b,i,j]`` / ``m0n``: max / min over valid ``k`` of ``A[b,j,k] + B[b,i,k]``; ``m1x`` / ``m1n``:
    of ``P`` (module docstring). Invalid ``k``: padded objects, and ``k in {i, j}`` when
    ``exclude_self``; an empty row gives ``-inf`` / ``inf``. ``W is None`` skips ``P`` (the ``m1``
    outputs are then None). Each gradient goes to the selected entry.
    """

    @staticmethod
    def forward(ctx, a, b, c, w, a2, b2, mask, exclude_self, needs_grad):
        nb, n, _, ct = a.shape
        with_p = w is not None
        dt = {torch.float32: np.float32, torch.float64: np.float64}[a.dtype]
        a, b, c = a.detach(), b.detach(), c.detach()
        cp = cp_out = w.shape[2] if with_p else 0
        cp8 = max(8, -(-cp // 8) * 8)  # P channels padded to a multiple of 8 for the kernel
        wq = np.zeros((6 * ct, cp8), dt)
        a2n = np.zeros((nb, n, n, cp8) if with_p else (nb, 1, 1, cp8), dt)
        b2n = np.zeros_like(a2n)
        if with_p:
            wq[:, :cp], a2n[..., :cp], b2n[..., :cp] = _np(w).reshape(6 * ct, cp), _np(a2), _np(b2)
        cp = cp8
        m0x, m0n, m1x, m1n = (np.empty((nb, n, n, ch), dt) for ch in (ct, ct, cp, cp))
        i0x, i0n, i1x, i1n = (np.empty((nb, n, n, ch), np.int32) for ch in (ct, ct, cp, cp))
        outs = (m0x, m0n, i0x, i0n, m1x, m1n, i1x, i1n)
        mk = mask.detach().to(torch.bool).contiguous().numpy()
        an, bn = _np(a), _np(b)
        keep_t = with_p and bool(needs_grad)
        step = nb if keep_t or not with_p else max(1, _T_CHUNK // (n**3 * ct))
        t = np.zeros((nb, 1, 1, 1, ct), dt)
        for c0 in range(0, nb, step):
            chunk = slice(c0, min(nb, c0 + step))
            if with_p:  # T = σ(a + b + c) by PyTorch (vectorised exp): kept, or in chunks
                tx = a[chunk].unsqueeze(1) + b[chunk].unsqueeze(2)
                tx += c[chunk].unsqueeze(3)
                t = tx.sigmoid_().numpy()
            base = chunk.start
            jobs = []
            for part in _splits(chunk.stop - chunk.start):
                g = slice(base + part.start, base + part.stop)  # global batch rows
                tp = t[part] if with_p else t[g]
                args = (an[g], bn[g], tp, wq, a2n[g], b2n[g], mk[g], bool(exclude_self), with_p)
                jobs.append(lambda args=args, g=g: _forward(*args, *(o[g] for o in outs)))
            _parallel(jobs)
        ctx.with_p = with_p
        ctx.dims = (nb, n, ct, cp, cp_out)
        ctx.saved = (t if keep_t else None, np.ascontiguousarray(wq.T), i0x, i0n, i1x, i1n)
        out = (torch.from_numpy(m0x), torch.from_numpy(m0n))
        if not with_p:
            return (*out, None, None)
        return (*out, torch.from_numpy(m1x[..., :cp_out]), torch.from_numpy(m1n[..., :cp_out]))

    @staticmethod
    def backward(ctx, g0x, g0n, g1x, g1n):
        nb, n, ct, cp, cp_out = ctx.dims
        t, wt, i0x, i0n, i1x, i1n = ctx.saved
        dt = wt.dtype
        with_p = ctx.with_p
        if with_p and t is None:
            raise RuntimeError("Block3 ran with needs_grad=False: T was not kept for the backward pass")

        def arr(g, ch):
            out = np.zeros((nb, n, n, ch), dt)
            if g is not None:
                out[..., : g.shape[-1]] = _np(g)
            return out

        if not with_p:
            t = np.zeros((nb, 1, 1, 1, ct), dt)
        ins = (t, i0x, i0n, i1x, i1n, arr(g0x, ct), arr(g0n, ct), arr(g1x, cp), arr(g1n, cp))
        da, db, dc = (np.zeros((nb, n, n, ct), dt) for _ in range(3))
        da2, db2 = np.zeros((nb, n, n, cp), dt), np.zeros((nb, n, n, cp), dt)
        parts = _splits(nb)
        dwt = np.zeros((len(parts), cp, 6 * ct), dt)  # one partial sum per thread
        jobs = []
        for p, g in enumerate(parts):
            args = (
                ins[0][g],
                wt,
                *(x[g] for x in ins[1:]),
                with_p,
                *(o[g] for o in (da, db, dc, da2, db2)),
                dwt[p],
            )
            jobs.append(lambda args=args: _backward(*args))
        _parallel(jobs)
        grads = [torch.from_numpy(da), torch.from_numpy(db), torch.from_numpy(dc)]
        if ctx.with_p:
            dw = np.ascontiguousarray(dwt.sum(axis=0).reshape(cp, 6, ct).transpose(1, 2, 0)[..., :cp_out])
            grads += [
                torch.from_numpy(dw),
                torch.from_numpy(da2[..., :cp_out]),
                torch.from_numpy(db2[..., :cp_out]),
            ]
        else:
            grads += [None, None, None]
        return (*grads, None, None, None)
