"""The masked ∃ / ∀ of NLM: max and min over the last object axis, restricted to valid entries.

One autograd function computes the pair; its backward routes each gradient to the selected entry
(two scatters), and to nothing for an empty reduction. This is the generic path, on any device;
on the CPU the compiled path (`agents.models.nlm.compiled`) computes the same function.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["masked_exists_forall"]


class _MaskedExistsForall(torch.autograd.Function):
    """(max, min) over the last object axis (dim ``-2``) of the entries where ``valid`` holds.

    Excluded entries count as ``lo`` for the max and ``hi`` for the min. The backward pass routes
    each gradient to the selected entry (two scatters), and to nothing for an empty row.
    """

    @staticmethod
    def forward(ctx, x: Tensor, valid: Tensor, lo: float, hi: float) -> tuple[Tensor, Tensor]:
        dim = max(x.dim(), valid.dim()) - 2
        mx, imx = torch.where(valid, x, lo).max(dim=dim)
        mn, imn = torch.where(valid, x, hi).min(dim=dim)
        nonempty = valid.any(dim=dim)
        ctx.save_for_backward(imx, imn, nonempty)
        ctx.dim = dim
        ctx.x_shape = x.shape
        ctx.full_shape = torch.broadcast_shapes(x.shape, valid.shape)
        return mx, mn

    @staticmethod
    def backward(ctx, g_mx: Tensor, g_mn: Tensor):
        imx, imn, nonempty = ctx.saved_tensors
        dim = ctx.dim
        g = torch.zeros(ctx.full_shape, dtype=g_mx.dtype, device=g_mx.device)
        g.scatter_add_(dim, imx.unsqueeze(dim), (g_mx * nonempty).unsqueeze(dim))
        g.scatter_add_(dim, imn.unsqueeze(dim), (g_mn * nonempty).unsqueeze(dim))
        if g.shape != ctx.x_shape:
            g = g.sum_to_size(ctx.x_shape)
        return g, None, None, None


def masked_exists_forall(x: Tensor, valid: Tensor, lo: float = 0.0, hi: float = 1.0) -> tuple[Tensor, Tensor]:
    """∃ (max) and ∀ (min) of ``x`` over its last object axis, restricted to ``valid`` entries.

    Args:
        x: ``[B] + [N]*k + [C]`` (``k >= 1``; size-1 axes broadcast against ``valid``).
        valid: bool, broadcastable to ``[B] + [N]*k + [1]``.
        lo, hi: values of the excluded entries for the max and the min (the value of an empty
            reduction): 0 and 1 for truth values, ``-inf`` and ``inf`` for pre-activations.

    Returns:
        ``(∃, ∀)``, each ``[B] + [N]*(k-1) + [C]``.
    """
    return _MaskedExistsForall.apply(x, valid, lo, hi)
