"""Confidence-aware greedy best-first search (Heller, Ferber, Bitterwolf, Hein and Hoffmann, SoCS 2022).

A learned heuristic ``h^NN`` reports a value and a confidence per state (`ConfidenceHeuristic`);
the searches here use the confidence, compared with a threshold (`pddlgym_sl.search.thresholds`):

- `confidence_gbfs`: single-queue GBFS on ``h^NN`` that prunes every generated state whose
  confidence is below its threshold (incomplete: when the open list runs empty because of the
  pruning, the search ends unsolved with status ``"pruned"``);
- `dual_gbfs`: dual-queue GBFS (Röger and Helmert 2010) with ``h^NN`` in one queue and a
  symbolic heuristic (hFF) in the other: every generated state is evaluated by both and inserted
  in both queues, and the queues take turns, one expansion each (round robin). With a threshold,
  unconfident states are pruned from the ``h^NN`` queue only: the hFF queue is the safety net.
  With ``prioritize=True`` nothing is pruned; the threshold decides the turns instead (the
  *prioritizing queue*): after expanding a confident state from the ``h^NN`` queue the next
  expansion is from the ``h^NN`` queue again, after an unconfident one it is one expansion from
  the hFF queue, then back.

Otherwise they are the engine's eager GBFS (`pddlgym_sl.search.engine`): successors in Fast
Downward's order, each new state evaluated when generated (all new successors of an expansion
in one batch), goal test at expansion, first in first out among equal values, a state with an
infinite value (of either heuristic) a dead end, never re-evaluated; without a threshold,
`confidence_gbfs` expands exactly the engine's nodes (the tests check it). An evaluation is one
state evaluated, whichever heuristics ran on it; the initial state counts one and is never
pruned. The budget works as the engine's: when an expansion's new states exceed it, the states
that still fit are evaluated and the search stops.

Why Python and not the compiled engine: these searches are for learned heuristics, whose forward
pass (hundreds of microseconds per expansion for the NLM) dominates the few microseconds of
Python bookkeeping per state here (the benchmark ``benchmarks/confidence_search.py`` measures
it); successor generation is still one compiled call per expansion (`expansion.Expander`).
Everything is deterministic: no hashing order or randomness reaches a decision.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Protocol

import numpy as np

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics import Heuristic, make_heuristic
from pddlgym_sl.search.expansion import Expander
from pddlgym_sl.search.result import SearchResult, evaluation_budget
from pddlgym_sl.task import CompiledTask

__all__ = ["ConfidenceHeuristic", "Threshold", "confidence_gbfs", "dual_gbfs"]

ValuesAndConfidences = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


class ConfidenceHeuristic(Protocol):
    """A heuristic with a confidence: one value and one confidence per row of a state batch."""

    def values_and_confidences(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


class Threshold(Protocol):
    """Which states are unconfident (`pddlgym_sl.search.thresholds`)."""

    def below(self, values: np.ndarray, confidences: np.ndarray) -> np.ndarray: ...


_NEW, _OPEN, _CLOSED, _DEAD = range(4)
_NN, _SYMBOLIC = 0, 1  # queue indices


def _confidence_function(heuristic: ConfidenceHeuristic | ValuesAndConfidences) -> ValuesAndConfidences:
    method = getattr(heuristic, "values_and_confidences", None)
    if callable(method):
        return method
    if callable(heuristic):
        return heuristic
    raise ConfigError(
        "the learned heuristic must have .values_and_confidences(states) or be a function of a state "
        f"batch returning (values, confidences), not {heuristic!r}"
    )


def _batch_function(task: CompiledTask, heuristic) -> Callable[[np.ndarray], np.ndarray]:
    if isinstance(heuristic, str):
        heuristic = make_heuristic(heuristic, task)
    if isinstance(heuristic, Heuristic) and heuristic.task is not task:
        raise ConfigError(f"{heuristic!r} was built for another task than {task.name!r}")
    batch = getattr(heuristic, "batch", None)
    if callable(batch):
        return batch
    if callable(heuristic):
        return heuristic
    raise ConfigError(
        f"the second heuristic must be a name, an object with .batch or a function, not {heuristic!r}"
    )


def _checked(values, n: int, what: str) -> np.ndarray:
    out = np.asarray(values, dtype=np.float64).reshape(-1)
    if out.shape != (n,):
        raise ConfigError(f"the heuristic returned {out.shape[0]} {what} for a batch of {n} states")
    if np.isnan(out).any():
        raise ConfigError(f"the heuristic returned NaN {what}")
    return out


class _Search:
    """The shared machinery: a state registry, one open list per heuristic, the budget and the
    turn rule. `queues` is 1 (h^NN only) or 2 (h^NN and the symbolic heuristic)."""

    def __init__(
        self,
        task: CompiledTask,
        learned: ValuesAndConfidences,
        symbolic: Callable[[np.ndarray], np.ndarray] | None,
        threshold: Threshold | None,
        prioritize: bool,
        max_evaluations: int | None,
        time_limit: float | None,
    ) -> None:
        self.budget = evaluation_budget(max_evaluations, time_limit)
        if prioritize and threshold is None:
            raise ConfigError("the prioritizing queue needs a threshold")
        self.task, self.learned, self.symbolic = task, learned, symbolic
        self.threshold, self.prioritize = threshold, prioritize
        self.time_limit = time_limit
        self.expand = Expander(task)
        self.index: dict[bytes, int] = {}
        self.words: list[np.ndarray] = []
        self.parent: list[int] = []
        self.action: list[int] = []
        self.g: list[int] = []
        self.status: list[int] = []
        self.confident: list[bool] = []
        self.queues: list[list[tuple[float, int, int]]] = [[] for _ in range(1 if symbolic is None else 2)]
        self.seq = 0
        self.evaluations = self.expansions = self.generated = self.pruned = 0
        self.cost = task.fdr.cost

    # ------------------------------------------------------------------ states
    def _register(self, words: np.ndarray, parent: int, action: int, g: int) -> int:
        node = len(self.words)
        self.index[words.tobytes()] = node
        self.words.append(words.copy())
        self.parent.append(parent)
        self.action.append(action)
        self.g.append(g)
        self.status.append(_NEW)
        self.confident.append(True)
        return node

    def _evaluate_and_insert(self, nodes: list[int]) -> None:
        """Evaluate the new `nodes` (one batch per heuristic) and put them in the open lists."""
        states = np.stack([self.words[n] for n in nodes])
        values, confidences = self.learned(states)
        values = _checked(values, len(nodes), "values")
        confidences = _checked(confidences, len(nodes), "confidences")
        second = None if self.symbolic is None else _checked(self.symbolic(states), len(nodes), "values")
        self.evaluations += len(nodes)
        unconfident = np.zeros(len(nodes), dtype=bool)
        if self.threshold is not None:
            unconfident = np.asarray(self.threshold.below(values, confidences), dtype=bool)
        for i, node in enumerate(nodes):
            if values[i] == np.inf or (second is not None and second[i] == np.inf):
                self.status[node] = _DEAD
                continue
            self.status[node] = _OPEN
            self.confident[node] = not unconfident[i]
            if second is not None:
                heapq.heappush(self.queues[_SYMBOLIC], (second[i], self.seq, node))
            if unconfident[i] and not self.prioritize and node != 0:
                self.pruned += 1  # dropped from the h^NN queue (the symbolic queue keeps it)
            else:
                heapq.heappush(self.queues[_NN], (values[i], self.seq, node))
            self.seq += 1

    def _pop(self, queue: int) -> int:
        """The best open state of `queue` (closed entries are dropped), or -1 when it has none."""
        heap = self.queues[queue]
        while heap:
            node = heapq.heappop(heap)[2]
            if self.status[node] == _OPEN:
                return node
        return -1

    def _next(self, turn: int) -> tuple[int, int]:
        """(node, queue) of the next expansion, trying queue `turn` first."""
        for queue in (turn, 1 - turn) if len(self.queues) == 2 else (0,):
            node = self._pop(queue)
            if node >= 0:
                return node, queue
        return -1, turn

    def _is_goal(self, words: np.ndarray) -> bool:
        return self.task.is_goal(self.task.state_from_words(words))

    # ------------------------------------------------------------------ loop
    def run(self) -> SearchResult:
        start = time.perf_counter()
        task = self.task
        if not task.solvable:
            return self._result("exhausted", None, start, evaluations=min(1, self.budget))
        self._register(np.array(task.init.words, dtype=np.uint64), -1, -1, 0)
        if self.budget < 1:
            return self._result("evaluation_limit", None, start)
        self._evaluate_and_insert([0])
        deadline = None if self.time_limit is None else start + self.time_limit
        turn = _NN
        while True:
            if deadline is not None and self.expansions % 64 == 0 and time.perf_counter() > deadline:
                return self._result("time_limit", None, start)
            current, queue = self._next(turn)
            if current < 0:
                return self._result("pruned" if self.pruned else "exhausted", None, start)
            self.status[current] = _CLOSED
            self.expansions += 1
            words = self.words[current]
            if self._is_goal(words):
                return self._result("solved", current, start)
            g_child = self.g[current]
            new: list[int] = []
            ops, successors = self.expand(words)
            for a, succ in zip(ops.tolist(), successors, strict=True):
                self.generated += 1
                g = g_child + int(self.cost[a])
                child = self.index.get(succ.tobytes(), -1)
                if child < 0:
                    new.append(self._register(succ, current, a, g))
                elif self.status[child] != _DEAD and self.g[child] > g:
                    # a cheaper path: re-parent (GBFS keys do not depend on g, so no re-insertion)
                    self.g[child], self.parent[child], self.action[child] = g, current, a
            left = self.budget - self.evaluations
            if new and left > 0:
                self._evaluate_and_insert(new[:left])
            if len(new) > left:
                return self._result("evaluation_limit", None, start)
            turn = self._turn(queue, current)

    def _turn(self, queue: int, expanded: int) -> int:
        """The queue whose turn is next (round robin, or the prioritizing rule)."""
        if len(self.queues) == 1:
            return _NN
        if self.prioritize:
            return _NN if queue == _SYMBOLIC or self.confident[expanded] else _SYMBOLIC
        return 1 - queue

    def _result(
        self, status: str, goal: int | None, start: float, evaluations: int | None = None
    ) -> SearchResult:
        plan: list[int] = []
        node = -1 if goal is None else goal
        while node > 0:
            plan.append(self.action[node])
            node = self.parent[node]
        plan.reverse()
        return SearchResult.of(
            self.task,
            status,
            plan if status == "solved" else None,
            time.perf_counter() - start,
            evaluations=self.evaluations if evaluations is None else evaluations,
            expansions=self.expansions,
            generated=self.generated,
        )


def confidence_gbfs(
    task: CompiledTask,
    heuristic: ConfidenceHeuristic | ValuesAndConfidences,
    threshold: Threshold | None = None,
    max_evaluations: int | None = 10_000,
    time_limit: float | None = None,
) -> SearchResult:
    """Single-queue GBFS that prunes generated states below `threshold` (see the module docstring).

    Args:
        task: the compiled task.
        heuristic: an object with ``values_and_confidences(states)`` or a function of a (n, n_words)
            uint64 state batch returning (n values, n confidences); a value of inf is a dead end.
        threshold: an object with ``below(values, confidences) -> bool mask`` (a `MeanThreshold` or
            `AdaptiveThreshold`), or None to prune nothing (then this is `gbfs` node for node).
        max_evaluations: state-evaluation budget (None: none). time_limit: seconds, or None.

    Returns a `SearchResult`; ``status="pruned"`` when the open list ran empty after pruning.
    """
    learned = _confidence_function(heuristic)
    return _Search(task, learned, None, threshold, False, max_evaluations, time_limit).run()


def dual_gbfs(
    task: CompiledTask,
    heuristic: ConfidenceHeuristic | ValuesAndConfidences,
    threshold: Threshold | None = None,
    prioritize: bool = False,
    second: str | Heuristic | Callable[[np.ndarray], np.ndarray] = "hff",
    max_evaluations: int | None = 10_000,
    time_limit: float | None = None,
) -> SearchResult:
    """Dual-queue GBFS with the learned heuristic and `second` (see the module docstring).

    Args:
        task, heuristic, max_evaluations, time_limit: as for `confidence_gbfs`.
        threshold: prunes unconfident states from the learned heuristic's queue (None: no pruning,
            the confidence-unaware dual queue), or with `prioritize` decides the turns.
        prioritize: the prioritizing queue instead of round robin (needs a threshold; prunes nothing).
        second: the other queue's heuristic: a name (``"hff"``), a heuristic object or a batch function.
    """
    symbolic = _batch_function(task, second)
    learned = _confidence_function(heuristic)
    return _Search(task, learned, symbolic, threshold, prioritize, max_evaluations, time_limit).run()
