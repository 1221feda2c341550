r"""The arity <= 1 outputs of one NLM layer in one compiled call, for the inference path.

Why compiled: on the few states of one search expansion, the arity <= 1 outputs are tiny (``[B, N,
C]`` arrays), and computing them with numpy costs a few dozen array operations per layer
(concatenations, reductions, matrix products, the sigmoid), each a microsecond or more of fixed
cost: more than the arithmetic. `low_arity_forward` does all of one layer's in one call:

.. math::
    Y_1[a] = \sigma\big(b_1 + X_0 V_1 + [X_1[a] \| \exists X_2[a] \| \forall X_2[a]] W_1\big),
    \qquad
    Y_0 = \sigma\big(b_0 + [X_0 \| \exists X_1 \| \forall X_1] W_0\big)

(the same function as `agents.models.nlm.layer.NLMLayer` at arities 0 and 1: one permutation each; ∃/∀
over the real objects, ``z != a`` for ``∃X_2[a]`` with ``exclude_self``, 0 / 1 when empty). With
``reduce1`` the arity-1 output is returned as ``σ(max_a (own part) + b_1 + X_0 V_1)`` and the min,
as `NLMLayer` does for an output that the next layer only reduces; without ``act`` (the output
layer) the outputs are the raw linear maps.

Layouts (`agents.models.nlm.fast.inference` builds them): channel axes are padded to multiples of the SIMD
width, with zero weight rows for padded input channels (an absent input has 0 channels); an
input arity comes either in full (``x1``, ``x2``) or already reduced by the layer before (``r1``,
``r2``: ``(∃, ∀)``), never both, and an absent form has 0 channels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.models.nlm.fast.jit import INLINE, JIT, real_objects, vmax_min
from agents.models.nlm.fast.simd import LANES, vadd, vbcast, vfill, vfma, vload, vsigmoid, vstore

__all__ = ["low_arity_forward"]


@njit(**INLINE)
def _matvec(z, z_off, cz, w, w_row, co, ob, acc):
    """``acc + z[z_off : z_off + cz] @ w[w_row : w_row + cz, ob : ob + 8]`` (``w``: ``[*, co]``)."""
    for q in range(cz):
        acc = vfma(vbcast(z, z_off + q), vload(w, (w_row + q) * co + ob), acc)
    return acc


@njit(**INLINE)
def _reduce_rows(x, row0, objs, n, skip, ch, c0, zero, one):
    """∃ / ∀ (max, min) of ``x``'s rows ``row0 + objs[t]`` (``ch`` channels; ``t < n``, ``t !=
    skip``), channels ``c0 .. c0 + 7``; 0 / 1 when no row is left."""
    mx, mn = vfill(x, -np.inf), vfill(x, np.inf)
    for t in range(n):
        if t == skip:
            continue
        v = vload(x, (row0 + objs[t]) * ch + c0)
        mx, mn = vmax_min(v, mx, mn)
    if n == 0 or (n == 1 and skip == 0):
        return zero, one
    return mx, mn


@njit(**JIT)
def low_arity_forward(lo, hi, xs, reds, mask, exclude_self, weights, flags, outs):
    """Batch rows ``lo .. hi - 1`` of one layer's arity <= 1 outputs (module docstring).

    Args:
        xs: ``(x0 [B, C0], x1 [B, N, C1], x2 [B, N, N, C2])``, the layer's full inputs.
        reds: ``(e1, f1 [B, C1'], e2, f2 [B, N, C2'])``, inputs given reduced.
        weights: ``(v1 [C0, Co1], w1 [C1 + 2 C2'', Co1], b1 [Co1], w0 [C0 + 2 C1'', Co0], b0 [Co0])``
            with ``C2''`` the channels of whichever form of ``X_2`` is present (same for ``X_1``).
        flags: ``(out1, reduce1, out0, act)``: which outputs, arity 1 reduced, activated (a
            layer activates all of its outputs or none).
        outs: ``(y1 [B, N, Co1], e1 [B, Co1], f1 [B, Co1], y0 [B, Co0])``; ``y1`` is written on real
            objects only.
    """
    x0, x1, x2 = xs
    r1e, r1f, r2e, r2f = reds
    v1, w1, b1, w0, b0 = weights
    out1, reduce1, out0, act = flags
    y1, e1, f1, y0 = outs
    big_n = mask.shape[1]
    c0n, c1n, c2n = x0.shape[1], x1.shape[2], x2.shape[3]
    full1, full2 = c1n > 0, c2n > 0
    c1r, c2r = (c1n if full1 else r1e.shape[1]), (c2n if full2 else r2e.shape[2])
    co1, co0 = b1.shape[0], b0.shape[0]
    dt = b1.dtype
    zero, one = vfill(b1, 0.0), vfill(b1, 1.0)
    objs = np.empty(big_n, np.int64)
    e2, f2 = np.empty(big_n * max(c2r, 1), dt), np.empty(big_n * max(c2r, 1), dt)
    red1 = np.empty(2 * max(c1r, 1), dt)
    for b in range(lo, hi):
        n = real_objects(mask, b, objs)
        if out1:
            # ∃ / ∀ X_2[a] over z, as compact [n, C2] rows (given, or reduced here)
            for t in range(n):
                for c in range(0, c2r, LANES):
                    if full2:
                        skip = t if exclude_self else -1
                        row0 = (b * big_n + objs[t]) * big_n
                        mx, mn = _reduce_rows(x2, row0, objs, n, skip, c2n, c, zero, one)
                    else:
                        off = (b * big_n + objs[t]) * c2r + c
                        mx, mn = vload(r2e, off), vload(r2f, off)
                    vstore(e2, t * c2r + c, mx)
                    vstore(f2, t * c2r + c, mn)
            for ob in range(0, co1, LANES):
                const = _matvec(x0, b * c0n, c0n, v1, 0, co1, ob, vload(b1, ob))
                mx, mn = vfill(b1, -np.inf), vfill(b1, np.inf)
                for t in range(n):
                    own = _matvec(x1, (b * big_n + objs[t]) * c1n, c1n, w1, 0, co1, ob, zero)
                    own = _matvec(e2, t * c2r, c2r, w1, c1n, co1, ob, own)
                    own = _matvec(f2, t * c2r, c2r, w1, c1n + c2r, co1, ob, own)
                    if reduce1:
                        mx, mn = vmax_min(own, mx, mn)
                    else:
                        y = vadd(own, const)
                        vstore(y1, (b * big_n + objs[t]) * co1 + ob, vsigmoid(y) if act else y)
                if reduce1:
                    vstore(e1, b * co1 + ob, vsigmoid(vadd(mx, const)))
                    vstore(f1, b * co1 + ob, vsigmoid(vadd(mn, const)))
        if out0:
            for c in range(0, c1r, LANES):
                if full1:
                    mx, mn = _reduce_rows(x1, b * big_n, objs, n, -1, c1n, c, zero, one)
                else:
                    mx, mn = vload(r1e, b * c1r + c), vload(r1f, b * c1r + c)
                vstore(red1, c, mx)
                vstore(red1, c1r + c, mn)
            for ob in range(0, co0, LANES):
                acc = _matvec(x0, b * c0n, c0n, w0, 0, co0, ob, vload(b0, ob))
                acc = _matvec(red1, 0, 2 * c1r, w0, c0n, co0, ob, acc)
                vstore(y0, b * co0 + ob, vsigmoid(acc) if act else acc)
