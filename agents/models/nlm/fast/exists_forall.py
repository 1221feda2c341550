r"""The masked ∃ / ∀ (max / min over the last object axis) of an NLM layer, compiled.

Why hand-written: in PyTorch the masked ∃/∀ of a ``[B, N, N, C]`` tensor over its last object
axis is five full passes (two ``where``, ``max``, ``min``, ``any``), its backward a zero-filled
tensor and two scatters. `masked_max_min` does it in one pass each way, over the real objects of
each batch element only, with 8-lane SIMD over channels (`agents.models.nlm.fast.simd`). It
computes the function of `agents.models.nlm.reductions.masked_exists_forall` (the tests compare
both); a gradient goes to the selected entry of a max or min, as there.
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit
from torch import Tensor

from agents.models.nlm.fast.arrays import as_array, needs_grad, pad_lanes
from agents.models.nlm.fast.jit import JIT, vmax_min_arg
from agents.models.nlm.fast.simd import LANES, vfill, vgt_select, vload, vstore

__all__ = ["masked_max_min"]


@njit(**JIT)
def _max_min_fwd(x, mask, exclude_self, lo, hi, outs):
    """``x``: ``[R, N, C]`` (rows ``r = b * per_b + j``, ``per_b = R // B``: 1 for arity 1, ``N``
    for arity 2 with ``j`` the other object); ``outs = (max, min, argmax, argmin)``, ``[R, C]``."""
    mx_out, mn_out, ix_out, im_out = outs
    nr, n, ch = x.shape
    per_b = nr // mask.shape[0]
    zero, one = vfill(x, 0.0), vfill(x, 1.0)
    for r in range(nr):
        b, j = r // per_b, r % per_b
        for c0 in range(0, ch, LANES):
            mx, mn = vfill(x, -np.inf), vfill(x, np.inf)
            ix, im = vfill(x, -1), vfill(x, -1)
            for z in range(n):
                if not mask[b, z] or (exclude_self and per_b > 1 and z == j):
                    continue
                v = vload(x, (r * n + z) * ch + c0)
                zv = vfill(x, z)
                mx, ix, mn, im = vmax_min_arg(v, zv, mx, ix, mn, im)
            empty = vgt_select(zero, ix, one, zero)  # 1 where no entry was valid
            vstore(mx_out, r * ch + c0, vgt_select(empty, zero, vfill(x, lo), mx))
            vstore(mn_out, r * ch + c0, vgt_select(empty, zero, vfill(x, hi), mn))
            vstore(ix_out, r * ch + c0, ix)
            vstore(im_out, r * ch + c0, im)


@njit(**JIT)
def _max_min_bwd(ix, im, g_mx, g_mn, dx):
    """Route ``g_mx`` / ``g_mn`` (``[R, C]``) to the selected entries of ``dx`` (``[R, N, C]``)."""
    nr, ch = ix.shape
    for r in range(nr):
        dx[r] = 0.0
        for c in range(ch):
            z = int(ix[r, c])
            if z >= 0:
                dx[r, z, c] += g_mx[r, c]
            z = int(im[r, c])
            if z >= 0:
                dx[r, z, c] += g_mn[r, c]


def _max_min_run(
    x: Tensor, mask: Tensor, exclude_self: bool, lo: float, hi: float
) -> tuple[Tensor, Tensor, tuple[np.ndarray, np.ndarray]]:
    """The forward kernel of `masked_max_min`: ``(max, min, (argmax, argmin))``."""
    shape = x.shape
    batch, n, ch = shape[0], shape[-2], shape[-1]
    ch8 = pad_lanes(ch)
    xn = as_array(x.reshape(-1, n, ch), ch8)
    rows = xn.shape[0]
    outs = tuple(np.empty((rows, ch8), xn.dtype) for _ in range(4))
    mk = as_array(mask.to(torch.bool))
    _max_min_fwd(xn, mk, bool(exclude_self) and rows > batch, float(lo), float(hi), outs)
    out_shape = (*shape[:-2], ch)
    mx, mn = (torch.from_numpy(o[:, :ch]).reshape(out_shape) for o in outs[:2])
    return mx, mn, (outs[2][:, :ch], outs[3][:, :ch])


class _CompiledExistsForall(torch.autograd.Function):
    """``(x, mask, exclude_self, lo, hi) -> (max, min)``; see `masked_max_min`."""

    @staticmethod
    def forward(ctx, x: Tensor, mask: Tensor, exclude_self: bool, lo: float, hi: float):
        mx, mn, (ix, im) = _max_min_run(x, mask, exclude_self, lo, hi)
        ctx.saved = (np.ascontiguousarray(ix), np.ascontiguousarray(im))
        ctx.shape = x.shape
        return mx, mn

    @staticmethod
    def backward(ctx, g_mx: Tensor | None, g_mn: Tensor | None):
        ix, im = ctx.saved
        rows, ch = ix.shape

        def arr(g: Tensor | None) -> np.ndarray:
            return np.zeros((rows, ch), ix.dtype) if g is None else as_array(g.reshape(rows, ch))

        dx = np.empty((rows, ctx.shape[-2], ch), ix.dtype)
        _max_min_bwd(ix, im, arr(g_mx), arr(g_mn), dx)
        return torch.from_numpy(dx).reshape(ctx.shape), None, None, None, None


def masked_max_min(
    x: Tensor, mask: Tensor, exclude_self: bool, lo: float = 0.0, hi: float = 1.0
) -> tuple[Tensor, Tensor]:
    """∃ (max) and ∀ (min) of ``x`` over its last object axis ``z``, over the real ``z``.

    Args:
        x: ``[B] + [N]*k + [C]`` with ``k`` in 1, 2; float32 or float64 on the CPU.
        mask: bool ``[B, N]``, the real objects.
        exclude_self: for ``k = 2``, skip ``z == j`` (the reduced object repeats the other one).
        lo, hi: the max and min of an empty reduction.

    Returns:
        ``(max, min)``, each ``[B] + [N]*(k-1) + [C]``.
    """
    if needs_grad(x):
        return _CompiledExistsForall.apply(x, mask, exclude_self, lo, hi)
    return _max_min_run(x, mask, exclude_self, lo, hi)[:2]
