"""A learned heuristic's symbolic inputs (its admissible bound l, its residual base) inside numba.

`agents.learned_heuristic.LearnedHeuristic` gets l and the residual base from `heuristic.batch`
of its own instances of `pddlgym_sl.heuristics` (one per role). A compiled heuristic calls the
same kernels (`lmcut_value`, `explore`, `ff_value`, the blind rule), one state at a time, on the
work arrays of the same kind of instances: the heuristics' adaptive queues then see the same
states in the same order, and give the same values (their tie-breaking may depend on the states
evaluated before, `pddlgym_sl.heuristics.queues`).

Each role's arrays are a NamedTuple whose class names the heuristic: `symbolic_value(h, words)`
picks the kernel from the class while numba compiles its caller, so a compiled function holds
the kernels of the heuristics it uses only. `NoSymbolic` stands for "no residual" (value 0).
Of the task's `FDRLayout` they hold the two tables the kernels read (`state_props`), not its
twenty-odd arrays: numba passes a tuple to a function array by array, per evaluated state. For
the same reason the kernels are inlined into their caller (``inline="always"``, as is
`heuristic.wl_value` into its batch loops): a call per state passing these tuples cost about
half a microsecond, as much as a small task's reachability test (0.82 against 1.29 us per state
of a spanner task through ``batch``).

Where a head uses its bound only to recognise dead ends (N without clip: its value is μ, or
``inf`` when the bound is), hmax and LM-cut are replaced by `ReachArgs`: relaxed reachability of
the goal, which is exactly when hmax and LM-cut are finite (both return ``inf`` precisely when
the relaxed exploration leaves a goal proposition unreached), at a fraction of their cost.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from agents.errors import AgentError
from pddlgym_sl.heuristics import Heuristic
from pddlgym_sl.heuristics.lmcut import LMCut, lmcut_value
from pddlgym_sl.heuristics.relaxation import HFF, HMax, explore, ff_value
from pddlgym_sl.heuristics.relaxed_task import EFFECT, state_props
from pddlgym_sl.heuristics.simple import Blind
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.successors import satisfies

__all__ = [
    "BlindArgs",
    "FFArgs",
    "HMaxArgs",
    "LMCutArgs",
    "NoSymbolic",
    "ReachArgs",
    "StateTables",
    "symbolic_args",
    "symbolic_value",
]

_JIT = {"cache": CACHE, "nogil": True}
_INLINE = {**_JIT, "inline": "always"}
_UNREACHED = np.uint32(0xFFFFFFFF)


class LMCutArgs(NamedTuple):
    ct: Any
    fdr: Any
    work: Any


class HMaxArgs(NamedTuple):
    ut: Any
    fdr: Any
    work: Any


class FFArgs(NamedTuple):
    ut: Any
    fdr: Any
    work: Any


class ReachArgs(NamedTuple):
    """Relaxed reachability of the goal (0 reachable, inf not) on hmax's unary task and arrays."""

    ut: Any
    fdr: Any
    work: Any


class BlindArgs(NamedTuple):
    goal: np.ndarray
    goal_neg: np.ndarray
    step: float


class StateTables(NamedTuple):
    """`FDRLayout`'s ``var_table`` and ``fact_table``: all of it that the kernels read."""

    var_table: np.ndarray
    fact_table: np.ndarray


class NoSymbolic(NamedTuple):
    none: np.ndarray  # empty: numba types a NamedTuple by its fields, and it needs one


def symbolic_args(heuristic: Heuristic | None, dead_ends_only: bool = False) -> NamedTuple:
    """The compiled arguments of `heuristic` (an instance of blind, hmax, hFF or LM-cut with Fast
    Downward's default options), sharing its work arrays; `NoSymbolic` for None. With
    `dead_ends_only`, hmax and LM-cut become `ReachArgs` (the module docstring)."""
    if heuristic is None:
        return NoSymbolic(np.zeros(0, dtype=np.int64))
    task = heuristic.task
    fdr = StateTables(task.fdr.var_table, task.fdr.fact_table)
    if dead_ends_only and isinstance(heuristic, (HMax, LMCut)):
        hmax = heuristic if type(heuristic) is HMax else HMax(task)
        return ReachArgs(hmax.ut, fdr, hmax.work)
    if isinstance(heuristic, LMCut) and heuristic.goal_zone_detection and heuristic.border_detection:
        return LMCutArgs(heuristic.ct, fdr, heuristic.work)
    if type(heuristic) is HMax:
        return HMaxArgs(heuristic.ut, fdr, heuristic.work)
    if type(heuristic) is HFF:
        return FFArgs(heuristic.ut, fdr, heuristic.work)
    if type(heuristic) is Blind:
        return BlindArgs(task.goal, task.goal_neg, float(heuristic.step))
    raise AgentError(f"{heuristic!r} has no compiled value here (blind, hmax, hff and lmcut have)")


