"""The replay buffer of value learning: visited states and their admissible bounds, in a ring, with
the episodes the environments are in (what a checkpoint needs to continue them)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["Episode", "ReplayBuffer"]


class ReplayBuffer:
    """A ring buffer of visited states: problem index, packed words (padded to the widest problem)
    and the admissible bound the environment reported."""

    def __init__(self, capacity: int, n_words: int) -> None:
        self.problem = np.zeros(capacity, dtype=np.int64)
        self.words = np.zeros((capacity, n_words), dtype=np.uint64)
        self.lower = np.zeros(capacity, dtype=np.float64)
        self.size = self.pos = 0

    def add(self, problem: int, words: np.ndarray, lower: float) -> None:
        self.problem[self.pos] = problem
        self.words[self.pos] = 0
        self.words[self.pos, : len(words)] = words
        self.lower[self.pos] = lower
        self.pos = (self.pos + 1) % len(self.problem)
        self.size = min(self.size + 1, len(self.problem))

    def state(self) -> dict:
        return {
            "problem": torch.from_numpy(self.problem.copy()),
            "words": torch.from_numpy(self.words.view(np.int64).copy()),
            "lower": torch.from_numpy(self.lower.copy()),
            "size": self.size,
            "pos": self.pos,
        }

    def restore(self, state: dict) -> None:
        self.problem[:] = state["problem"].numpy()
        self.words[:] = state["words"].numpy().view(np.uint64)
        self.lower[:] = state["lower"].numpy()
        self.size, self.pos = int(state["size"]), int(state["pos"])


@dataclass
class Episode:
    """One environment's current episode: its problem, the actions taken, the states' keys."""

    problem: int
    actions: list[int]
    keys: list
