"""Heuristics that the search engine evaluates inside its compiled loop.

A heuristic runs inside `pddlgym_sl.search.engine` (no Python call per expansion) when its
`engine_args()` returns a NamedTuple of arrays whose *class is its own*: the engine calls
``state_value(args, words)`` for every state it evaluates, and numba picks the implementation
from the type of ``args`` while it compiles the engine. So the engine is compiled once per
heuristic type (and cached per type), and a compiled engine contains the kernels of its one
heuristic only: a run never compiles a heuristic it does not use.

Adding a compiled heuristic (in this package or outside it, e.g. a learned model in ``agents``):

1. a NamedTuple class holding what the kernel reads and its work arrays;
2. ``@overload(state_value)`` returning, for that class only (``args.instance_class is MyArgs``),
   ``lambda args, words: my_kernel(args, words)`` where ``my_kernel`` is an ``@njit`` function
   returning the state's value as a float64 (``inf`` for a dead end); ``words`` is the state's
   fact bit set as 1-D uint64 words (`pddlgym_sl.task.State`). The module that registers the
   overload must be imported before the first search with that heuristic (defining the class
   in the same module guarantees it);
3. ``engine_args()`` on the heuristic object returning an instance.

The values must be what ``heuristic.batch`` returns for the same states: the engine's search is
then the same as the Python-driven one, node for node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["state_value"]


def state_value(args: Any, words: np.ndarray) -> float:
    """The value of one state under the compiled heuristic `args` (numba overloads only)."""
    raise TypeError("state_value is called from compiled code only; use Heuristic.batch from Python")
