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
in `LAZY_DEAD_ENDS` may give a dead end (``inf`` in ``batch``) a finite value if its
`dead_on_expansion` then flags that state when the engine is about to expand it.

Why a batch per expansion and not a call per state: the call passes every array of ``args``
(reference counts included), which costs about a fifth of hFF's own time when paid per state;
numba's inlining of overloads (``inline="always"``) would avoid it but mis-compiles this engine
(it reuses the caller's loop variables).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.extending import overload

__all__ = ["INTEGER_VALUED", "LAZY_DEAD_ENDS", "dead_on_expansion", "state_values"]

INTEGER_VALUED: set[type] = set()
"""Argument classes of compiled heuristics whose values are whole numbers (or inf)."""

LAZY_DEAD_ENDS: set[type] = set()
"""Argument classes that overload `dead_on_expansion` themselves (the others never call a state a
dead end there)."""


def state_values(args: Any, states: np.ndarray, n: int, out: np.ndarray) -> None:
    """The values of ``states[:n]`` under the compiled heuristic `args` into ``out[:n]`` (numba
    overloads only)."""
    raise TypeError("state_values is called from compiled code only; use Heuristic.batch from Python")


def dead_on_expansion(args: Any, words: np.ndarray) -> bool:
    """Whether the state `words`, about to be expanded, is a dead end that `args` did not flag when
    it evaluated it (numba overloads only).

    A heuristic whose only use of some costly test is to give dead ends ``inf`` (the learned N
    heads test relaxed reachability) may run that test here, on the states the search expands,
    instead of on every state it evaluates: the engine then closes such a state as a dead end
    without expanding it. The search is the same as with the test at evaluation time (the dead
    end's open entries do not change the order of the others, and it is never expanded), with the
    same evaluations, expansions and plan, while the test runs once per expansion instead of once
    per successor. Register the class in `LAZY_DEAD_ENDS` and overload this for it."""
    raise TypeError("dead_on_expansion is called from compiled code only")


@overload(dead_on_expansion)
def _never_dead_on_expansion(args, words):
    if getattr(args, "instance_class", None) in LAZY_DEAD_ENDS:
        return None
    return lambda args, words: False
