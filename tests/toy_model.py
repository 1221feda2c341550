"""A new model in one module, for tests/test_extending.py: its network, inputs and `SPEC`.

Linear regression on two symbolic heuristics of a state, [goal count, hFF]: the training inputs
read them from the labelled split, the search inputs compute them with the same engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from agents.models import ModelSpec
from pddlgym_sl.data.dataset import LabelledSplit
from pddlgym_sl.envs.encoders.schema import Schema
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.task import CompiledTask

FEATURES = ("goal_count", "hff")


class HeuristicRegression(nn.Module):
    """``[B, 2]`` heuristic values -> ``[B, n_outputs]`` raw values."""

    def __init__(self, n_outputs: int) -> None:
        super().__init__()
        self.linear = nn.Linear(len(FEATURES), n_outputs)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear(x)


class HeuristicTrainingInputs:
    def __init__(self, split: LabelledSplit) -> None:
        values = np.stack([split.values[name] for name in FEATURES], axis=1)
        self.x = torch.as_tensor(values, dtype=torch.float32)

    def model_config(self) -> dict[str, Any]:
        return {}

    def sizes(self) -> np.ndarray:
        return np.ones(len(self.x), dtype=np.int64)

    def batch(self, rows: np.ndarray, device: torch.device) -> Tensor:
        return self.x[torch.as_tensor(rows)].to(device)


class HeuristicSearchInputs:
    def __init__(self, task: CompiledTask, device: torch.device, schema: Schema | None = None) -> None:
        self.heuristics = [make_heuristic(name, task) for name in FEATURES]
        self.device = device

    def __call__(self, states: np.ndarray) -> Tensor:
        values = np.stack([h.batch(states) for h in self.heuristics], axis=1)
        return torch.as_tensor(values, dtype=torch.float32, device=self.device)


SPEC = ModelSpec(
    HeuristicRegression, HeuristicTrainingInputs, HeuristicSearchInputs, name="toy", label="toy regression"
)
