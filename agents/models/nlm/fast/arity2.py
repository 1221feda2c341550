r"""An NLM layer's arity-2 output (or its ∃ / ∀ for the next layer), compiled, with its gradients.

Why hand-written: on a batch of ``[B, N, N, C]`` tensors PyTorch runs an arity-2 output as a
concatenation, a matrix product, a transposed add for the second permutation, two broadcast adds
of the expansions, the bias and the sigmoid (and a reduction when the next layer only reduces
it), each a full pass over memory, with about as many operations again in the backward, and keeps
most intermediates for autograd. `arity2_output` does it in one pass per direction, over the real
objects of each batch element only, with 8-lane SIMD over channels
(`agents.models.nlm.fast.simd`), on batch slices in threads (`agents.models.nlm.fast.threads`).
It computes the function of the generic PyTorch path of `agents.models.nlm.layer.NLMLayer` (the
tests compare both); a gradient goes to the selected entry of a max or min, as there.
`arity2_forward` (the kernel) and `arity2_weights` (its weight layouts) are also what the
inference path (`agents.models.nlm.fast.inference`) calls directly.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch
from numba import njit
from torch import Tensor

from agents.errors import AgentError
from agents.models.nlm.fast.arrays import DTYPES, as_array, needs_grad, packed, pad_lanes, pad_last
from agents.models.nlm.fast.jit import INLINE, JIT, fill_padding, real_objects, vmax_min_arg, vsigmoid_grad
from agents.models.nlm.fast.simd import LANES, vadd, vbcast, veq_select, vfill, vfma, vload, vsigmoid, vstore
from agents.models.nlm.fast.threads import parallel, split_batch

__all__ = ["arity2_forward", "arity2_output", "arity2_weights"]


@njit(**INLINE)
def _a2_expand(x1, we, bias, b, objs, n, e0, e1):
    """Per real object ``a``: ``e0[a] = bias + x1[a] V_0`` (the expansion constant along the last
    axis) and ``e1[a] = x1[a] V_1`` (constant along the first); ``we = [V_0, V_1]``."""
    big_n, c1 = x1.shape[1], x1.shape[2]
    co = bias.shape[0]
    for a in range(n):
        x_off = (b * big_n + objs[a]) * c1
        for ob in range(0, co, LANES):
            s0, s1 = vload(bias, ob), vfill(bias, 0.0)
            for q in range(c1):
                xq = vbcast(x1, x_off + q)
                s0 = vfma(xq, vload(we, q * co + ob), s0)
                s1 = vfma(xq, vload(we, (c1 + q) * co + ob), s1)
            vstore(e0, a * co + ob, s0)
            vstore(e1, a * co + ob, s1)


@njit(**INLINE)
def _a2_own4(parts, offs, wo, b, big_n, oi, oj4, ob, s4):
    """Add the own terms ``Z[i, j] W_0 + Z[j, i] W_1`` (output block ``ob``) of four ``j`` (objects
    ``oj4``) to the accumulators ``s4``: eight chains sharing each weight load."""
    co = wo.shape[2]
    cown = offs[3]
    s0, s1, s2, s3 = s4
    t0 = t1 = t2 = t3 = vfill(wo, 0.0)
    oj0, oj1, oj2, oj3 = oj4
    r = b * big_n
    for k in range(3):
        ck = offs[k + 1] - offs[k]
        if ck == 0:
            continue
        p = parts[k]
        ij0, ij1 = ((r + oi) * big_n + oj0) * ck, ((r + oi) * big_n + oj1) * ck
        ij2, ij3 = ((r + oi) * big_n + oj2) * ck, ((r + oi) * big_n + oj3) * ck
        ji0, ji1 = ((r + oj0) * big_n + oi) * ck, ((r + oj1) * big_n + oi) * ck
        ji2, ji3 = ((r + oj2) * big_n + oi) * ck, ((r + oj3) * big_n + oi) * ck
        for q in range(ck):
            w_off = (offs[k] + q) * co + ob
            w0, w1 = vload(wo, w_off), vload(wo, cown * co + w_off)
            s0, t0 = vfma(vbcast(p, ij0 + q), w0, s0), vfma(vbcast(p, ji0 + q), w1, t0)
            s1, t1 = vfma(vbcast(p, ij1 + q), w0, s1), vfma(vbcast(p, ji1 + q), w1, t1)
            s2, t2 = vfma(vbcast(p, ij2 + q), w0, s2), vfma(vbcast(p, ji2 + q), w1, t2)
            s3, t3 = vfma(vbcast(p, ij3 + q), w0, s3), vfma(vbcast(p, ji3 + q), w1, t3)
    return vadd(s0, t0), vadd(s1, t1), vadd(s2, t2), vadd(s3, t3)


@njit(**JIT)
def arity2_forward(lo, hi, x1, parts, offs, weights, mask, exclude_self, reduce, outs):
    """Batch rows ``lo .. hi - 1`` of `arity2_output`. ``parts``: three ``[B, N, N, c_k]`` arrays
    (``c_k = offs[k + 1] - offs[k]``, 0 for an absent part); ``weights = (we, wo, bias)`` with
    ``we``: ``[2, C_1, C_o]`` and ``wo``: ``[2, C_own, C_o]`` (permutation identity, then swap);
    ``outs = (y, ex, fa, ix, im)`` (``y`` when not ``reduce``, the others when ``reduce``)."""
    we, wo, bias = weights
    y, ex, fa, ix, im = outs
    big_n = mask.shape[1]
    co = bias.shape[0]
    objs = np.empty(big_n, np.int64)
    e0, e1 = np.empty(big_n * co, bias.dtype), np.empty(big_n * co, bias.dtype)
    for b in range(lo, hi):
        n = real_objects(mask, b, objs)
        if reduce:
            fill_padding(ex, b, n, 0.0)
            fill_padding(fa, b, n, 0.0)
            fill_padding(ix, b, n, -1.0)
            fill_padding(im, b, n, -1.0)
        else:
            fill_padding(y, b, n, 0.0)
        _a2_expand(x1, we, bias, b, objs, n, e0, e1)
        for i in range(n):
            oi = objs[i]
            for ob in range(0, co, LANES):
                post = vload(e0, i * co + ob)
                mx, mn = vfill(bias, -np.inf), vfill(bias, np.inf)
                kx, kn = vfill(bias, -1), vfill(bias, -1)
                for j0 in range(0, n, 4):
                    nj = min(4, n - j0)  # rows past nj repeat the last one and are dropped
                    j4 = (j0, j0 + min(1, nj - 1), j0 + min(2, nj - 1), j0 + min(3, nj - 1))
                    s4 = (
                        vload(e1, j4[0] * co + ob),
                        vload(e1, j4[1] * co + ob),
                        vload(e1, j4[2] * co + ob),
                        vload(e1, j4[3] * co + ob),
                    )
                    oj4 = (objs[j4[0]], objs[j4[1]], objs[j4[2]], objs[j4[3]])
                    s4 = _a2_own4(parts, offs, wo, b, big_n, oi, oj4, ob, s4)
                    for t in range(nj):
                        pre = s4[0] if t == 0 else (s4[1] if t == 1 else (s4[2] if t == 2 else s4[3]))
                        j = j0 + t
                        if not reduce:
                            out = ((b * big_n + oi) * big_n + objs[j]) * co + ob
                            vstore(y, out, vsigmoid(vadd(pre, post)))
                        elif not (exclude_self and j == i):
                            jv = vfill(bias, j)
                            mx, kx, mn, kn = vmax_min_arg(pre, jv, mx, kx, mn, kn)
                if reduce:
                    out = (b * big_n + oi) * co + ob
                    vstore(ex, out, vsigmoid(vadd(mx, post)))
                    vstore(fa, out, vsigmoid(vadd(mn, post)))
                    vstore(ix, out, kx)
                    vstore(im, out, kn)


@njit(**INLINE)
def _a2_pre_grad(b, objs, n, big_n, co, reduce, outs, grads, dpre, de0, de1):
    """Pre-activation gradients of batch row ``b`` into ``dpre`` (``[n, n, C_o]``, compact), and
    their sums over ``j`` (``de0``, the expansion of ``i``) and over ``i`` (``de1``, of ``j``)."""
    y, ex, fa, ix, im = outs
    dy, g_ex, g_fa = grads
    one, zero = vfill(dpre, 1.0), vfill(dpre, 0.0)
    de0[: n * co] = 0.0
    de1[: n * co] = 0.0
    for i in range(n):
        oi = objs[i]
        for ob in range(0, co, LANES):
            acc = zero
            if reduce:  # each lane's gradient goes to the j equal to its argument
                out = (b * big_n + oi) * co + ob
                v = vload(ex, out)
                gx = vsigmoid_grad(vload(g_ex, out), v, one)
                v = vload(fa, out)
                gn = vsigmoid_grad(vload(g_fa, out), v, one)
                acc = vadd(gx, gn)
                kx, kn = vload(ix, out), vload(im, out)
            for j in range(n):
                if reduce:
                    jv = vfill(dpre, j)
                    d = vadd(veq_select(jv, kx, gx, zero), veq_select(jv, kn, gn, zero))
                else:
                    out = ((b * big_n + oi) * big_n + objs[j]) * co + ob
                    v = vload(y, out)
                    d = vsigmoid_grad(vload(dy, out), v, one)
                    acc = vadd(acc, d)
                vstore(dpre, (i * n + j) * co + ob, d)
                vstore(de1, j * co + ob, vadd(vload(de1, j * co + ob), d))
            vstore(de0, i * co + ob, vadd(vload(de0, i * co + ob), acc))


@njit(**INLINE)
def _a2_part_grad(b, objs, n, big_n, p, ck, w_row, wk, dpre, dp, dwo, cown):
    """Gradients of one own part ``p`` (``[B, N, N, c_k]``, weight rows from ``w_row``): the input
    ``dZ[i, j] = dpre[i, j] W_0^T + dpre[j, i] W_1^T`` into ``dp`` (``[B, N, N, c_kp]``; ``wk``:
    ``[2, C_o, c_kp]``, the weights transposed) and the weights ``dW_0[q] += Σ_ij Z[i, j, q]
    dpre[i, j]``, ``dW_1[q] += Σ_ij Z[j, i, q] dpre[i, j]`` into ``dwo``, summed in registers
    four input channels at a time."""
    co = dwo.shape[2]
    ckp = dp.shape[3]
    zero = vfill(dpre, 0.0)
    for i in range(n):
        oi = objs[i]
        for j in range(n):
            d_off = ((b * big_n + oi) * big_n + objs[j]) * ckp
            ij, ji = (i * n + j) * co, (j * n + i) * co
            for qb in range(0, ckp, LANES):
                a0, a1 = zero, zero
                for c in range(co):
                    a0 = vfma(vbcast(dpre, ij + c), vload(wk, c * ckp + qb), a0)
                    a1 = vfma(vbcast(dpre, ji + c), vload(wk, (co + c) * ckp + qb), a1)
                vstore(dp, d_off + qb, vadd(a0, a1))
    for ob in range(0, co, LANES):
        for q0 in range(0, ck, 4):
            nq = min(4, ck - q0)
            q1, q2, q3 = q0 + min(1, nq - 1), q0 + min(2, nq - 1), q0 + min(3, nq - 1)
            u0 = u1 = u2 = u3 = v0 = v1 = v2 = v3 = zero
            for i in range(n):
                oi = objs[i]
                for j in range(n):
                    oj = objs[j]
                    d = vload(dpre, (i * n + j) * co + ob)
                    ij, ji = ((b * big_n + oi) * big_n + oj) * ck, ((b * big_n + oj) * big_n + oi) * ck
                    u0, v0 = vfma(vbcast(p, ij + q0), d, u0), vfma(vbcast(p, ji + q0), d, v0)
                    u1, v1 = vfma(vbcast(p, ij + q1), d, u1), vfma(vbcast(p, ji + q1), d, v1)
                    u2, v2 = vfma(vbcast(p, ij + q2), d, u2), vfma(vbcast(p, ji + q2), d, v2)
                    u3, v3 = vfma(vbcast(p, ij + q3), d, u3), vfma(vbcast(p, ji + q3), d, v3)
            for t in range(nq):
                u = u0 if t == 0 else (u1 if t == 1 else (u2 if t == 2 else u3))
                v = v0 if t == 0 else (v1 if t == 1 else (v2 if t == 2 else v3))
                w_off = (w_row + q0 + t) * co + ob
                vstore(dwo, w_off, vadd(vload(dwo, w_off), u))
                vstore(dwo, cown * co + w_off, vadd(vload(dwo, cown * co + w_off), v))


@njit(**JIT)
def _a2_backward(lo, hi, x1, parts, offs, wet, wot, mask, reduce, outs, grads, dx1, dparts, sums):
    """Batch rows ``lo .. hi - 1`` of the backward of `arity2_forward`. ``wet``: ``[2, C_o, C_1p]``,
    ``wot``: three ``[2, C_o, c_kp]`` (the weights transposed, input channels padded to 8);
    ``grads = (dy, d_ex, d_fa)``; ``dx1``, ``dparts`` (padded channels) receive the input
    gradients of these rows; ``sums = (dwe, dwo, dbias)``: this slice's partial sums."""
    dwe, dwo, dbias = sums
    big_n = mask.shape[1]
    co = dbias.shape[0]
    c1, c1p = x1.shape[2], dx1.shape[2]
    dt = dbias.dtype
    objs = np.empty(big_n, np.int64)
    de0, de1 = np.empty(big_n * co, dt), np.empty(big_n * co, dt)
    dpre = np.empty(big_n * big_n * co, dt)
    for b in range(lo, hi):
        n = real_objects(mask, b, objs)
        for k in range(3):
            if offs[k + 1] > offs[k]:
                fill_padding(dparts[k], b, n, 0.0)
        if c1 > 0:
            fill_padding(dx1, b, n, 0.0)
        if n == 0:
            continue
        _a2_pre_grad(b, objs, n, big_n, co, reduce, outs, grads, dpre, de0, de1)
        for k in range(3):
            ck = offs[k + 1] - offs[k]
            if ck > 0:
                _a2_part_grad(b, objs, n, big_n, parts[k], ck, offs[k], wot[k], dpre, dparts[k], dwo, offs[3])
        # expansions and bias: e0[a] = bias + x1[a] V_0, e1[a] = x1[a] V_1
        for a in range(n):
            x_off = (b * big_n + objs[a]) * c1
            for ob in range(0, co, LANES):
                g0, g1 = vload(de0, a * co + ob), vload(de1, a * co + ob)
                vstore(dbias, ob, vadd(vload(dbias, ob), g0))
                for q in range(c1):
                    xq = vbcast(x1, x_off + q)
                    w0, w1 = q * co + ob, (c1 + q) * co + ob
                    vstore(dwe, w0, vfma(xq, g0, vload(dwe, w0)))
                    vstore(dwe, w1, vfma(xq, g1, vload(dwe, w1)))
            if c1 == 0:
                continue
            dx_off = (b * big_n + objs[a]) * c1p
            for qb in range(0, c1p, LANES):
                acc = vfill(dpre, 0.0)
                for c in range(co):
                    acc = vfma(vbcast(de0, a * co + c), vload(wet, c * c1p + qb), acc)
                    acc = vfma(vbcast(de1, a * co + c), vload(wet, (co + c) * c1p + qb), acc)
                vstore(dx1, dx_off + qb, acc)


