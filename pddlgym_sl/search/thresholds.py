"""Confidence thresholds of confidence-aware search, computed from a learned heuristic's training data.

Heller et al. (SoCS 2022) prune, or switch queues on, states whose confidence ``c(s)`` is below a
threshold chosen on the training states, so that it adapts to the task and the network:

- **mean threshold** (`mean_threshold`): one ``t`` such that X% of the training states have a
  confidence below it;
- **adaptive threshold** (`adaptive_threshold`): one ``t_i`` per predicted cost ``i``, each such
  that X% of the training states predicted ``i`` fall below it, where adjacent costs are merged
  into groups of at least 100 states. Confidence tends to fall as the predicted cost grows (far
  from the goal is harder), so one mean threshold prunes mostly states far from the goal.

A threshold is the largest ``t`` with at most X% of the states below it: the ``⌊X·n/100⌋``-th
smallest confidence (0-based), or just above the largest for X = 100; ties may prune fewer.

The paper groups the training states by their *observed* cost and applies ``t_i`` with
``i = h^NN(s)``; we group them by the *predicted* cost, the quantity the search looks up, so each
threshold is the X% quantile of exactly the states it will be applied to. A continuous prediction
(N / TN) is rounded to the nearest cost. Costs between or beyond the training groups belong to the
group below them (the first group also covers every cost below it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pddlgym_sl.errors import ConfigError

__all__ = [
    "MIN_GROUP",
    "THRESHOLDS",
    "AdaptiveThreshold",
    "MeanThreshold",
    "adaptive_threshold",
    "mean_threshold",
    "quantile_threshold",
]

MIN_GROUP = 100
"""Fewest training states behind one adaptive threshold (the paper's group size)."""


def _check_percent(percent: float) -> None:
    if not 0 <= percent <= 100:
        raise ConfigError(f"the pruned fraction must be a percentage in [0, 100], not {percent!r}")


def quantile_threshold(confidences: np.ndarray, percent: float) -> float:
    """The largest ``t`` such that at most `percent`% of `confidences` are below it."""
    _check_percent(percent)
    c = np.sort(np.asarray(confidences, dtype=np.float64))
    if len(c) == 0:
        raise ConfigError("no confidences to compute a threshold from")
    k = math.floor(percent * len(c) / 100 + 1e-9)
    return float(c[k]) if k < len(c) else float(np.nextafter(c[-1], np.inf))


@dataclass(frozen=True)
class MeanThreshold:
    """One threshold for every state."""

    value: float

    def thresholds(self, values: np.ndarray) -> np.ndarray:
        """The threshold that applies to states with these heuristic values."""
        return np.full(np.shape(values), self.value)

    def below(self, values: np.ndarray, confidences: np.ndarray) -> np.ndarray:
        """True where a state is unconfident: its confidence is below its threshold."""
        return np.asarray(confidences) < self.thresholds(values)

    def to_dict(self) -> dict:
        return {"kind": "mean", "value": self.value}


@dataclass(frozen=True)
class AdaptiveThreshold:
    """One threshold per group of adjacent predicted costs.

    Attributes:
        starts: ascending first cost of each group (group j covers ``starts[j]`` up to
            ``starts[j + 1] − 1``; the first also every cost below, the last every cost above).
        values: the threshold of each group.
        sizes: the training states of each group.
    """

    starts: tuple[int, ...]
    values: tuple[float, ...]
    sizes: tuple[int, ...]

    def group(self, values: np.ndarray) -> np.ndarray:
        """The group index of states with these heuristic values (rounded to a cost)."""
        v = np.asarray(values, dtype=np.float64)
        cost = np.round(np.where(np.isfinite(v), v, np.finfo(np.float64).max / 2))
        starts = np.asarray(self.starts, dtype=np.float64)
        return np.maximum(np.searchsorted(starts, cost, side="right") - 1, 0)

    def thresholds(self, values: np.ndarray) -> np.ndarray:
        return np.asarray(self.values)[self.group(values)]

    def below(self, values: np.ndarray, confidences: np.ndarray) -> np.ndarray:
        return np.asarray(confidences) < self.thresholds(values)

    def to_dict(self) -> dict:
        starts, values, sizes = list(self.starts), list(self.values), list(self.sizes)
        return {"kind": "adaptive", "starts": starts, "values": values, "sizes": sizes}


def mean_threshold(confidences: np.ndarray, percent: float) -> MeanThreshold:
    """The mean threshold: `percent`% of the training `confidences` fall below it."""
    return MeanThreshold(quantile_threshold(confidences, percent))


def adaptive_threshold(
    predicted: np.ndarray, confidences: np.ndarray, percent: float, min_group: int = MIN_GROUP
) -> AdaptiveThreshold:
    """Adaptive thresholds from the training states' predicted costs and confidences.

    Costs (predictions rounded) are swept upwards and merged into a group until it holds
    `min_group` states; a last group smaller than that joins the one before it (with fewer than
    `min_group` states in all there is one group). Each group's threshold is `quantile_threshold`
    of its states' confidences.
    """
    _check_percent(percent)
    predicted = np.asarray(predicted, dtype=np.float64)
    confidences = np.asarray(confidences, dtype=np.float64)
    keep = np.isfinite(predicted)
    cost = np.round(predicted[keep]).astype(np.int64)
    conf = confidences[keep]
    if len(cost) == 0:
        raise ConfigError("no finite predictions to compute adaptive thresholds from")
    unique, counts = np.unique(cost, return_counts=True)
    groups: list[list[int]] = []  # the costs of each group
    size = 0
    for c, n in zip(unique.tolist(), counts.tolist(), strict=True):
        if not groups or size >= min_group:
            groups.append([])
            size = 0
        groups[-1].append(c)
        size += n
    if len(groups) > 1 and size < min_group:
        last = groups.pop()
        groups[-1] += last
    starts, values, sizes = [], [], []
    for costs in groups:
        members = conf[np.isin(cost, costs)]
        starts.append(costs[0])
        values.append(quantile_threshold(members, percent))
        sizes.append(len(members))
    return AdaptiveThreshold(tuple(starts), tuple(values), tuple(sizes))


def _mean(predicted: np.ndarray, confidences: np.ndarray, percent: float) -> MeanThreshold:
    return mean_threshold(confidences, percent)


THRESHOLDS = {"mean": _mean, "adaptive": adaptive_threshold}
"""Threshold kinds: ``(predicted, confidences, percent) -> threshold`` from a training table."""
