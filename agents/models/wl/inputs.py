"""Inputs of the WL model: the states whose counts its featurizer computes (`WLLinear.forward`).

- `WLTrainingInputs` (one labelled split): fits the featurizer on the training split
  (`model_config`), and computes a split's counts for all its states at once per featurizer,
  problem by problem in one `wlplan` call each, caching them (`features`); a batch is rows of
  that matrix.
- `WLSearchInputs` (one task): the counts of one expansion's states, in one `wlplan` call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from agents.models.wl.features import ITERATIONS, WLFeaturizer
from agents.models.wl.vocabulary import TaskAtoms, wl_domain
from pddlgym_sl.data.dataset import LabelledSplit
from pddlgym_sl.envs.encoders.schema import Schema
from pddlgym_sl.task import CompiledTask

__all__ = ["WLSearchInputs", "WLTrainingInputs"]

CHUNK = 4096
"""States per `wlplan` call when embedding a split (bounds the graphs held at once)."""


@dataclass(frozen=True)
class _Rows:
    """A training batch: rows of a split's cached counts."""

    inputs: WLTrainingInputs
    rows: np.ndarray
    device: torch.device

    def features(self, featurizer: WLFeaturizer) -> Tensor:
        return self.inputs.features(featurizer)[torch.as_tensor(self.rows)].to(self.device)


@dataclass(frozen=True)
class _States:
    """A search batch: states of one task."""

    atoms: TaskAtoms
    words: np.ndarray
    device: torch.device

    def features(self, featurizer: WLFeaturizer) -> Tensor:
        counts = featurizer.embed(self.atoms.problem, self.atoms.states(self.words))
        return torch.from_numpy(counts).to(self.device)


class WLTrainingInputs:
    """`agents.inputs.TrainingInputs` of the WL model (see the module docstring)."""

    def __init__(self, split: LabelledSplit) -> None:
        self.split = split
        self.domain, _ = wl_domain(str(split.domain_file))
        self._atoms: dict[int, TaskAtoms] = {}
        self._cache: tuple[str, Tensor] | None = None

    def _problem_states(self):
        """(wlplan problem, states) of each problem, in chunks, built on demand."""
        for i, states in enumerate(self.split.states):
            if i not in self._atoms:
                self._atoms[i] = TaskAtoms(self.split.task(i), self.split.domain_file)
            atoms = self._atoms[i]
            for start in range(0, len(states), CHUNK):
                yield atoms.problem, atoms.states(states[start : start + CHUNK])

    def model_config(
        self, iterations: int = ITERATIONS, pruning: str = "none", hash: str = "set"
    ) -> dict[str, Any]:
        """Fit the colour table on this split's states (`WLFeaturizer.fit`'s options; `hash`: set
        or multiset); with the counts' mean and deviation."""
        featurizer = WLFeaturizer.fit(
            self.domain, self._problem_states(), iterations, pruning, multiset_hash=hash == "multiset"
        )
        x = self.features(featurizer).double()
        std = x.std(dim=0, correction=0) if len(x) else torch.zeros(x.shape[1], dtype=torch.float64)
        return {"featurizer": featurizer.config, "mean": x.mean(dim=0).tolist(), "std": std.tolist()}

    def sizes(self) -> np.ndarray:
        return np.ones(len(self.split), dtype=np.int64)  # a batch costs the same whatever its rows

    def features(self, featurizer: WLFeaturizer) -> Tensor:
        """(N, n_features) float32 counts of every state of the split (cached per featurizer)."""
        if self._cache is None or self._cache[0] != featurizer.key:
            parts = [featurizer.embed(problem, states) for problem, states in self._problem_states()]
            counts = np.concatenate(parts) if parts else np.zeros((0, featurizer.n_features), np.float32)
            self._cache = (featurizer.key, torch.from_numpy(counts))
        return self._cache[1]

    def batch(self, rows: np.ndarray, device: torch.device) -> _Rows:
        return _Rows(self, rows, device)


class WLSearchInputs:
    """`agents.inputs.SearchInputs` of the WL model: one task's states (``schema`` is not needed:
    the vocabulary comes from the task's domain file)."""

    def __init__(self, task: CompiledTask, device: torch.device, schema: Schema | None = None) -> None:
        self.atoms = TaskAtoms(task)
        self.device = device

    def __call__(self, states: np.ndarray) -> _States:
        return _States(self.atoms, np.ascontiguousarray(states), self.device)
