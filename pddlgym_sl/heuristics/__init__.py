"""Classical planning heuristics on `CompiledTask` states, as compiled (numba) kernels that give
Fast Downward's values (the heuristics of the same names in its wheel; tested on the initial state
of every IPC 2023 Learning Track training task).

Usage::

    h = make_heuristic("lmcut", task)      # built once per task
    h(task.init)                           # one state -> float (inf for a dead end)
    h.batch(task.states_to_array(states))  # (n, n_words) uint64 -> (n,) float64, one compiled call

The registry is the explicit `HEURISTICS` dict (no discovery by class name):

- ``blind``: 0 at the goal, else the cheapest action cost (admissible; ``blind()``);
- ``goal_count``: unsatisfied goal conditions (``goalcount()``);
- ``hmax``: max-cost delete relaxation (admissible; ``hmax()``);
- ``hadd``: additive delete relaxation (``add()``);
- ``hff``: FF's relaxed plan from hadd supporters (``ff()``; also `HFF.relaxed_plan` and the
  linear model's `HFF.features` / `HFF.features_batch`);
- ``lmcut``: landmark-cut (admissible, dominates hmax; ``lmcut()`` with its default options).

They work on the task's finite-domain view, so negative preconditions count as Fast Downward
counts them (a negated atom is a proposition of its own, reached by the actions that delete the
atom). hmax, hadd, hff and lmcut return ``inf`` when the goal is unreachable even in the delete
relaxation.
"""

from __future__ import annotations

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics.base import Heuristic
from pddlgym_sl.heuristics.lmcut import LMCut
from pddlgym_sl.heuristics.relaxation import FEATURE_NAMES, HFF, HAdd, HMax
from pddlgym_sl.heuristics.simple import Blind, GoalCount
from pddlgym_sl.task import CompiledTask

HEURISTICS: dict[str, type[Heuristic]] = {
    "blind": Blind,
    "goal_count": GoalCount,
    "hmax": HMax,
    "hadd": HAdd,
    "hff": HFF,
    "lmcut": LMCut,
}


def make_heuristic(name: str, task: CompiledTask) -> Heuristic:
    """Build the heuristic registered as `name` for `task`; `ConfigError` for an unknown name."""
    try:
        cls = HEURISTICS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown heuristic {name!r}; expected one of {', '.join(HEURISTICS)}") from None
    return cls(task)


__all__ = [
    "FEATURE_NAMES",
    "HEURISTICS",
    "HFF",
    "Blind",
    "GoalCount",
    "HAdd",
    "HMax",
    "Heuristic",
    "LMCut",
    "make_heuristic",
]
