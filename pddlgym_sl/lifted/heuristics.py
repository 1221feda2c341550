"""Heuristics on lifted states, evaluated inside the lifted search's compiled loop.

`lifted_value(args, state, n)` is the contract: the value (float, ``inf`` for a dead end) of the
state ``state[:n]`` (sorted fact ids) under the heuristic whose arguments are ``args``, a
NamedTuple whose *class* picks the kernel while numba compiles the search (as
`pddlgym_sl.heuristics.compiled.state_values` does for grounded states). This module overloads
it for goal count and blind; `relaxed` adds hmax, hadd and hFF on the lifted task, and a trained WL
model adds its own (`agents.models.wl.lifted`), outside this package.

`registry.LIFTED_HEURISTICS` names the symbolic ones for the command line.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from pddlgym_sl.lifted.join import lower_bound
from pddlgym_sl.numba_cache import CACHE

__all__ = ["BlindArgs", "GoalCountArgs", "goal_count", "lifted_value"]

_JIT = {"cache": CACHE, "nogil": True}


class GoalCountArgs(NamedTuple):
    """Goal count: the goal facts that do not hold plus the negative goal facts that do."""

    goal: np.ndarray
    goal_neg: np.ndarray


class BlindArgs(NamedTuple):
    """Blind: 0 in a goal state, 1 elsewhere."""

    goal: np.ndarray
    goal_neg: np.ndarray


def lifted_value(args: Any, state: np.ndarray, n: int) -> float:
    """The value of the state ``state[:n]`` under the heuristic `args`; numba overloads only."""
    raise TypeError("lifted_value is called from compiled code only")


@njit(cache=CACHE, inline="always")
def _holds(state, n, f):
    i = lower_bound(state, 0, n, f)
    return i < n and state[i] == f


@njit(**_JIT)
def goal_count(goal, goal_neg, state, n):
    """Unsatisfied goal facts of the state ``state[:n]``."""
    c = 0
    for g in goal:
        if not _holds(state, n, g):
            c += 1
    for g in goal_neg:
        if _holds(state, n, g):
            c += 1
    return float(c)


@overload(lifted_value, jit_options=_JIT)
def _lifted_value(args, state, n):
    kind = getattr(args, "instance_class", None)
    if kind is GoalCountArgs:
        return lambda args, state, n: goal_count(args.goal, args.goal_neg, state, n)
    if kind is BlindArgs:
        return lambda args, state, n: 0.0 if goal_count(args.goal, args.goal_neg, state, n) == 0.0 else 1.0
    return None
