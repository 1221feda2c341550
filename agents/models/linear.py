r"""Linear regression on the hand-crafted planning features of Gomoluch et al. (2017).

.. math::
    y = W \phi(s) + b, \qquad
    \phi(s) = [h^{gc}(s),\ h^{FF}(s),\ \textstyle\sum_{a \in \pi^+} |del(a)|,\
               \tfrac{1}{|\pi^+|}\sum_{a \in \pi^+} |del(a)|]

``h^gc`` is the goal count, ``π⁺`` is FF's relaxed plan, and the last two features are the total
and mean number of delete effects it ignores (0 for an empty relaxed plan). The features come
from the heuristic engine (``HFF.features`` / ``features_batch`` in `pddlgym_sl.heuristics`);
they are used raw, as by the pddlsl authors (no normalisation, no weight decay).
"""

from __future__ import annotations

from torch import Tensor, nn

__all__ = ["GOMOLUCH_FEATURES", "LinearRegression"]

# Same order and names as `pddlgym_sl.heuristics.relaxation.FEATURE_NAMES` (what HFF.features gives).
GOMOLUCH_FEATURES = ("goal_count", "hff", "relaxed_plan_deletes", "relaxed_plan_mean_deletes")


class LinearRegression(nn.Module):
    """Linear map from the Gomoluch features to ``n_outputs`` raw values.

    Args:
        n_outputs: raw outputs per state (1: mu, 2: mu and sigma).
        in_features: number of features (4: `GOMOLUCH_FEATURES`).

    Shapes:
        - input: ``[B, in_features]`` (any float dtype; cast to the module's).
        - output: ``[B, n_outputs]``.
    """

    def __init__(self, n_outputs: int, in_features: int = len(GOMOLUCH_FEATURES)):
        super().__init__()
        if min(n_outputs, in_features) < 1:
            raise ValueError("n_outputs and in_features must be positive")
        self.n_outputs, self.in_features = n_outputs, in_features
        self.linear = nn.Linear(in_features, n_outputs)

    def reset_parameters(self) -> None:
        self.linear.reset_parameters()

    def forward(self, features: Tensor) -> Tensor:
        return self.linear(features.to(self.linear.weight.dtype))
