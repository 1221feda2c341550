"""blind and goal_count: the two heuristics that need no relaxation.

Compiled like the others (a batch loop in numba) so that search's per-expansion batch call costs
the same small constant for every heuristic.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from pddlgym_sl.heuristics.base import Heuristic
from pddlgym_sl.heuristics.compiled import INTEGER_VALUED, state_values
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.successors import holds, satisfies
from pddlgym_sl.task import CompiledTask


@njit(cache=CACHE, nogil=True)
def goal_count_one(words, goal_fact, neg_ptr, neg_idx):
    """Number of unsatisfied goal conditions of one state: a goal fact ``goal_fact[k]`` that does
    not hold, or, where ``goal_fact[k]`` is -1, a negative goal (the facts
    ``neg_idx[neg_ptr[k]:neg_ptr[k + 1]]`` all false) violated."""
    c = 0
    for k in range(goal_fact.shape[0]):
        if goal_fact[k] >= 0:
            if not holds(words, goal_fact[k]):
                c += 1
        else:
            for j in range(neg_ptr[k], neg_ptr[k + 1]):
                if holds(words, neg_idx[j]):
                    c += 1
                    break
    return c


@njit(cache=CACHE, nogil=True)
def goal_count_batch(states, goal_fact, neg_ptr, neg_idx, out):
    """`goal_count_one` of every row of `states` into `out`."""
    for i in range(states.shape[0]):
        out[i] = goal_count_one(states[i], goal_fact, neg_ptr, neg_idx)


@njit(cache=CACHE, nogil=True)
def blind_batch(states, goal, goal_neg, step, out):
    """0 for goal states, `step` (the cheapest action cost) for all others."""
    for i in range(states.shape[0]):
        out[i] = 0.0 if satisfies(states[i], goal, goal_neg) else step


class BlindArgs(NamedTuple):
    """blind inside the search engine (`pddlgym_sl.heuristics.compiled`)."""

    goal: np.ndarray
    goal_neg: np.ndarray
    step: float


class GoalCountArgs(NamedTuple):
    """goal_count inside the search engine."""

    goal_fact: np.ndarray
    neg_ptr: np.ndarray
    neg_idx: np.ndarray


@njit(cache=CACHE)
def _blind_values(states, n, out, goal, goal_neg, step):
    for i in range(n):
        out[i] = 0.0 if satisfies(states[i], goal, goal_neg) else step


@njit(cache=CACHE)
def _goal_count_values(states, n, out, goal_fact, neg_ptr, neg_idx):
    for i in range(n):
        out[i] = goal_count_one(states[i], goal_fact, neg_ptr, neg_idx)


@overload(state_values)
def _simple_state_values(args, states, n, out):
    if not isinstance(args, types.BaseNamedTuple):
        return None
    if args.instance_class is BlindArgs:
        return lambda args, states, n, out: _blind_values(states, n, out, args.goal, args.goal_neg, args.step)
    if args.instance_class is GoalCountArgs:
        return lambda args, states, n, out: _goal_count_values(
            states, n, out, args.goal_fact, args.neg_ptr, args.neg_idx
        )
    return None


INTEGER_VALUED.update(
    (
        BlindArgs,
        GoalCountArgs,
    )
)


class Blind(Heuristic):
    """0 in goal states, else the cheapest action cost (1 with unit costs); ``inf`` when the task
    has no action at all (a non-goal state is then a dead end). Admissible; Fast Downward's
    ``blind()``."""

    name = "blind"
    admissible = True

    def __init__(self, task: CompiledTask) -> None:
        super().__init__(task)
        costs = np.asarray(task.action_costs, dtype=np.float64)
        self.step = float(costs.min()) if len(costs) else np.inf

    def engine_args(self) -> BlindArgs:
        """The arguments of this heuristic inside the search engine."""
        return BlindArgs(self.task.goal, self.task.goal_neg, self.step)

    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        blind_batch(states, self.task.goal, self.task.goal_neg, self.step, out)


class GoalCount(Heuristic):
    """Number of goal conditions that do not hold (inadmissible in general: one action may achieve
    several); Fast Downward's ``goal_count()``."""

    name = "goal_count"

    def __init__(self, task: CompiledTask) -> None:
        super().__init__(task)
        fdr = task.fdr
        var_of = np.searchsorted(fdr.var_prop, fdr.goal, side="right") - 1
        self.goal_fact = fdr.prop_fact[fdr.goal].astype(np.int32)
        negative = [fdr.facts_of_var(v) if f < 0 else [] for v, f in zip(var_of, self.goal_fact, strict=True)]
        self.neg_ptr = np.concatenate([[0], np.cumsum([len(x) for x in negative])]).astype(np.int32)
        self.neg_idx = np.array([f for x in negative for f in x], dtype=np.int32)

    def engine_args(self) -> GoalCountArgs:
        """The arguments of this heuristic inside the search engine."""
        return GoalCountArgs(self.goal_fact, self.neg_ptr, self.neg_idx)

    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        goal_count_batch(states, self.goal_fact, self.neg_ptr, self.neg_idx, out)