def arity2_weights(w: np.ndarray, c1: int, offs: tuple[int, ...]) -> tuple:
    """The kernels' layouts of an arity-2 weight ``[C_o, 2 (C_1 + C_own)]`` (``offs``: the own
    parts' channel offsets): ``we`` ``[2, C_1, C_o8]``, ``wo`` ``[2, C_own, C_o8]``, and transposed,
    input channels padded: ``wet`` ``[2, C_o8, C_1p]`` and one ``[2, C_o8, c_kp]`` per own part."""
    co, co8 = w.shape[0], pad_lanes(w.shape[0])
    w3 = pad_last(w.reshape(co, 2, -1).transpose(1, 2, 0), co8)  # [2, C_in, C_o8]
    we = w3[:, :c1] if c1 else np.zeros((2, 1, co8), w.dtype)
    wo = np.ascontiguousarray(w3[:, c1:])
    wt = w3.transpose(0, 2, 1)  # [2, C_o8, C_in]
    wet = pad_last(wt[:, :, :c1], pad_lanes(c1))
    wot = tuple(
        pad_last(wt[:, :, c1 + lo : c1 + hi], pad_lanes(hi - lo)) for lo, hi in itertools.pairwise(offs)
    )
    return np.ascontiguousarray(we), wo, wet, wot