def symbolic_value(h: Any, words: np.ndarray) -> float:
    """The value (inf for a dead end) of the heuristic `h` (`symbolic_args`) on one state; numba
    overloads only."""
    raise TypeError("symbolic_value is called from compiled code only")


@njit(**_INLINE)
def _lmcut(h, words):
    v = lmcut_value(words, h.ct, h.fdr, h.work, True, True)
    return np.inf if v < 0 else float(v)


@njit(**_INLINE)
def _hmax(h, words):
    v = explore(words, h.ut, h.fdr, False, h.work)
    return np.inf if v < 0 else float(v)


@njit(**_INLINE)
def _ff(h, words):
    v, _ = ff_value(words, h.ut, h.fdr, h.work)
    return np.inf if v < 0 else float(v)


@njit(**_INLINE)
def _reach(h, words):
    """0 when the goal is reachable from `words` in the delete relaxation, else inf: a
    first-in-first-out exploration of the unary operators (``work.prop[p, 0]`` 0 marks a reached
    proposition, ``work.props`` is the queue: each proposition enters it at most once)."""
    ut, w = h.ut, h.work
    ops, unary, prop, queue = ut.ops, w.unary, w.prop, w.props
    pre_of_ptr, pre_of_idx, is_goal, reset = ut.pre_of_ptr, ut.pre_of_idx, ut.is_goal, ut.reset
    n_unary = ops.shape[0]
    for p in range(prop.shape[0]):
        prop[p, 0] = _UNREACHED
    for i in range(n_unary):  # unsatisfied preconditions
        unary[n_unary + i] = reset[n_unary + i]
    n = state_props(words, h.fdr, queue)
    tail = 0
    for i in range(n):  # the state's propositions, then the effects of operators without preconditions
        p = queue[i]
        if prop[p, 0] != 0:
            prop[p, 0] = 0
            queue[tail] = p
            tail += 1
    for i in range(ut.no_pre.shape[0]):
        e = ops[ut.no_pre[i], EFFECT]
        if prop[e, 0] != 0:
            prop[e, 0] = 0
            queue[tail] = e
            tail += 1
    unsolved = ut.goal.shape[0]
    head = 0
    while head < tail and unsolved > 0:
        p = queue[head]
        head += 1
        if is_goal[p]:
            unsolved -= 1
        for k in range(pre_of_ptr[p], pre_of_ptr[p + 1]):
            u = pre_of_idx[k]
            left = unary[n_unary + u] - np.uint32(1)
            unary[n_unary + u] = left
            if left == 0:
                e = ops[u, EFFECT]
                if prop[e, 0] != 0:
                    prop[e, 0] = 0
                    queue[tail] = e
                    tail += 1
    while head < tail and unsolved > 0:  # goals queued but not yet popped
        unsolved -= 1 if is_goal[queue[head]] else 0
        head += 1
    return 0.0 if unsolved == 0 else np.inf


@njit(**_INLINE)
def _blind(h, words):
    return 0.0 if satisfies(words, h.goal, h.goal_neg) else h.step


@overload(symbolic_value, jit_options=_JIT)
def _symbolic_value(h, words):
    kernels = {LMCutArgs: _lmcut, HMaxArgs: _hmax, FFArgs: _ff, BlindArgs: _blind, ReachArgs: _reach}
    kernel = kernels.get(getattr(h, "instance_class", None))
    if kernel is not None:
        return lambda h, words: kernel(h, words)
    if getattr(h, "instance_class", None) is NoSymbolic:
        return lambda h, words: 0.0
    return None
