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
twenty-odd arrays: numba passes a tuple to a function array by array, per evaluated state.
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
from pddlgym_sl.heuristics.simple import Blind
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.successors import satisfies

__all__ = [
    "BlindArgs",
    "FFArgs",
    "HMaxArgs",
    "LMCutArgs",
    "NoSymbolic",
    "StateTables",
    "symbolic_args",
    "symbolic_value",
]

_JIT = {"cache": CACHE, "nogil": True}


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


def symbolic_args(heuristic: Heuristic | None) -> NamedTuple:
    """The compiled arguments of `heuristic` (an instance of blind, hmax, hFF or LM-cut with Fast
    Downward's default options), sharing its work arrays; `NoSymbolic` for None."""
    if heuristic is None:
        return NoSymbolic(np.zeros(0, dtype=np.int64))
    task = heuristic.task
    fdr = StateTables(task.fdr.var_table, task.fdr.fact_table)
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


@njit(**_JIT)
def _lmcut(h, words):
    v = lmcut_value(words, h.ct, h.fdr, h.work, True, True)
    return np.inf if v < 0 else float(v)


@njit(**_JIT)
def _hmax(h, words):
    v = explore(words, h.ut, h.fdr, False, h.work)
    return np.inf if v < 0 else float(v)


@njit(**_JIT)
def _ff(h, words):
    v, _ = ff_value(words, h.ut, h.fdr, h.work)
    return np.inf if v < 0 else float(v)


@njit(**_JIT)
def _blind(h, words):
    return 0.0 if satisfies(words, h.goal, h.goal_neg) else h.step


@overload(symbolic_value, jit_options=_JIT)
def _symbolic_value(h, words):
    kernels = {LMCutArgs: _lmcut, HMaxArgs: _hmax, FFArgs: _ff, BlindArgs: _blind}
    kernel = kernels.get(getattr(h, "instance_class", None))
    if kernel is not None:
        return lambda h, words: kernel(h, words)
    if getattr(h, "instance_class", None) is NoSymbolic:
        return lambda h, words: 0.0
    return None