def _a2_run(x1, p0, p1, p2, weight, bias, mask, exclude_self, reduce) -> tuple[tuple[Tensor, ...], tuple]:
    """The forward kernel of `arity2_output`: the outputs and what the backward pass needs."""
    dt = DTYPES[weight.dtype]
    nb, n = mask.shape
    co, co8 = weight.shape[0], pad_lanes(weight.shape[0])
    present = [p is not None for p in (p0, p1, p2)]
    offs = tuple(itertools.accumulate((p.shape[-1] if p is not None else 0 for p in (p0, p1, p2)), initial=0))
    c1 = 0 if x1 is None else x1.shape[-1]
    we, wo, wet, wot = packed(weight, arity2_weights, c1, offs)
    bn = packed(bias, pad_last, co8)
    x1n = x1.detach().contiguous().numpy() if x1 is not None else np.zeros((1, 1, 0), dt)
    dummy = np.zeros((1, 1, 1, 1), dt)
    parts = tuple(p.detach().contiguous().numpy() if p is not None else dummy for p in (p0, p1, p2))
    mk = mask.numpy() if mask.dtype == torch.bool else mask.to(torch.bool).numpy()
    y_shape, red_shape = ((1, 1, 1, co8), (nb, n, co8)) if reduce else ((nb, n, n, co8), (1, 1, co8))
    outs = tuple(np.empty(y_shape if k == 0 else red_shape, dt) for k in range(5))
    offs_n = np.array(offs, np.int64)
    args = (x1n, parts, offs_n, (we, wo, bn), mk, bool(exclude_self), bool(reduce), outs)
    parallel([lambda lo=lo, hi=hi: arity2_forward(lo, hi, *args) for lo, hi in split_batch(mk, 2)])
    saved = (x1n, parts, offs_n, wet, wot, mk, outs, bool(reduce), present, co)
    if reduce:
        return (torch.from_numpy(outs[1][..., :co]), torch.from_numpy(outs[2][..., :co])), saved
    return (torch.from_numpy(outs[0][..., :co]),), saved


