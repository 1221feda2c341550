r"""The WL model: a linear map of a state's WL colour counts, :math:`y = W \frac{x - m}{s} + b`.

``n_outputs`` rows of W: μ, and σ's logit for heads that learn σ. The counts are standardised by
their mean m and standard deviation s over the training states (a feature that never varies in
training gets weight 0: it carries no information there, and test tasks far larger than the
training ones must not meet an untrained weight). W and b start at zero (the loss is convex).

The model owns its fitted `WLFeaturizer` (rebuilt from ``featurizer``, the JSON in model.json),
so its input is either a tensor of counts or any object with ``features(featurizer) -> Tensor``
(`agents.models.wl.inputs`): the training inputs compute and cache a whole dataset's counts on
the first batch, the search inputs compute those of one expansion's states.

Out of training (``model.eval()``), the linear map sums its float32 terms in float64 and rounds
the outputs to float32 once: a float32 matrix product sums in an order that depends on the batch
(its size, the row's place in it), so the same state got values an ulp apart in different
batches, and states with equal counts did not tie. Now a state's value depends on its counts
alone, and equals the compiled heuristic's (`agents.models.wl.compiled`) to the last bit.
Training steps keep the float32 product.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from agents.errors import AgentError
from agents.models.wl.features import WLFeaturizer

__all__ = ["WLLinear"]


class WLLinear(nn.Module):
    """Linear model on WL features.

    Args:
        n_outputs: raw outputs per state (1: μ; 2: μ and σ's logit).
        featurizer: `WLFeaturizer.config` of the fitted colour table.
        mean, std: per-feature mean and standard deviation of the training states' counts.

    Shapes: input ``[B, n_features]`` counts (or an object computing them); output ``[B, n_outputs]``.
    """

    def __init__(
        self, n_outputs: int, featurizer: dict[str, Any], mean: list[float], std: list[float]
    ) -> None:
        super().__init__()
        self.featurizer = WLFeaturizer.from_config(featurizer)
        n = self.featurizer.n_features
        if n_outputs < 1 or len(mean) != n or len(std) != n:
            raise AgentError(f"WLLinear needs n_outputs >= 1 and mean/std of its {n} features")
        self.n_outputs, self.n_features = n_outputs, n
        std_t = torch.tensor(std, dtype=torch.float32)
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32), persistent=False)
        inv = torch.where(std_t > 0, 1.0 / std_t.clamp_min(1e-12), torch.zeros_like(std_t))
        self.register_buffer("inv_std", inv, persistent=False)
        self.linear = nn.Linear(n, n_outputs)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.zeros_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)

    def forward(self, x: Any) -> Tensor:
        if not isinstance(x, Tensor):
            x = x.features(self.featurizer)
        x = x.to(device=self.mean.device, dtype=self.linear.weight.dtype)
        z = (x - self.mean) * self.inv_std
        if self.training:
            return self.linear(z)
        weight, bias = self.linear.weight.double(), self.linear.bias.double()
        return nn.functional.linear(z.double(), weight, bias).to(z.dtype)
