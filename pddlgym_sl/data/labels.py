"""Labels of one solved problem: every state of an optimal plan with h* and heuristic values.

The heuristic values come from `pddlgym_sl.heuristics`, the same engine search uses at test time,
so training inputs and search-time inputs never disagree.

On disk a problem's labels are one ``.npz`` file (no pickled objects; ``np.load`` with
``allow_pickle=False``) holding:

==============  ======================  ==================================================
key             shape / dtype           meaning
==============  ======================  ==================================================
``states``      (n+1, n_words) uint64   packed plan states s_0 (initial) .. s_n (goal)
``h_star``      (n+1,) int32            optimal cost-to-go: n, n-1, ..., 0
``lmcut`` ...   (n+1,) float64          one array per name in `LABEL_HEURISTICS`
``features``    (n+1, 4) float64        goal count, hFF, total and mean ignored deletes
``plan``        (n,) unicode            the optimal plan's action names
``facts``       (n_facts,) unicode      the task's fact names (bit i of a state = facts[i])
``problem``     () unicode              problem file name
``core``        () int64                `CORE_VERSION` of the task the labels were made with
==============  ======================  ==================================================

Optional keys, added later by `pddlgym_sl.data.upper` (a file without them loads as before, with
``upper`` None; `add_columns` adds keys to a file and keeps every key it already holds):

================  ====================  ==================================================
``upper``         (n+1,) float64        cost of a satisficing plan from each state (an
                                        upper bound on h*; inf where none was found)
``upper_method``  () unicode            how it was computed: search, budget and version
                                        (`pddlgym_sl.data.upper.upper_method`)
================  ====================  ==================================================

Labels made by another core (another grounding or other heuristic values) are rejected on
loading (`StaleLabelsError`), so they are never mixed with new ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics import FEATURE_NAMES, HEURISTICS, make_heuristic
from pddlgym_sl.io import atomic_save_npz
from pddlgym_sl.task import CORE_VERSION, CompiledTask

# `HEURISTICS` lists each kind from the weakest to the most informative; labels list it strongest first.
BOUND_NAMES = tuple(name for name, h in reversed(HEURISTICS.items()) if h.admissible)
"""The admissible heuristics (`Heuristic.admissible`): lmcut, hmax, blind."""
INFORMATIVE_NAMES = tuple(name for name, h in reversed(HEURISTICS.items()) if not h.admissible)
"""The other heuristics: hff, hadd, goal_count."""
LABEL_HEURISTICS = BOUND_NAMES + INFORMATIVE_NAMES
__all__ = [
    "BOUND_NAMES",
    "FEATURE_NAMES",
    "LABEL_HEURISTICS",
    "ProblemLabels",
    "StaleLabelsError",
    "add_columns",
    "check_core",
    "label_plan",
    "load_labels",
]


class StaleLabelsError(ConfigError):
    """Labels or a dataset were made by another version of the core (see `CORE_VERSION`)."""


def check_core(found: int, where: str | Path) -> None:
    """Raise `StaleLabelsError` unless labels made with core version `found` are current."""
    if found != CORE_VERSION:
        raise StaleLabelsError(
            f"labelled with core version {found}, but this pddlgym-sl grounds tasks and computes "
            f"heuristics with core version {CORE_VERSION} (facts, actions or heuristic values differ): "
            "rebuild it with python -m pddlgym_sl.data.generate ... --rebuild",
            file=where,
        )


@dataclass
class ProblemLabels:
    """The labelled plan states of one problem (see the module docstring for the fields)."""

    problem: str
    plan: list[str]
    states: np.ndarray
    h_star: np.ndarray
    values: dict[str, np.ndarray]
    features: np.ndarray
    facts: tuple[str, ...]
    upper: np.ndarray | None = None
    upper_method: str | None = None

    def __len__(self) -> int:
        return len(self.h_star)


def label_plan(task: CompiledTask, plan: Sequence[str], problem: str) -> ProblemLabels:
    """Replay an optimal `plan` of `task` (validating it) and label each visited state."""
    visited = task.validate_plan(plan)
    states = task.states_to_array(visited).copy()
    n = len(plan)
    values, features = heuristic_values(task, states)
    return ProblemLabels(
        problem=problem,
        plan=list(plan),
        states=states,
        h_star=np.arange(n, -1, -1, dtype=np.int32),
        values=values,
        features=features,
        facts=task.facts,
    )


def heuristic_values(task: CompiledTask, states: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every label heuristic and the linear model's features on a (n, n_words) state batch."""
    values = {name: make_heuristic(name, task).batch(states) for name in LABEL_HEURISTICS}
    return values, make_heuristic("hff", task).features_batch(states)


def check_labels(labels: ProblemLabels) -> list[str]:
    """Consistency checks every label set must pass; returns the violations (empty when fine):
    finite admissible bounds with blind, hmax <= lmcut <= h*, and h* = 0 exactly at the end."""
    problems = []
    h = labels.h_star.astype(np.float64)
    v = labels.values
    for name in BOUND_NAMES:
        if not np.all(np.isfinite(v[name])):
            problems.append(f"{name} is infinite on a state with a plan")
        if np.any(v[name] > h + 1e-9):
            problems.append(f"{name} exceeds h* (inadmissible)")
    if np.any(v["hmax"] > v["lmcut"] + 1e-9):
        problems.append("hmax exceeds lmcut")
    if labels.h_star[-1] != 0 or np.any(np.diff(labels.h_star) != -1):
        problems.append("h* is not n, n-1, ..., 0")
    return problems


def save_labels(path: str | Path, labels: ProblemLabels) -> None:
    """Write `labels` to an ``.npz`` file atomically."""
    atomic_save_npz(
        path,
        states=labels.states,
        h_star=labels.h_star,
        features=labels.features,
        plan=np.array(labels.plan, dtype=str),
        facts=np.array(labels.facts, dtype=str),
        problem=np.array(labels.problem),
        core=np.array(CORE_VERSION),
        **{name: labels.values[name] for name in LABEL_HEURISTICS},
        **_upper_columns(labels.upper, labels.upper_method),
    )


def _upper_columns(upper: np.ndarray | None, method: str | None) -> dict[str, np.ndarray]:
    return {} if upper is None else {"upper": np.asarray(upper, np.float64), "upper_method": np.array(method)}


def add_columns(path: str | Path, **arrays: np.ndarray) -> None:
    """Rewrite the label file `path` atomically with `arrays` added (or replaced), keeping every
    other key it holds, including keys this version does not know."""
    with np.load(path, allow_pickle=False) as z:
        check_core(int(z["core"]) if "core" in z.files else 1, path)
        kept = {k: z[k] for k in z.files if k not in arrays}
    atomic_save_npz(path, **kept, **arrays)


def load_labels(path: str | Path) -> ProblemLabels:
    """Read a label file written by `save_labels` (no pickle); `StaleLabelsError` when it was made
    by another core version."""
    with np.load(path, allow_pickle=False) as z:
        check_core(int(z["core"]) if "core" in z.files else 1, path)
        return ProblemLabels(
            problem=str(z["problem"]),
            plan=z["plan"].tolist(),
            states=z["states"],
            h_star=z["h_star"],
            values={name: z[name] for name in LABEL_HEURISTICS},
            features=z["features"],
            facts=tuple(z["facts"].tolist()),
            upper=z["upper"] if "upper" in z.files else None,
            upper_method=str(z["upper_method"]) if "upper" in z.files else None,
        )