class _Arity2Output(torch.autograd.Function):
    """``(x1, p0, p1, p2, weight, bias, mask, exclude_self, reduce)`` -> ``Y`` or ``(∃Y, ∀Y)``; see
    `arity2_output` (absent inputs are None)."""

    @staticmethod
    def forward(ctx, x1, p0, p1, p2, weight, bias, mask, exclude_self, reduce):
        out, ctx.saved = _a2_run(x1, p0, p1, p2, weight, bias, mask, exclude_self, reduce)
        return out if reduce else out[0]

    @staticmethod
    def backward(ctx, *grads):
        x1n, parts, offs, wet, wot, mk, outs, reduce, present, co = ctx.saved
        dt = x1n.dtype
        nb, n = mk.shape
        c1, co8 = x1n.shape[2], wet.shape[1]
        if reduce:
            gy = np.zeros((1, 1, 1, co8), dt)
            g_ex, g_fa = (np.zeros_like(outs[1]) if g is None else as_array(g, co8) for g in grads)
        else:
            gy = as_array(grads[0], co8)
            g_ex = g_fa = np.zeros((1, 1, co8), dt)
        dparts = tuple(
            np.empty((nb, n, n, wot[k].shape[2]) if present[k] else (1, 1, 1, LANES), dt) for k in range(3)
        )
        dx1 = np.empty((nb, n, wet.shape[2]) if c1 else (1, 1, LANES), dt)
        splits = split_batch(mk, 2)
        cown = int(offs[3])
        sums = [
            (np.zeros((2, max(c1, 1), co8), dt), np.zeros((2, max(cown, 1), co8), dt), np.zeros(co8, dt))
            for _ in splits
        ]
        args = (x1n, parts, offs, wet, wot, mk, reduce, outs, (gy, g_ex, g_fa), dx1, dparts)
        parallel(
            [
                lambda lo=lo, hi=hi, s=s: _a2_backward(lo, hi, *args, s)
                for (lo, hi), s in zip(splits, sums, strict=True)
            ]
        )
        dwe, dwo, db = (np.sum(xs, axis=0) for xs in zip(*sums, strict=True))
        dw = np.concatenate([dwe[:, :c1], dwo[:, :cown]], axis=1)[:, :, :co]  # [2, C_in, C_o]
        dw = np.ascontiguousarray(dw.transpose(2, 0, 1).reshape(co, -1))  # the Linear's [C_o, 2 C_in]
        dps = [
            torch.from_numpy(dparts[k][..., : offs[k + 1] - offs[k]]) if present[k] else None
            for k in range(3)
        ]
        dx = torch.from_numpy(dx1[..., :c1]) if c1 else None
        return dx, *dps, torch.from_numpy(dw), torch.from_numpy(db[:co]), None, None, None


