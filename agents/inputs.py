"""Model inputs of a labelled split, and the batch sampler.

Each model family gets a `ModelInputs` that precomputes what it can once per split and then
assembles a batch from row indices (rows of `LabelledSplit`, ascending — rows of one problem are
contiguous, so a batch groups states by problem):

- ``linear``: the four Gomoluch et al. features, already in the split;
- ``nlm``: per-problem predicate tensors from the ``nlm`` observation encoder (computed once),
  padded per batch to the largest object count in the batch (`agents.graphs.nlm_batch`);
- ``hgn``: delete-relaxed hypergraphs built per batch from the cached per-task structure
  (`agents.graphs.hypergraph_data`), batched by torch-geometric.

`BucketSampler` draws training batches from buckets of states with similar object counts, so
NLM batches carry little padding; the batch of step t depends only on (seed, t), which makes a
resumed run draw exactly the batches an uninterrupted one would.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import torch
from torch_geometric.data import Batch

from agents.graphs import hypergraph_data, nlm_batch, nlm_channels
from pddlgym_sl.data.dataset import LabelledSplit
from pddlgym_sl.envs.encoders.nlm import NLMEncoder
from pddlgym_sl.envs.encoders.schema import Schema


class ModelInputs(Protocol):
    """Builds a model's input for rows of a split."""

    def model_config(self) -> dict[str, Any]:
        """Constructor arguments the model needs from the data (e.g. NLM input channels)."""
        ...

    def sizes(self) -> np.ndarray:
        """Per-state size that drives the cost of a batch (object count), for bucketing."""
        ...

    def batch(self, rows: np.ndarray, device: torch.device) -> Any:
        """Model input for `rows` (ascending), on `device`."""
        ...


def _groups(split: LabelledSplit, rows: np.ndarray):
    """Yield (problem index, local state indices) for ascending `rows`."""
    problems = split.problem_of[rows]
    offsets = split.offsets
    cuts = np.flatnonzero(np.diff(problems)) + 1
    for chunk in np.split(np.arange(len(rows)), cuts):
        p = int(problems[chunk[0]])
        yield p, rows[chunk] - offsets[p]


class LinearInputs:
    def __init__(self, split: LabelledSplit) -> None:
        self.features = torch.as_tensor(split.features, dtype=torch.float32)
        self._sizes = np.ones(len(split), dtype=np.int64)

    def model_config(self) -> dict[str, Any]:
        return {}

    def sizes(self) -> np.ndarray:
        return self._sizes

    def batch(self, rows: np.ndarray, device: torch.device) -> torch.Tensor:
        return self.features[torch.as_tensor(rows)].to(device)


class NLMInputs:
    def __init__(self, split: LabelledSplit) -> None:
        self.split = split
        schema = Schema.from_domain_file(split.domain_file)
        self.encoded = [
            NLMEncoder(schema, split.task(i)).encode_batch(split.states[i])
            for i in range(len(split.problems))
        ]
        objects = np.array([len(split.task(i).objects) for i in range(len(split.problems))])
        self._sizes = objects[split.problem_of]
        self._channels = nlm_channels(self.encoded[0])

    def model_config(self) -> dict[str, Any]:
        return {"in_channels": self._channels}

    def sizes(self) -> np.ndarray:
        return self._sizes

    def batch(self, rows: np.ndarray, device: torch.device) -> dict[str, torch.Tensor]:
        items = [{k: v[local] for k, v in self.encoded[p].items()} for p, local in _groups(self.split, rows)]
        return {k: v.to(device) for k, v in nlm_batch(items).items()}


class HGNInputs:
    def __init__(self, split: LabelledSplit) -> None:
        self.split = split
        facts = np.array([split.task(i).n_facts for i in range(len(split.problems))])
        self._sizes = facts[split.problem_of]

    def model_config(self) -> dict[str, Any]:
        return {}

    def sizes(self) -> np.ndarray:
        return self._sizes

    def batch(self, rows: np.ndarray, device: torch.device) -> Batch:
        graphs = []
        for p, local in _groups(self.split, rows):
            graphs.extend(hypergraph_data(self.split.task(p), self.split.states[p][local]))
        return Batch.from_data_list(graphs).to(device)


INPUTS = {"linear": LinearInputs, "nlm": NLMInputs, "hgn": HGNInputs}


def make_inputs(model: str, split: LabelledSplit) -> ModelInputs:
    try:
        return INPUTS[model](split)
    except KeyError:
        raise ValueError(f"unknown model {model!r}; choose one of {', '.join(INPUTS)}") from None


class BucketSampler:
    """Training batches from size buckets: states sorted by size are cut into buckets of about
    ``4 * batch_size`` states; a step picks a bucket with probability proportional to its size
    and draws ``batch_size`` of its states uniformly (with replacement), so every state keeps the
    same probability of being drawn as under uniform sampling."""

    def __init__(self, sizes: np.ndarray, batch_size: int, seed: int) -> None:
        order = np.argsort(sizes, kind="stable")
        n_buckets = max(1, round(len(order) / (4 * batch_size)))
        self.buckets = [b for b in np.array_split(order, n_buckets) if len(b)]
        self.weights = np.array([len(b) for b in self.buckets], dtype=np.float64) / len(order)
        self.batch_size, self.seed = batch_size, seed

    def batch(self, step: int) -> np.ndarray:
        """Sorted rows of the batch of training step `step` (a pure function of seed and step)."""
        rng = np.random.default_rng([self.seed, step])
        bucket = self.buckets[rng.choice(len(self.buckets), p=self.weights)]
        return np.sort(bucket[rng.integers(0, len(bucket), size=self.batch_size)])
