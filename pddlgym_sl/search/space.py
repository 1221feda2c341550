"""Bookkeeping shared by the searches: registered states, parent pointers, plan extraction,
and the normalisation of the heuristic argument into a batch evaluator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from pddlgym_sl.search.result import SearchResult
from pddlgym_sl.task import CompiledTask

BatchEvaluator = Callable[[np.ndarray], np.ndarray]


class BatchHeuristic(Protocol):
    """What search needs from a heuristic: one value per row of a (n, n_words) uint64 state batch."""

    def batch(self, states: np.ndarray) -> np.ndarray: ...


def batch_evaluator(task: CompiledTask, heuristic: str | BatchHeuristic | BatchEvaluator) -> BatchEvaluator:
    """Turn a heuristic name, a heuristic object (with `.batch`) or a plain batch function into a
    function mapping a (n, n_words) state batch to n float values."""
    if isinstance(heuristic, str):
        from pddlgym_sl.heuristics import make_heuristic

        heuristic = make_heuristic(heuristic, task)
    batch = getattr(heuristic, "batch", None)
    if callable(batch):
        return batch
    if callable(heuristic):
        return heuristic
    raise TypeError(
        f"heuristic must be a name, an object with .batch(states) or a callable, not {heuristic!r}"
    )


class SearchSpace:
    """States met so far, keyed by their packed bytes, with the (parent, action) that reached them."""

    __slots__ = ("actions", "ids", "keys", "parents")

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {}
        self.keys: list[bytes] = []
        self.parents: list[int] = []
        self.actions: list[int] = []

    def add(self, key: bytes, parent: int, action: int) -> int:
        nid = len(self.keys)
        self.ids[key] = nid
        self.keys.append(key)
        self.parents.append(parent)
        self.actions.append(action)
        return nid

    def words(self, nid: int) -> np.ndarray:
        return np.frombuffer(self.keys[nid], dtype="<u8")

    def result(
        self, task: CompiledTask, status: str, goal_node: int | None, seconds: float, stats: dict[str, int]
    ) -> SearchResult:
        """The `SearchResult` of a search that ended with `status` (at `goal_node` when solved)."""
        plan = self.plan_to(goal_node) if goal_node is not None else []
        return SearchResult(
            solved=goal_node is not None,
            plan=[task.actions[a] for a in plan],
            cost=len(plan) if goal_node is not None else None,
            seconds=seconds,
            status=status,
            plan_indices=plan,
            **stats,
        )

    def plan_to(self, nid: int) -> list[int]:
        """Action indices from the root to node `nid`."""
        plan = []
        while self.parents[nid] >= 0:
            plan.append(self.actions[nid])
            nid = self.parents[nid]
        plan.reverse()
        return plan
