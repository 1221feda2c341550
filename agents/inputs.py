"""What a model's inputs implement: a builder for training batches and one for search.

Each model (`agents.models.MODELS`) names two builders in its `agents.models.spec.ModelSpec`:

- `TrainingInputs`, built once per labelled split: it precomputes what it can (per-problem
  encodings) and then assembles the input of a batch of rows of the split;
- `SearchInputs`, built once per task: the input of a batch of packed states of that task, for one
  forward pass per search expansion (`agents.learned_heuristic`).

Rows of a `LabelledSplit` are grouped by problem (rows of one problem are contiguous), so a batch
of ascending rows is a few runs of states of the same problem (`rows_by_problem`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np
import torch

from pddlgym_sl.data.dataset import LabelledSplit

__all__ = ["SearchInputs", "TrainingInputs", "rows_by_problem"]


class TrainingInputs(Protocol):
    """Builds a model's input for rows of a labelled split."""

    def model_config(self) -> dict[str, Any]:
        """Constructor arguments the model needs from the data (e.g. NLM input channels)."""
        ...

    def sizes(self) -> np.ndarray:
        """Per-state size that drives the cost of a batch (object count), for bucketing."""
        ...

    def batch(self, rows: np.ndarray, device: torch.device) -> Any:
        """Model input for ``rows`` (ascending), on ``device``."""
        ...


class SearchInputs(Protocol):
    """Builds a model's input for states of one task, during search."""

    def __call__(self, states: np.ndarray) -> Any:
        """Model input for a ``(n, n_words)`` uint64 batch of packed states."""
        ...


def rows_by_problem(split: LabelledSplit, rows: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """``(problem index, its local state indices)`` for each run of one problem in ascending ``rows``."""
    problems = split.problem_of[rows]
    offsets = split.offsets
    cuts = np.flatnonzero(np.diff(problems)) + 1
    for chunk in np.split(np.arange(len(rows)), cuts):
        p = int(problems[chunk[0]])
        yield p, rows[chunk] - offsets[p]
