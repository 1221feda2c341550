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
then the same as the Python-driven one, node for node.

Why a batch per expansion and not a call per state: the call passes every array of ``args``
(reference counts included), which costs about a fifth of hFF's own time when paid per state;
numba's inlining of overloads (``inline="always"``) would avoid it but mis-compiles this engine
(it reuses the caller's loop variables).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["INTEGER_VALUED", "state_values"]

INTEGER_VALUED: set[type] = set()
"""Argument classes of compiled heuristics whose values are whole numbers (or inf)."""


def state_values(args: Any, states: np.ndarray, n: int, out: np.ndarray) -> None:
    """The values of ``states[:n]`` under the compiled heuristic `args` into ``out[:n]`` (numba
    overloads only)."""
    raise TypeError("state_values is called from compiled code only; use Heuristic.batch from Python")
