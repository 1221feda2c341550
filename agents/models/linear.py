r"""Linear regression on the hand-crafted planning features of Gomoluch et al. (2017).

.. math::
    y = W \phi(s) + b, \qquad
    \phi(s) = [h^{gc}(s),\ h^{FF}(s),\ \textstyle\sum_{a \in \pi^+} |del(a)|,\
               \tfrac{1}{|\pi^+|}\sum_{a \in \pi^+} |del(a)|]

``h^gc`` is the goal count, ``π⁺`` is FF's relaxed plan, and the last two features are the total
and mean number of delete effects it ignores (0 for an empty relaxed plan). The features come
from the heuristic engine (``HFF.features`` / ``features_batch`` in `pddlgym_sl.heuristics`);
they are used raw, as by the pddlsl authors (no normalisation, no weight decay).

The whole model in one module: the network, its inputs for training (the features stored in the
labelled split) and for search (computed by hFF's kernel), and its ``SPEC``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from agents.errors import AgentError
from agents.models.spec import ModelSpec
from pddlgym_sl.data.dataset import LabelledSplit
from pddlgym_sl.envs.encoders.schema import Schema
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.task import CompiledTask

__all__ = ["GOMOLUCH_FEATURES", "SPEC", "FeatureSearchInputs", "FeatureTrainingInputs", "LinearRegression"]

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
            raise AgentError("n_outputs and in_features must be positive")
        self.n_outputs, self.in_features = n_outputs, in_features
        self.linear = nn.Linear(in_features, n_outputs)

    def reset_parameters(self) -> None:
        self.linear.reset_parameters()

    def forward(self, features: Tensor) -> Tensor:
        return self.linear(features.to(self.linear.weight.dtype))


class FeatureTrainingInputs:
    """`agents.inputs.TrainingInputs` of the linear model: the split's stored features."""

    def __init__(self, split: LabelledSplit) -> None:
        self.features = torch.as_tensor(split.features, dtype=torch.float32)
        self._sizes = np.ones(len(split), dtype=np.int64)

    def model_config(self) -> dict[str, Any]:
        return {}

    def sizes(self) -> np.ndarray:
        return self._sizes

    def batch(self, rows: np.ndarray, device: torch.device) -> Tensor:
        return self.features[torch.as_tensor(rows)].to(device)


class FeatureSearchInputs:
    """`agents.inputs.SearchInputs` of the linear model: the features of a task's states, by the
    same hFF kernel that labelled the training data (``schema`` is not needed)."""

    def __init__(self, task: CompiledTask, device: torch.device, schema: Schema | None = None) -> None:
        self.hff = make_heuristic("hff", task)
        self.device = device

    def __call__(self, states: np.ndarray) -> Tensor:
        return torch.as_tensor(self.hff.features_batch(states), dtype=torch.float32, device=self.device)


SPEC = ModelSpec(
    LinearRegression,
    FeatureTrainingInputs,
    FeatureSearchInputs,
    name="linear",
    label="linear regression (LR)",
    paper_weight_decay=0.0,
    reads_features=True,
)
"""Paper settings (appendix C.1): AdamW at lr 1e-2, no weight decay."""
