"""Training batches drawn from buckets of states of similar size.

NLM batches are padded to their largest object count, so drawing a batch from states of similar
size keeps the padding small; the batch of step t depends only on (seed, t), which makes a resumed
run draw exactly the batches an uninterrupted one would.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BucketSampler"]


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
