r"""The textbook Neural Logic Machine, written literally: the definition the fast code must match.

For each layer and output arity ``r`` (Dong et al., 2019, section 3):

.. math::
    Z_r = \big[\mathrm{expand}(X_{r-1}) \,\|\, X_r \,\|\, \exists X_{r+1} \,\|\, \forall X_{r+1}\big],
    \qquad
    Y_r = \sigma\Big(\mathrm{Linear}_r\big([\pi(Z_r)]_{\pi \in S_r}\big)\Big)

materialised step by step: ``expand`` copies the tensor along a new last object axis, ∃ / ∀ are
``max`` / ``min`` over the last object axis (over real objects only, and with ``exclude_self``
over objects not already in the tuple; an empty ∃ is 0 and an empty ∀ is 1), every permutation of
the ``r`` object axes is concatenated, and the layer's ``nn.Linear`` is applied (then the sigmoid,
except in the output layer). It reads the weights of an `agents.models.nlm.network.NLM`, which
computes the same function without materialising any of this (the tests compare the two, values
and gradients); it is slow and meant for tests and for reading.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import TYPE_CHECKING

import torch
from torch import Tensor

if TYPE_CHECKING:
    from agents.models.nlm.network import NLM

__all__ = ["reference_nlm"]


def _valid(mask: Tensor, k: int, exclude_self: bool) -> Tensor:
    """Bool ``[B] + [N]*k + [1]``: the entries of the last object axis that ∃ / ∀ range over."""
    batch, n = mask.shape
    valid = torch.zeros([batch] + [n] * k, dtype=torch.bool)
    for b, t in itertools.product(range(batch), itertools.product(range(n), repeat=k)):
        valid[(b, *t)] = bool(mask[b, t[-1]]) and not (exclude_self and t[-1] in t[:-1])
    return valid.unsqueeze(-1)


def reference_nlm(model: NLM, inputs: Mapping[str, Tensor]) -> Tensor:
    """``model``'s output ``[B, n_outputs]`` on ``inputs`` (`NLM`'s input format), in float64."""
    mask = inputs["object_mask"].bool()
    n = mask.shape[1]
    h = {k: inputs[f"arity{k}"].to(torch.float64) for k in model.in_channels}
    for layer in model.layers:
        new = {}
        for r in layer.out_channels:
            parts = []
            if r >= 1 and r - 1 in layer.in_channels:  # expand
                x = h[r - 1].unsqueeze(r)
                parts.append(x.expand(*x.shape[:r], n, x.shape[-1]))
            if r in layer.in_channels:
                parts.append(h[r])
            if r + 1 in layer.in_channels:  # reduce: exists, forall
                valid = _valid(mask, r + 1, model.exclude_self)
                parts.append(torch.where(valid, h[r + 1], 0.0).amax(dim=r + 1))
                parts.append(torch.where(valid, h[r + 1], 1.0).amin(dim=r + 1))
            z = torch.cat(parts, -1)
            perms = itertools.permutations(range(r))  # permute, then one linear layer
            z = torch.cat([z.permute(0, *(1 + q for q in p), r + 1) for p in perms], -1)
            y = layer.linears[str(r)](z)
            new[r] = torch.sigmoid(y) if layer.activation else y
        h = new
    return h[0]
