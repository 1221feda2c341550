r"""Fused CPU kernels for the arity-3 block of two consecutive NLM layers.

In the paper's network (breadth 3, depth 5, inputs of arity <= 2) the first layer's arity-3
output is built from expansions of its arity-2 input ``X`` only, and the second layer only
*reduces* its own arity-3 output. For a first object ``i``, second ``j`` and reduced ``k``:

.. math::
    T[i,j,k] = \sigma(A[j,k] + B[i,k] + C[i,j]),
    \qquad
    Y[i,j,k] = \sigma\Big(\sum_{\pi \in S_3} T[\pi^{-1}(i,j,k)]\, W_\pi + A'[j,k] + B'[i,k] + C'[i,j]\Big)

where the pairwise terms are the expansions: with ``U_p = X V_p`` (``V_p`` the first layer's
arity-3 weight block of permutation ``p``), ``A[j,k] = U_4[j,k] + U_5[k,j]``,
``B[i,k] = U_1[i,k] + U_3[k,i]``, ``C[i,j] = U_0[i,j] + U_2[j,i] + b``, and ``A', B', C'`` likewise
from the second layer's arity-2 input ``X'``, its expand blocks and bias. The network only needs,
for each ``(i, j)``, the ∃ (max) and ∀ (min) over the valid ``k`` of ``T`` (an input of the second
layer's arity 2) and of ``Y`` (of the third layer's). As ``σ`` is monotone they are
``σ(max_k (A[j,k] + B[i,k]) + C[i,j])`` and ``σ(max_k P[i,j,k] + C'[i,j])`` with ``P`` the sum
without ``C'``.

Why hand-written kernels: PyTorch's generic operations would materialise ``T``, the six permuted
terms of ``Y`` and the expansions as ``[B, N, N, N, C]`` tensors (and keep them for autograd).
`Block3` computes the four reductions per batch element instead:

* only over the real objects of the element: padding costs nothing, and the bulk of the work
  scales with ``n_real**3``, not ``N**3``;
* the pairwise terms are ``[n, n, 6 C]`` products of the arity-2 inputs, computed in the kernel;
* ``T`` is computed once (vectorised sigmoid) and kept only when a backward pass will need it;
* for a fixed ``i`` the six permuted terms are two matrix products over the pairs ``(u, v)``:
  ``G[u,v] = T[i,u,v] W_0 + T[u,i,v] W_2 + T[u,v,i] W_4`` and
  ``H[u,v] = T[i,u,v] W_1 + T[u,i,v] W_3 + T[u,v,i] W_5``, so
  ``P[i,j,k] = G[j,k] + H[k,j] + A'[j,k] + B'[i,k]`` (``A'`` is folded into ``G``, ``B'`` into
  ``H``). A row of ``3 C_t`` inputs against ``[3 C_t, 2 C_p]`` weights runs as 8-lane SIMD
  multiply-adds over output channels, four rows at a time (`agents.models.nlm.fast.simd`);
* the max/min over ``k`` and their arguments are lane-wise selects over 8 channels;
* the backward pass routes each output gradient through ``σ'`` to its selected ``k`` only, pushes
  the selected ``P`` entries through the weights into ``T``'s gradient (dense rows of ``G``, ``H``)
  and into the weights' (a sum over the selected entries, in registers), ``T``'s gradient through
  ``σ' = T (1 - T)`` onto ``A, B, C``, and the pairwise gradients back through the expansions onto
  ``X, X'`` and the weights.

The kernels release the GIL and run on batch slices in ``torch.get_num_threads()`` Python threads
(`agents.models.nlm.fast.threads.parallel`; one inside `agents.models.nlm.fast.threads.inline_kernels`).
Channel counts are padded to multiples of 8 (zero weights); the generic PyTorch path of
`agents.models.nlm` computes the same function (the tests compare the two).
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit
from torch import Tensor

from agents.models.nlm.fast.arrays import DTYPES, as_array, needs_grad, packed, pad_lanes, pad_last
from agents.models.nlm.fast.jit import INLINE, JIT, fill_padding, real_objects, vmax_min_arg, vsigmoid_grad
from agents.models.nlm.fast.simd import LANES, vadd, vbcast, veq_select, vfill, vfma, vload, vsigmoid, vstore
from agents.models.nlm.fast.threads import parallel, split_batch

__all__ = [
    "Block3",
    "block3",
    "block3_forward",
    "expand_weight",
    "gh_rows",
    "own_weight",
    "pair_products",
    "pair_terms",
    "sigmoid_t",
]


# ----------------------------------------------------------------------------- forward
@njit(**INLINE)
def pair_products(x, w, b, objs, u, v, ch, c0):
    """The six products ``U_p[u, v] = x[u, v] @ w[:, p]`` (channels ``c0 .. c0 + 7``) of `pair_terms`,
    each one multiply-add chain over ``x``'s channels (`agents.models.nlm.fast.arity3_memo` patches
    pair terms from them, with the same results to the bit)."""
    big_n, cx = x.shape[1], x.shape[3]
    c6 = 6 * ch
    x_off = ((b * big_n + objs[u]) * big_n + objs[v]) * cx
    s0 = s1 = s2 = s3 = s4 = s5 = vfill(w, 0.0)
    for q in range(cx):
        xq = vbcast(x, x_off + q)
        w_off = q * c6 + c0
        s0 = vfma(xq, vload(w, w_off), s0)
        s1 = vfma(xq, vload(w, w_off + ch), s1)
        s2 = vfma(xq, vload(w, w_off + 2 * ch), s2)
        s3 = vfma(xq, vload(w, w_off + 3 * ch), s3)
        s4 = vfma(xq, vload(w, w_off + 4 * ch), s4)
        s5 = vfma(xq, vload(w, w_off + 5 * ch), s5)
    return s0, s1, s2, s3, s4, s5


@njit(**INLINE)
def pair_terms(x, w, bias, b, objs, n, pair):
    """Expansion terms of the arity-2 input ``x`` (``[B, N, N, C_x]``) for batch row ``b``, into
    ``pair = (A, B, C)`` (compact, flat ``[n, n, C]``): ``A[j, k] = U_4[j, k] + U_5[k, j]``,
    ``B[i, k] = U_1[i, k] + U_3[k, i]``, ``C[i, j] = U_0[i, j] + U_2[j, i] + bias`` with
    ``U_p[u, v] = x[u, v] @ w[:, p]`` (``w``: ``[C_x, 6 C]``, ``C = bias.size``)."""
    pa, pb, pc = pair
    ch = bias.shape[0]
    for m in range(n * n):
        for c0 in range(0, ch, LANES):
            vstore(pa, m * ch + c0, vfill(pa, 0.0))
            vstore(pb, m * ch + c0, vfill(pb, 0.0))
            vstore(pc, m * ch + c0, vload(bias, c0))
    for u in range(n):
        for v in range(n):
            uv, vu = (u * n + v) * ch, (v * n + u) * ch
            for c0 in range(0, ch, LANES):
                s0, s1, s2, s3, s4, s5 = pair_products(x, w, b, objs, u, v, ch, c0)
                vstore(pc, uv + c0, vadd(vload(pc, uv + c0), s0))
                vstore(pb, uv + c0, vadd(vload(pb, uv + c0), s1))
                vstore(pc, vu + c0, vadd(vload(pc, vu + c0), s2))
                vstore(pb, vu + c0, vadd(vload(pb, vu + c0), s3))
                vstore(pa, uv + c0, vadd(vload(pa, uv + c0), s4))
                vstore(pa, vu + c0, vadd(vload(pa, vu + c0), s5))


@njit(**INLINE)
def _reduce_store(v_max, v_min, k_max, k_min, post, outs, out):
    """Write ``σ(max + post)``, ``σ(min + post)`` and the arguments at flat offset ``out``."""
    ex, fa, ix, im = outs
    vstore(ex, out, vsigmoid(vadd(v_max, post)))
    vstore(fa, out, vsigmoid(vadd(v_min, post)))
    vstore(ix, out, k_max)
    vstore(im, out, k_min)


@njit(**JIT)
def _exists_t(pair, b, objs, n, big_n, exclude_self, outs):
    """∃ / ∀ over valid ``k`` of ``T[i, j, k]``: ``σ(max_k (A[j, k] + B[i, k]) + C[i, j])`` (and
    the min), with the arguments (-1 for an empty row), into ``outs``, padded ``[B, N, N, C]``."""
    pa, pb, pc = pair
    ch = outs[0].shape[3]
    for i in range(n):
        for j in range(n):
            out = ((b * big_n + objs[i]) * big_n + objs[j]) * ch
            for c0 in range(0, ch, LANES):
                mx, mn = vfill(pa, -np.inf), vfill(pa, np.inf)
                kx, kn = vfill(pa, -1), vfill(pa, -1)
                for k in range(n):
                    if exclude_self and (k == i or k == j):  # noqa: SIM109 (numba)
                        continue
                    v = vadd(vload(pa, (j * n + k) * ch + c0), vload(pb, (i * n + k) * ch + c0))
                    kv = vfill(pa, k)
                    mx, kx, mn, kn = vmax_min_arg(v, kv, mx, kx, mn, kn)
                _reduce_store(mx, mn, kx, kn, vload(pc, (i * n + j) * ch + c0), outs, out + c0)


@njit(**JIT)
def sigmoid_t(pair, n, ct, tb):
    """``tb[x, y, z] = σ(A[y, z] + B[x, z] + C[x, y])`` (compact, flat ``[n, n, n, C_t]``)."""
    pa, pb, pc = pair
    for x in range(n):
        for y in range(n):
            c_off = (x * n + y) * ct
            for z in range(n):
                a_off, b_off = (y * n + z) * ct, (x * n + z) * ct
                t_off = ((x * n + y) * n + z) * ct
                for c0 in range(0, ct, LANES):
                    v = vadd(vadd(vload(pa, a_off + c0), vload(pb, b_off + c0)), vload(pc, c_off + c0))
                    vstore(tb, t_off + c0, vsigmoid(v))


@njit(**INLINE)
def _slice_rows(i, u, v, n, s):
    """Flat row (object triple) of slice ``s`` of row ``(u, v)``: ``T[i, u, v]``, ``T[u, i, v]``,
    ``T[u, v, i]`` for ``s`` = 0, 1, 2."""
    if s == 0:
        return (i * n + u) * n + v
    if s == 1:
        return (u * n + i) * n + v
    return (u * n + v) * n + i


@njit(**INLINE)
def gh_rows(tb, wq, pair2, ct, cp, n, i, u, v0, nv, gh):
    """``G``, ``H`` rows ``(u, v0 .. v0 + nv - 1)`` (``nv <= 4``) for first object ``i``.

    ``gh[(u * n + v) * 2 C_p + (0 | C_p) + ch]`` receives ``G[u, v, ch] + A'[u, v, ch]`` and
    ``H[u, v, ch] + B'[i, u, ch]``. Four rows share each weight load and give eight independent
    accumulator chains; rows past ``nv`` repeat the last one and are not stored.
    """
    pa2, pb2 = pair2[0], pair2[1]
    c2p = 2 * cp
    v1, v2, v3 = v0 + min(1, nv - 1), v0 + min(2, nv - 1), v0 + min(3, nv - 1)
    for ob in range(0, cp, LANES):
        h0 = h1 = h2 = h3 = vload(pb2, (i * n + u) * cp + ob)
        g0, g1 = vload(pa2, (u * n + v0) * cp + ob), vload(pa2, (u * n + v1) * cp + ob)
        g2, g3 = vload(pa2, (u * n + v2) * cp + ob), vload(pa2, (u * n + v3) * cp + ob)
        for s in range(3):
            r0, r1 = _slice_rows(i, u, v0, n, s) * ct, _slice_rows(i, u, v1, n, s) * ct
            r2, r3 = _slice_rows(i, u, v2, n, s) * ct, _slice_rows(i, u, v3, n, s) * ct
            for c2 in range(ct):
                w_off = (s * ct + c2) * c2p + ob
                wg, wh = vload(wq, w_off), vload(wq, w_off + cp)
                x = vbcast(tb, r0 + c2)
                g0, h0 = vfma(x, wg, g0), vfma(x, wh, h0)
                x = vbcast(tb, r1 + c2)
                g1, h1 = vfma(x, wg, g1), vfma(x, wh, h1)
                x = vbcast(tb, r2 + c2)
                g2, h2 = vfma(x, wg, g2), vfma(x, wh, h2)
                x = vbcast(tb, r3 + c2)
                g3, h3 = vfma(x, wg, g3), vfma(x, wh, h3)
        for t in range(nv):
            row = (u * n + v0 + t) * c2p + ob
            g = g0 if t == 0 else (g1 if t == 1 else (g2 if t == 2 else g3))
            h = h0 if t == 0 else (h1 if t == 1 else (h2 if t == 2 else h3))
            vstore(gh, row, g)
            vstore(gh, row + cp, h)


@njit(**JIT)
def _exists_y(gh, pc2, b, objs, n, i, big_n, exclude_self, outs):
    """∃ / ∀ over valid ``k`` of ``Y[i, j, k]``: ``σ(max_k (G[j, k] + H[k, j]) + C'[i, j])``."""
    cp = outs[0].shape[3]
    c2p = 2 * cp
    for j in range(n):
        out = ((b * big_n + objs[i]) * big_n + objs[j]) * cp
        for ob in range(0, cp, LANES):
            mx, mn = vfill(gh, -np.inf), vfill(gh, np.inf)
            kx, kn = vfill(gh, -1), vfill(gh, -1)
            for k in range(n):
                if exclude_self and (k == i or k == j):  # noqa: SIM109 (numba)
                    continue
                v = vadd(vload(gh, (j * n + k) * c2p + ob), vload(gh, (k * n + j) * c2p + cp + ob))
                kv = vfill(gh, k)
                mx, kx, mn, kn = vmax_min_arg(v, kv, mx, kx, mn, kn)
            _reduce_store(mx, mn, kx, kn, vload(pc2, (i * n + j) * cp + ob), outs, out + ob)


@njit(**JIT)
def _forward(lo, hi, xs, weights, wq, mask, exclude_self, with_y, keep_t, t_all, outs):
    """Batch rows ``lo .. hi - 1``. ``xs = (X, X')``, ``weights = (V, b, V', b')`` (``V``:
    ``[C_x, 6 C_t]``), ``wq``: ``[3 C_t, 2 C_p]`` (see `own_weight`); ``outs``: the outputs of ``T``
    then of ``Y`` (∃, ∀, argmax, argmin: padded ``[B, N, N, C]``, arguments as floats in the compact
    numbering of the real objects); ``t_all[b]``: ``T`` of row ``b`` when ``keep_t`` (kept for the
    backward pass)."""
    x, x2 = xs
    w0, b0, w1, b1 = weights
    big_n = mask.shape[1]
    ct, cp = b0.shape[0], b1.shape[0]
    dt = b0.dtype
    objs = np.empty(big_n, np.int64)
    nn = big_n * big_n
    pair = (np.empty(nn * ct, dt), np.empty(nn * ct, dt), np.empty(nn * ct, dt))
    pair2 = (np.empty(nn * cp, dt), np.empty(nn * cp, dt), np.empty(nn * cp, dt))
    scratch = np.empty(1 if keep_t or not with_y else big_n**3 * ct, dt)
    gh = np.empty(nn * 2 * cp if with_y else 1, dt)
    for b in range(lo, hi):
        n = real_objects(mask, b, objs)
        for k in range(8 if with_y else 4):  # entries of a padded i or j: 0, arguments -1
            fill_padding(outs[k], b, n, -1.0 if k % 4 >= 2 else 0.0)
        if n == 0:
            continue
        pair_terms(x, w0, b0, b, objs, n, pair)
        _exists_t(pair, b, objs, n, big_n, exclude_self, outs[:4])
        if not with_y:
            continue
        pair_terms(x2, w1, b1, b, objs, n, pair2)
        tb = t_all[b][: n**3 * ct] if keep_t else scratch[: n**3 * ct]
        sigmoid_t(pair, n, ct, tb)
        for i in range(n):
            for u in range(n):
                for v0 in range(0, n, 4):
                    gh_rows(tb, wq, pair2, ct, cp, n, i, u, v0, min(4, n - v0), gh)
            _exists_y(gh, pair2[2], b, objs, n, i, big_n, exclude_self, outs[4:])


# ----------------------------------------------------------------------------- backward
@njit(**INLINE)
def _route_pair(b, objs, n, i, j, exclude_self, outs, grads, dpair, gbuf, goff):
    """Gradients of ``ex = σ(max_k S[i, j, k] + C[i, j])`` and ``fa`` (the min) for one ``(i, j)``,
    ``S[i, j, k] = A[j, k] + B[i, k]``, onto the compact ``dpair = (dA, dB, dC)``, vectorised over
    channels: each lane's gradient goes to the ``k`` equal to its stored argument. The
    pre-activation gradients are also written to ``gbuf[goff:]`` (``[2 C]``: max, then min)."""
    ex, fa, ix, im = outs
    g_ex, g_fa = grads
    da, db, dc = dpair
    big_n, ch = ex.shape[1], ex.shape[3]
    row = ((b * big_n + objs[i]) * big_n + objs[j]) * ch
    one, zero = vfill(da, 1.0), vfill(da, 0.0)
    for c0 in range(0, ch, LANES):
        y = vload(ex, row + c0)
        gx = vsigmoid_grad(vload(g_ex, row + c0), y, one)
        y = vload(fa, row + c0)
        gn = vsigmoid_grad(vload(g_fa, row + c0), y, one)
        vstore(gbuf, goff + c0, gx)
        vstore(gbuf, goff + ch + c0, gn)
        c_off = (i * n + j) * ch + c0
        vstore(dc, c_off, vadd(vload(dc, c_off), vadd(gx, gn)))
        kx, kn = vload(ix, row + c0), vload(im, row + c0)
        for k in range(n):
            if exclude_self and (k == i or k == j):  # noqa: SIM109 (numba)
                continue
            kv = vfill(da, k)
            gk = vadd(veq_select(kv, kx, gx, zero), veq_select(kv, kn, gn, zero))
            a_off, b_off = (j * n + k) * ch + c0, (i * n + k) * ch + c0
            vstore(da, a_off, vadd(vload(da, a_off), gk))
            vstore(db, b_off, vadd(vload(db, b_off), gk))


@njit(**INLINE)
def _route_p(cp, n, j, ixf, imf, row, gbuf, goff, dgh):
    """The selected ``P[i, j, k]`` of one ``(i, j)`` (pre-activation gradients at ``gbuf[goff:]``,
    arguments at ``row`` of the flat ``ixf`` / ``imf``) onto the gradients of ``G[j, k]`` and
    ``H[k, j]`` in ``dgh`` (laid out like `gh_rows`' ``gh``): ``P[i, j, k] = G[j, k] + H[k, j] + ...``."""
    c2p = 2 * cp
    for sel in range(2):
        for ch in range(cp):
            k = int(ixf[row + ch]) if sel == 0 else int(imf[row + ch])
            if k >= 0:
                gv = gbuf[goff + sel * cp + ch]
                dgh[(j * n + k) * c2p + ch] += gv
                dgh[(k * n + j) * c2p + cp + ch] += gv


@njit(**JIT)
def _gh_rows_grad(dgh, wt, ct, cp, n, i, dtb):
    """Backward of `gh_rows` onto ``T`` for first object ``i``: ``dT[T_s[u, v]] += dGH[u, v] W_s^T``
    for every row ``(u, v)`` (dense over channels, four rows at a time), then clear ``dgh``."""
    c2p, c3t = 2 * cp, 3 * ct
    zero = vfill(dgh, 0.0)
    for u in range(n):
        for v0 in range(0, n, 4):
            nv = min(4, n - v0)
            v1, v2, v3 = v0 + min(1, nv - 1), v0 + min(2, nv - 1), v0 + min(3, nv - 1)
            rw0, rw1, rw2, rw3 = (
                (u * n + v0) * c2p,
                (u * n + v1) * c2p,
                (u * n + v2) * c2p,
                (u * n + v3) * c2p,
            )
            for cb in range(0, ct, LANES):
                a0 = a1 = a2 = b0 = b1 = b2 = c0 = c1 = c2 = d0 = d1 = d2 = zero
                for ch in range(c2p):
                    w_off = ch * c3t + cb
                    w0, w1, w2 = vload(wt, w_off), vload(wt, w_off + ct), vload(wt, w_off + 2 * ct)
                    x = vbcast(dgh, rw0 + ch)
                    a0, a1, a2 = vfma(x, w0, a0), vfma(x, w1, a1), vfma(x, w2, a2)
                    x = vbcast(dgh, rw1 + ch)
                    b0, b1, b2 = vfma(x, w0, b0), vfma(x, w1, b1), vfma(x, w2, b2)
                    x = vbcast(dgh, rw2 + ch)
                    c0, c1, c2 = vfma(x, w0, c0), vfma(x, w1, c1), vfma(x, w2, c2)
                    x = vbcast(dgh, rw3 + ch)
                    d0, d1, d2 = vfma(x, w0, d0), vfma(x, w1, d1), vfma(x, w2, d2)
                for t in range(nv):
                    acc = (
                        (a0, a1, a2)
                        if t == 0
                        else ((b0, b1, b2) if t == 1 else ((c0, c1, c2) if t == 2 else (d0, d1, d2)))
                    )
                    for s in range(3):
                        r = _slice_rows(i, u, v0 + t, n, s) * ct + cb
                        vstore(dtb, r, vadd(vload(dtb, r), acc[s]))
            for t in range(nv):
                for lane0 in range(0, c2p, LANES):
                    vstore(dgh, (u * n + v0 + t) * c2p + lane0, zero)


@njit(**JIT)
def _own_weight_grad(tb, gbuf, ix, im, b, objs, n, big_n, ct, cp, dwt):
    """Gradient of the own weights from the selected ``P`` entries of batch row ``b`` (their
    pre-activation gradients at ``gbuf[(i n + j) 2 C_p:]``): ``dW_s[:, ch] += g T_s`` for the six
    slices of the ``G`` row ``(j, k)`` and the ``H`` row ``(k, j)``; one output channel at a time,
    summed in registers (``dwt`` like ``wq.T``)."""
    c2p, c3t = 2 * cp, 3 * ct
    ixf, imf = ix.reshape(-1), im.reshape(-1)
    zero = vfill(tb, 0.0)
    for ch in range(cp):
        for cb in range(0, ct, LANES):
            a0 = a1 = a2 = a3 = a4 = a5 = zero
            for i in range(n):
                for j in range(n):
                    row = ((b * big_n + objs[i]) * big_n + objs[j]) * cp + ch
                    for sel in range(2):
                        k = int(ixf[row]) if sel == 0 else int(imf[row])
                        if k < 0:
                            continue
                        x = vfill(tb, gbuf[(i * n + j) * c2p + sel * cp + ch])
                        a0 = vfma(x, vload(tb, _slice_rows(i, j, k, n, 0) * ct + cb), a0)
                        a1 = vfma(x, vload(tb, _slice_rows(i, j, k, n, 1) * ct + cb), a1)
                        a2 = vfma(x, vload(tb, _slice_rows(i, j, k, n, 2) * ct + cb), a2)
                        a3 = vfma(x, vload(tb, _slice_rows(i, k, j, n, 0) * ct + cb), a3)
                        a4 = vfma(x, vload(tb, _slice_rows(i, k, j, n, 1) * ct + cb), a4)
                        a5 = vfma(x, vload(tb, _slice_rows(i, k, j, n, 2) * ct + cb), a5)
            wg, wh = ch * c3t + cb, (cp + ch) * c3t + cb
            acc = (a0, a1, a2, a3, a4, a5)
            for s in range(6):
                w_off = (wg if s < 3 else wh) + (s % 3) * ct
                vstore(dwt, w_off, vadd(vload(dwt, w_off), acc[s]))


@njit(**JIT)
def _sigmoid_t_grad(tb, dtb, n, ct, dpair):
    """``T = σ(A[y, z] + B[x, z] + C[x, y])``: push ``dT`` through ``σ' = T (1 - T)`` (compact)."""
    da, db, dc = dpair
    one = vfill(tb, 1.0)
    for x in range(n):
        for y in range(n):
            c_off = (x * n + y) * ct
            for cb in range(0, ct, LANES):
                acc = vfill(tb, 0.0)
                for z in range(n):
                    t_off = ((x * n + y) * n + z) * ct + cb
                    tv = vload(tb, t_off)
                    d = vsigmoid_grad(vload(dtb, t_off), tv, one)
                    a_off, b_off = (y * n + z) * ct + cb, (x * n + z) * ct + cb
                    vstore(da, a_off, vadd(vload(da, a_off), d))
                    vstore(db, b_off, vadd(vload(db, b_off), d))
                    acc = vadd(acc, d)
                vstore(dc, c_off + cb, vadd(vload(dc, c_off + cb), acc))


@njit(**JIT)
def _pair_terms_grad(x, w_t, b, objs, n, dpair, dx, sums):
    """Backward of `pair_terms` from the compact ``dpair = (dA, dB, dC)`` (``[n, n, C]``): ``x``'s
    gradient into ``dx`` (``[B, N, N, C_x8]``; skipped when ``dx.size == 1``) and, into
    ``sums = (dw, dbias)``, the weight's (``[C_x, 6 C]``, summed in registers two input channels at
    a time) and the bias's. ``w_t``: ``[6 C, C_x8]``, the weight transposed."""
    da, db, dc = dpair
    dw, dbias = sums
    big_n, cx = x.shape[1], x.shape[3]
    ch = dbias.shape[0]
    c6 = 6 * ch
    zero = vfill(dbias, 0.0)
    for c0 in range(0, ch, LANES):
        acc = zero
        for m in range(n * n):
            acc = vadd(acc, vload(dc, m * ch + c0))
        vstore(dbias, c0, vadd(vload(dbias, c0), acc))
        # dU_p[u, v] for p = 0 .. 5: C[i, j] <- U_0[i, j], U_2[j, i]; B <- U_1, U_3; A <- U_4, U_5
        for q0 in range(0, cx, 2):
            q1 = q0 + min(1, cx - 1 - q0)
            a0 = a1 = a2 = a3 = a4 = a5 = e0 = e1 = e2 = e3 = e4 = e5 = zero
            for u in range(n):
                for v in range(n):
                    uv, vu = (u * n + v) * ch + c0, (v * n + u) * ch + c0
                    g0, g1, g2 = vload(dc, uv), vload(db, uv), vload(dc, vu)
                    g3, g4, g5 = vload(db, vu), vload(da, uv), vload(da, vu)
                    x_off = ((b * big_n + objs[u]) * big_n + objs[v]) * cx
                    xa, xb = vbcast(x, x_off + q0), vbcast(x, x_off + q1)
                    a0, a1, a2 = vfma(xa, g0, a0), vfma(xa, g1, a1), vfma(xa, g2, a2)
                    a3, a4, a5 = vfma(xa, g3, a3), vfma(xa, g4, a4), vfma(xa, g5, a5)
                    e0, e1, e2 = vfma(xb, g0, e0), vfma(xb, g1, e1), vfma(xb, g2, e2)
                    e3, e4, e5 = vfma(xb, g3, e3), vfma(xb, g4, e4), vfma(xb, g5, e5)
            acc_a, acc_e = (a0, a1, a2, a3, a4, a5), (e0, e1, e2, e3, e4, e5)
            for p in range(6):
                w_off = q0 * c6 + p * ch + c0
                vstore(dw, w_off, vadd(vload(dw, w_off), acc_a[p]))
                if q1 != q0:  # an odd last channel repeats q0 in the e-chains
                    w_off = q1 * c6 + p * ch + c0
                    vstore(dw, w_off, vadd(vload(dw, w_off), acc_e[p]))
    if dx.size == 1:
        return
    cx8 = dx.shape[3]
    for u in range(n):
        for v in range(n):
            uv, vu = (u * n + v) * ch, (v * n + u) * ch
            dx_off = ((b * big_n + objs[u]) * big_n + objs[v]) * cx8
            for q0 in range(0, cx8, LANES):
                acc = zero
                for c in range(ch):
                    w_off = c * cx8 + q0
                    acc = vfma(vfill(dx, dc[uv + c]), vload(w_t, w_off), acc)
                    acc = vfma(vfill(dx, db[uv + c]), vload(w_t, w_off + ch * cx8), acc)
                    acc = vfma(vfill(dx, dc[vu + c]), vload(w_t, w_off + 2 * ch * cx8), acc)
                    acc = vfma(vfill(dx, db[vu + c]), vload(w_t, w_off + 3 * ch * cx8), acc)
                    acc = vfma(vfill(dx, da[uv + c]), vload(w_t, w_off + 4 * ch * cx8), acc)
                    acc = vfma(vfill(dx, da[vu + c]), vload(w_t, w_off + 5 * ch * cx8), acc)
                vstore(dx, dx_off + q0, acc)


@njit(**JIT)
def _backward(lo, hi, xs, weights_t, t_all, mask, exclude_self, with_y, outs, grads, dxs, sums):
    """Batch rows ``lo .. hi - 1``. ``xs = (X, X')``, ``weights_t = (V^T, V'^T, wq^T)``; ``outs`` /
    ``grads``: the forward outputs and the gradients of ∃T, ∀T, ∃Y, ∀Y. ``dxs = (dX, dX')`` are
    written (rows of this slice); ``sums = (dV, db, dV', db', dwq^T)`` are this slice's partial sums
    (``dV`` like the forward's ``V``)."""
    x, x2 = xs
    w0t, w1t, wt = weights_t
    dx, dx2 = dxs
    dw0, db0, dw1, db1, dwt = sums
    big_n = mask.shape[1]
    ct, cp = db0.shape[0], db1.shape[0]
    dt = db0.dtype
    objs = np.empty(big_n, np.int64)
    nn = big_n * big_n
    dpair = (np.empty(nn * ct, dt), np.empty(nn * ct, dt), np.empty(nn * ct, dt))
    dpair2 = (np.empty(nn * cp, dt), np.empty(nn * cp, dt), np.empty(nn * cp, dt))
    dtb = np.empty(big_n**3 * ct if with_y else 1, dt)
    gbuf = np.empty(nn * 2 * max(ct, cp), dt)
    dgh = np.zeros(nn * 2 * cp if with_y else 1, dt)
    ix_y, im_y = outs[6].reshape(-1), outs[7].reshape(-1)
    for b in range(lo, hi):
        n = real_objects(mask, b, objs)
        if dx.size > 1:
            fill_padding(dx, b, n, 0.0)
        if with_y:
            fill_padding(dx2, b, n, 0.0)
        if n == 0:
            continue
        for d in dpair:
            d[: n * n * ct] = 0.0
        for i in range(n):
            for j in range(n):
                _route_pair(b, objs, n, i, j, exclude_self, outs[:4], grads[:2], dpair, gbuf, 0)
        if with_y:
            for d in dpair2:
                d[: n * n * cp] = 0.0
            tb, dtv = t_all[b][: n**3 * ct], dtb[: n**3 * ct]
            dtv[:] = 0.0
            for i in range(n):
                for j in range(n):
                    goff = (i * n + j) * 2 * cp
                    _route_pair(b, objs, n, i, j, exclude_self, outs[4:], grads[2:], dpair2, gbuf, goff)
                    row = ((b * big_n + objs[i]) * big_n + objs[j]) * cp
                    _route_p(cp, n, j, ix_y, im_y, row, gbuf, goff, dgh)
                _gh_rows_grad(dgh, wt, ct, cp, n, i, dtv)
            _own_weight_grad(tb, gbuf, outs[6], outs[7], b, objs, n, big_n, ct, cp, dwt)
            _sigmoid_t_grad(tb, dtv, n, ct, dpair)
            _pair_terms_grad(x2, w1t, b, objs, n, dpair2, dx2, (dw1, db1))
        _pair_terms_grad(x, w0t, b, objs, n, dpair, dx, (dw0, db0))


# ----------------------------------------------------------------------------- autograd
def expand_weight(w: np.ndarray, c_in: int) -> tuple[np.ndarray, np.ndarray]:
    """The expand blocks of an arity-3 weight ``[C, 6 (c_in + c_own)]``: ``V`` as ``[c_in, 6 C8]``
    with ``V[q, p * C8 + c] = w[c, p, q]`` (output channels zero-padded to ``C8``), and ``V``
    transposed with its input channels padded, ``[6 C8, c_in8]`` (for the backward pass)."""
    c = w.shape[0]
    v = pad_last(w.reshape(c, 6, -1)[:, :, :c_in].transpose(2, 1, 0), pad_lanes(c)).reshape(c_in, -1)
    return v, pad_last(v.T, pad_lanes(c_in))


def own_weight(w: np.ndarray, c_in: int, ct: int) -> tuple[np.ndarray, np.ndarray]:
    """The own blocks ``W_p = w[:, p, c_in:].T`` (``[C_t, C_p]``) of the second layer's arity-3
    weight as ``wq[s * ct8 + c2] = [W_{2s}[c2] | W_{2s+1}[c2]]`` (``[3 ct8, 2 cp8]``: ``G`` takes
    the permutations 0, 2, 4, ``H`` 1, 3, 5), and ``wq`` transposed."""
    cp = w.shape[0]
    ct8, cp8 = pad_lanes(ct), pad_lanes(cp)
    wp = np.zeros((6, ct8, cp8), w.dtype)
    wp[:, :ct, :cp] = w.reshape(cp, 6, -1)[:, :, c_in : c_in + ct].transpose(1, 2, 0)
    wq = np.ascontiguousarray(wp.reshape(3, 2, ct8, cp8).transpose(0, 2, 1, 3).reshape(3 * ct8, 2 * cp8))
    return wq, np.ascontiguousarray(wq.T)


def block3_forward(x, w0, b0, x2, w1, b1, mask, exclude_self, keep_t) -> tuple[tuple, tuple]:
    """The forward kernels of `Block3`: its four outputs and ``(with_y, dims, saved)`` for the
    backward pass (``T`` is kept for it when ``keep_t``)."""
    nb, n, _, cx = x.shape
    with_y = w1 is not None
    dt = DTYPES[x.dtype]
    ct = w0.shape[0]
    ct8 = pad_lanes(ct)
    v0, v0t = packed(w0, expand_weight, cx)
    weights = [v0, packed(b0, pad_last, ct8)]
    if with_y:
        cx2, cp = x2.shape[3], w1.shape[0]
        cp8 = pad_lanes(cp)
        xs = (x.detach().contiguous().numpy(), x2.detach().contiguous().numpy())
        v1, v1t = packed(w1, expand_weight, cx2)
        weights += [v1, packed(b1, pad_last, cp8)]
        wq, wqt = packed(w1, own_weight, cx2, ct)
    else:
        cx2, cp, cp8 = 1, 0, LANES
        xs = (x.detach().contiguous().numpy(), np.zeros((1, 1, 1, 1), dt))
        weights += [np.zeros((1, 6 * cp8), dt), np.zeros(cp8, dt)]
        v1t, wq, wqt = (
            np.zeros((6 * cp8, LANES), dt),
            np.zeros((1, 2 * cp8), dt),
            np.zeros((2 * cp8, 1), dt),
        )
    mk = mask.numpy() if mask.dtype == torch.bool else mask.to(torch.bool).numpy()
    y_shape = (nb, n, n, cp8) if with_y else (1, 1, 1, cp8)
    outs = tuple(np.empty((nb, n, n, ct8) if k < 4 else y_shape, dt) for k in range(8))
    keep_t = with_y and bool(keep_t)
    t_all = np.empty((nb, n**3 * ct8) if keep_t else (1, 1), dt)
    args = (xs, tuple(weights), wq, mk, bool(exclude_self), with_y, keep_t, t_all, outs)
    parallel([lambda lo=lo, hi=hi: _forward(lo, hi, *args) for lo, hi in split_batch(mk, 3)])
    saved = (xs, weights, (v0t, v1t, wqt), mk, bool(exclude_self), t_all if keep_t else None, outs)
    result = [torch.from_numpy(outs[0][..., :ct]), torch.from_numpy(outs[1][..., :ct])]
    if with_y:
        result += [torch.from_numpy(outs[4][..., :cp]), torch.from_numpy(outs[5][..., :cp])]
    else:
        result += [None, None]
    return tuple(result), (with_y, (cx, ct, cx2, cp), saved)


class Block3(torch.autograd.Function):
    """Differentiable fused block (module docstring):
    ``(X, V, b, X', V', b', mask, exclude_self, needs_grad) -> (∃T, ∀T, ∃Y, ∀Y)``.

    Args:
        X: ``[B, N, N, C_x]`` the first layer's arity-2 input; ``V``: ``[C_t, 6 C_x]`` and ``b``:
            ``[C_t]`` its arity-3 linear layer (expansions only).
        X': ``[B, N, N, C_x']`` the second layer's arity-2 input; ``V'``: ``[C_p, 6 (C_x' + C_t)]``
            and ``b'``: ``[C_p]`` its arity-3 linear layer (None: no ``Y``; the last two outputs
            are then None).
        mask: bool ``[B, N]``, the real objects. ``exclude_self``: skip ``k in {i, j}``.
        needs_grad: keep ``T`` for a backward pass.

    Returns:
        ``[B, N, N, C_t]`` twice and ``[B, N, N, C_p]`` twice: the activated ∃ and ∀ over the
        valid ``k`` (an empty reduction gives 0 and 1; a padded ``i`` or ``j`` gives 0, a
        constant). Each gradient goes to the selected ``k``.
    """

    @staticmethod
    def forward(ctx, x, w0, b0, x2, w1, b1, mask, exclude_self, needs_grad):
        result, (ctx.with_y, ctx.dims, ctx.saved) = block3_forward(
            x, w0, b0, x2, w1, b1, mask, exclude_self, needs_grad
        )
        return result

    @staticmethod
    def backward(ctx, g_ex_t, g_fa_t, g_ex_y, g_fa_y):
        cx, ct, cx2, cp = ctx.dims
        xs, weights, weights_t, mk, exclude_self, t_all, outs = ctx.saved
        with_y = ctx.with_y
        if with_y and t_all is None:
            raise RuntimeError("Block3 ran with needs_grad=False: T was not kept for the backward pass")
        w0n, b0n, w1n, b1n = weights
        dt = w0n.dtype
        nb, n = mk.shape

        def arr(g: Tensor | None, like: np.ndarray) -> np.ndarray:
            return np.zeros_like(like) if g is None else as_array(g, like.shape[3])

        grads = (arr(g_ex_t, outs[0]), arr(g_fa_t, outs[1]), arr(g_ex_y, outs[4]), arr(g_fa_y, outs[5]))
        want_dx = ctx.needs_input_grad[0]
        dxs = (
            np.empty((nb, n, n, weights_t[0].shape[1]) if want_dx else (1, 1, 1, 1), dt),
            np.empty((nb, n, n, weights_t[1].shape[1]) if with_y else (1, 1, 1, 1), dt),
        )
        splits = split_batch(mk, 3)
        partial = [tuple(np.zeros_like(a) for a in (w0n, b0n, w1n, b1n, weights_t[2])) for _ in splits]
        t_arg = t_all if with_y else np.zeros((1, 1), dt)
        args = (xs, weights_t, t_arg, mk, exclude_self, with_y, outs, grads, dxs)
        parallel(
            [
                lambda lo=lo, hi=hi, sums=sums: _backward(lo, hi, *args, sums)
                for (lo, hi), sums in zip(splits, partial, strict=True)
            ]
        )
        dw0n, db0n, dw1n, db1n, dwt = (np.sum(a, axis=0) for a in zip(*partial, strict=True))
        ct8 = b0n.shape[0]
        # [C_x, 6 ct8] -> the Linear's [C_t, 6 C_x]
        dw0 = torch.from_numpy(dw0n).view(cx, 6, ct8)[:, :, :ct].permute(2, 1, 0).reshape(ct, 6 * cx)
        out = [
            torch.from_numpy(dxs[0][..., :cx]) if want_dx else None,
            dw0.contiguous(),
            torch.from_numpy(db0n[:ct]),
        ]
        if not with_y:
            return (*out, None, None, None, None, None, None)
        cp8 = b1n.shape[0]
        exp = torch.from_numpy(dw1n).view(cx2, 6, cp8)[:, :, :cp].permute(2, 1, 0)  # [C_p, 6, C_x']
        dwq = torch.from_numpy(np.ascontiguousarray(dwt.T))  # [3 ct8, 2 cp8], like wq
        own = dwq.view(3, ct8, 2, cp8).permute(0, 2, 1, 3).reshape(6, ct8, cp8)[:, :ct, :cp]  # W_p
        dw1 = torch.cat([exp, own.permute(2, 0, 1)], dim=2).reshape(cp, 6 * (cx2 + ct))
        out += [torch.from_numpy(dxs[1][..., :cx2]), dw1.contiguous(), torch.from_numpy(db1n[:cp])]
        return (*out, None, None, None)


def block3(x, w0, b0, x2, w1, b1, mask: Tensor, exclude_self: bool) -> tuple:
    """`Block3` (same arguments and outputs, ``needs_grad`` derived): through autograd when a
    gradient is wanted, else the kernels are called directly (inference: `Function.apply`'s
    bookkeeping costs about as much as the kernels on the few states of one search expansion)."""
    if needs_grad(x, w0, b0, x2, w1, b1):
        return Block3.apply(x, w0, b0, x2, w1, b1, mask, exclude_self, True)
    return block3_forward(x, w0, b0, x2, w1, b1, mask, exclude_self, False)[0]
