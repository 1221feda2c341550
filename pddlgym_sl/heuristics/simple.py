"""blind and goal_count: the two heuristics that need no relaxation.

Compiled like the others (a batch loop in numba) so that search's per-expansion batch call costs
the same small constant for every heuristic.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pddlgym_sl.heuristics.base import Heuristic
from pddlgym_sl.successors import holds
from pddlgym_sl.task import CompiledTask


@njit(cache=True)
def goal_count_batch(states, goal, out):
    """Number of unsatisfied goal facts of every row of `states`."""
    for i in range(states.shape[0]):
        c = 0
        for k in range(goal.shape[0]):
            if not holds(states[i], goal[k]):
                c += 1
        out[i] = c


@njit(cache=True)
def blind_batch(states, goal, step, out):
    """0 for goal states, `step` (the cheapest action cost) for all others."""
    for i in range(states.shape[0]):
        out[i] = 0.0
        for k in range(goal.shape[0]):
            if not holds(states[i], goal[k]):
                out[i] = step
                break


class Blind(Heuristic):
    """0 in goal states, else the cheapest action cost (1 with unit costs); ``inf`` when the task
    has no action at all (a non-goal state is then a dead end). Admissible."""

    name = "blind"
    admissible = True

    def __init__(self, task: CompiledTask) -> None:
        super().__init__(task)
        costs = np.asarray(task.action_costs, dtype=np.float64)
        self.step = float(costs.min()) if len(costs) else np.inf

    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        blind_batch(states, self.task.goal, self.step, out)


class GoalCount(Heuristic):
    """Number of goal facts that do not hold (inadmissible in general: one action may achieve
    several goal facts)."""

    name = "goal_count"

    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        goal_count_batch(states, self.task.goal, out)
