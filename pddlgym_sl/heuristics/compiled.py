"""Heuristics that the search engine evaluates inside its compiled loop.

A heuristic runs inside `pddlgym_sl.search.engine` (no Python call per expansion) when its
`engine_args()` returns a NamedTuple of arrays whose *class is its own*: after each expansion
the engine calls ``state_values(args, states, n, out)`` for the new states, and numba picks the
implementation from the type of ``args`` while it compiles the engine. So the engine is compiled once per
heuristic type (and cached per type), and a compiled engine contains the kernels of its one
heuristic only: a run never compiles a heuristic it does not use.

Adding a compiled heuristic (in this package or outside it, e.g. a learned model in ``agents``):

1. a NamedTuple class holding what the kernel reads and its work arrays;
2. ``@overload(state_values)`` returning, for that class only (``args.instance_class is MyArgs``),
   ``lambda args, states, n, out: my_kernel(args, states, n, out)`` where ``my_kernel`` is an
   ``@njit`` function writing the values of rows ``0..n-1`` of ``states`` into ``out[:n]`` as
   float64 (``inf`` for a dead end), in row order; a row is a state's fact bit set as uint64 words
   (`pddlgym_sl.task.State`). The module that registers the overload must be imported before the
   first search with that heuristic (defining the class in the same module guarantees it);
3. ``engine_args()`` on the heuristic object returning an instance;
4. if its values are always whole numbers (or inf), ``INTEGER_VALUED.add(MyArgs)``: the engine then
   stores them as int32 and keeps a GBFS open list in buckets (4 bytes per entry) instead of a heap.

The values must be what ``heuristic.batch`` returns for the same states: the engine's search is
then the same as the Python-driven one, node for node. One exception keeps that promise: a class
in `LAZY_VALUES` may give a state a *provisional* value, at most its value in ``batch``, if its
`value_on_expansion` gives the state's value when the engine is about to expand it (``inf`` for
a dead end): the engine then files the state again under that value instead of expanding it
when it is larger (`value_on_expansion`).

Why a batch per expansion and not a call per state: the call passes every array of ``args``
(reference counts included), which costs about a fifth of hFF's own time when paid per state;
numba's inlining of overloads (``inline="always"``) would avoid it but mis-compiles this engine
(it reuses the caller's loop variables).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.extending import overload

__all__ = ["INTEGER_VALUED", "LAZY_VALUES", "lazy_values", "state_values", "value_on_expansion"]

INTEGER_VALUED: set[type] = set()
"""Argument classes of compiled heuristics whose values are whole numbers (or inf)."""

LAZY_VALUES: set[type] = set()
"""Argument classes whose evaluations may be provisional: they overload `value_on_expansion`
themselves (the others' values are final when the engine files them)."""


def state_values(args: Any, states: np.ndarray, n: int, out: np.ndarray) -> None:
    """The values of ``states[:n]`` under the compiled heuristic `args` into ``out[:n]`` (numba
    overloads only)."""
    raise TypeError("state_values is called from compiled code only; use Heuristic.batch from Python")


def lazy_values(args: Any) -> bool:
    """Whether `args`'s class is in `LAZY_VALUES` (a constant of the compiled engine)."""
    raise TypeError("lazy_values is called from compiled code only")


def value_on_expansion(args: Any, words: np.ndarray, h: float) -> float:
    """The value of the state `words`, which the engine is about to expand and whose evaluation
    (`state_values`) gave the provisional value `h` (numba overloads only; called once per state,
    for classes in `LAZY_VALUES`).

    Two uses, one contract: the value returned must be at least `h`, and be what ``batch`` gives.

    - Dead ends found on expansion: a heuristic whose only use of some costly test is to give
      dead ends ``inf`` (the learned N heads test relaxed reachability) may run that test here,
      on the states the search expands, instead of on every state it evaluates; the engine then
      closes such a state as a dead end without expanding it. The search is the same as with the
      test at evaluation time (the dead end's open entries do not change the order of the others,
      and it is never expanded), with the same evaluations, expansions and plan, while the test
      runs once per expansion instead of once per successor.
    - Deferred values (lazy evaluation with a lower bound, as Tolpin and Felner's lazy A*): a
      heuristic whose value is costly (a truncated Gaussian's mean needs its admissible bound,
      LM-cut) may file a state under a cheap lower bound of it (the Gaussian's μ) and compute the
      value here: a larger value files the state again under it instead of expanding it. A state
      is then expanded only when its value is the least in the open list (the others' provisional
      values being lower bounds of theirs), so the search expands the states the eager one does,
      in the same order but among equal values, while the costly part runs once per expansion
      (and once per state filed again) instead of once per evaluation."""
    raise TypeError("value_on_expansion is called from compiled code only")


@overload(lazy_values)
def _lazy_values(args):
    lazy = getattr(args, "instance_class", None) in LAZY_VALUES
    return lambda args: lazy


@overload(value_on_expansion)
def _final_values(args, words, h):
    if getattr(args, "instance_class", None) in LAZY_VALUES:
        return None
    return lambda args, words, h: h