def arity2_output(
    x1: Tensor | None,
    parts: list[Tensor],
    weight: Tensor,
    bias: Tensor,
    mask: Tensor,
    exclude_self: bool,
    reduce: bool,
) -> Tensor | tuple[Tensor, Tensor]:
    r"""An NLM layer's activated arity-2 output, or its (∃, ∀) over the last object axis.

    .. math::
        Y[i,j] = \sigma\big(b + X_1[i] V_0 + X_1[j] V_1 + Z[i,j] W_0 + Z[j,i] W_1\big),
        \qquad Z = [Z_1 \| Z_2 \| Z_3]

    (``weight`` is the layer's ``nn.Linear(2 (C_1 + C_Z), C_o)`` weight, permutation-major: the
    identity's ``[V_0 | W_0]``, then the swap's). With ``reduce``, returns
    ``σ(max_j (Y's pre-activation without b + X_1[i] V_0) + b + X_1[i] V_0)`` and the min, over
    the real ``j`` (``j != i`` with ``exclude_self``), as `agents.models.nlm.layer.NLMLayer` does for an
    output that the next layer only reduces.

    Args:
        x1: ``[B, N, C_1]``, or None. parts: the ``[B, N, N, c_k]`` tensors of ``Z`` (1 to 3).
        weight, bias: the linear layer. mask: bool ``[B, N]``, the real objects.

    Returns:
        ``[B, N, N, C_o]`` (0 where ``i`` or ``j`` is padding), or two ``[B, N, C_o]`` (0 where ``i``
        is padding).
    """
    if not 1 <= len(parts) <= 3:
        raise AgentError(f"arity2_output takes 1 to 3 arity-2 parts, got {len(parts)}")
    p0, p1, p2 = [*parts, None, None][:3]
    if needs_grad(x1, p0, p1, p2, weight, bias):
        return _Arity2Output.apply(x1, p0, p1, p2, weight, bias, mask, exclude_self, reduce)
    out = _a2_run(x1, p0, p1, p2, weight, bias, mask, exclude_self, reduce)[0]
    return out if reduce else out[0]
