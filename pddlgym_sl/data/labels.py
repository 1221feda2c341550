"""Labels of one solved problem: every state of a plan with its cost-to-go and heuristic values.

An *optimal* plan (A* + LM-cut) gives each state its h*; a *satisficing* plan (for tasks A* cannot
solve within its limits, `pddlgym_sl.data.solve`) gives each state only the interval
``[l(s), u(s)]`` that must hold h*: l any admissible bound, u the plan's remaining cost. Both are
stored alike, the cost-to-go along the plan in ``h_star``, and ``label_kind`` says which it is.

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
``format``      () int64                `LABEL_FORMAT` (absent: 1)
``label_kind``  () unicode              ``optimal`` (h_star is h*) or ``satisficing``
                                        (h_star is the plan's cost-to-go u >= h*; absent:
                                        optimal)
==============  ======================  ==================================================

Optional keys, added later by `pddlgym_sl.data.upper` (a file without them loads as before, with
``upper`` None; `add_columns` adds keys to a file and keeps every key it already holds):

================  ====================  ==================================================
``upper``         (n+1,) float64        cost of a satisficing plan from each state (an
                                        upper bound on h*; inf where none was found)
``upper_method``  () unicode            how it was computed: search, budget and version
                                        (`pddlgym_sl.data.upper.upper_method`)
================  ====================  ==================================================

Format 2 adds the *siblings* of the plan (for ranking losses): every successor of a plan state
s_i other than the next plan state s_{i+1}, i < n, deduplicated per parent (ascending words; none
for a satisficing plan, whose next state need not rank below them, `label_plan`):

=====================  ======================  =============================================
``sibling_states``     (m, n_words) uint64     packed sibling states
``sibling_parent``     (m,) int32              i: the plan state s_i they are a successor of
``sibling_<name>``     (m,) float64            one array per name in `LABEL_HEURISTICS`
``sibling_features``   (m, 4) float64          the linear model's features
=====================  ======================  =============================================

Their h* is unknown (a sibling may lie on another optimal plan). Files of format 1 load with
``siblings = None``; `add_siblings` upgrades them from their stored plan without solving again.
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
LABEL_FORMAT = 2
"""Version of the label file layout: 1 plan states only; 2 also their siblings (additive)."""
LABEL_KINDS = ("optimal", "satisficing")
"""What a label file's ``h_star`` is: h* (an optimal plan's cost-to-go), or an upper bound of it."""
__all__ = [
    "BOUND_NAMES",
    "FEATURE_NAMES",
    "LABEL_FORMAT",
    "LABEL_HEURISTICS",
    "LABEL_KINDS",
    "ProblemLabels",
    "Siblings",
    "StaleLabelsError",
    "add_columns",
    "add_siblings",
    "check_core",
    "label_plan",
    "label_siblings",
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
class Siblings:
    """The siblings of one problem's plan states (see the module docstring)."""

    states: np.ndarray
    parent: np.ndarray
    values: dict[str, np.ndarray]
    features: np.ndarray

    def __len__(self) -> int:
        return len(self.parent)


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
    siblings: Siblings | None = None
    optimal: bool = True
    """``h_star`` is h* (else the satisficing plan's cost-to-go, an upper bound of h*)"""

    def __len__(self) -> int:
        return len(self.h_star)


def label_plan(task: CompiledTask, plan: Sequence[str], problem: str, optimal: bool = True) -> ProblemLabels:
    """Replay `plan` of `task` (validating it) and label each visited state and the siblings of
    the plan; `optimal` says whether the plan is optimal (its cost-to-go is h*) or satisficing
    (an upper bound of h*). A satisficing plan gets no siblings (an empty set): its step from a
    state need not be the best one, so "the next plan state ranks below its siblings" does not
    hold for it, and on tasks with hundreds of successors per state (childsnack) its siblings
    were a hundred times its plan states."""
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
        siblings=label_siblings(task, states if optimal else states[:1]),
        optimal=optimal,
    )


def label_siblings(task: CompiledTask, states: np.ndarray) -> Siblings:
    """The siblings of the plan through `states` (s_0 .. s_n) and their heuristic values."""
    rows, parents = [], []
    for i in range(len(states) - 1):
        _, successors, _ = task.expand(np.ascontiguousarray(states[i]))
        successors = np.unique(successors, axis=0)  # one row per distinct state, ascending words
        successors = successors[~np.all(successors == states[i + 1], axis=1)]
        rows.append(successors)
        parents.append(np.full(len(successors), i, dtype=np.int32))
    sib = np.concatenate(rows) if rows else np.zeros((0, states.shape[1]), dtype=states.dtype)
    sib = np.ascontiguousarray(sib)
    values, features = heuristic_values(task, sib)
    parent = np.concatenate(parents) if parents else np.zeros(0, dtype=np.int32)
    return Siblings(states=sib, parent=parent, values=values, features=features)


def add_siblings(path: str | Path, task: CompiledTask) -> bool:
    """Give a label file of format 1 its siblings (replaying its stored plan in `task`, the task
    it was made from); False when it already has them."""
    labels = load_labels(path)
    if labels.siblings is not None:
        return False
    if task.facts != labels.facts:
        raise ConfigError("labels were made with a different fact numbering than this task", file=path)
    labels.siblings = label_siblings(task, task.states_to_array(task.validate_plan(labels.plan)).copy())
    save_labels(path, labels)
    return True


def heuristic_values(task: CompiledTask, states: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every label heuristic and the linear model's features on a (n, n_words) state batch."""
    values = {name: make_heuristic(name, task).batch(states) for name in LABEL_HEURISTICS}
    return values, make_heuristic("hff", task).features_batch(states)


def check_labels(labels: ProblemLabels) -> list[str]:
    """Consistency checks every label set must pass; returns the violations (empty when fine):
    finite admissible bounds with blind, hmax <= lmcut <= h*, and h* = 0 exactly at the end (for a
    satisficing plan the same with its cost-to-go, which bounds h* from above)."""
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
    """Write `labels` to an ``.npz`` file atomically (format 2 with siblings, 1 without)."""
    sib = labels.siblings
    extra = {}
    if sib is not None:
        extra = {
            "format": np.array(LABEL_FORMAT),
            "sibling_states": sib.states,
            "sibling_parent": sib.parent.astype(np.int32),
            "sibling_features": sib.features,
            **{f"sibling_{name}": sib.values[name] for name in LABEL_HEURISTICS},
        }
    atomic_save_npz(
        path,
        states=labels.states,
        h_star=labels.h_star,
        features=labels.features,
        plan=np.array(labels.plan, dtype=str),
        facts=np.array(labels.facts, dtype=str),
        problem=np.array(labels.problem),
        core=np.array(CORE_VERSION),
        label_kind=np.array(LABEL_KINDS[0] if labels.optimal else LABEL_KINDS[1]),
        **{name: labels.values[name] for name in LABEL_HEURISTICS},
        **_upper_columns(labels.upper, labels.upper_method),
        **extra,
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
        siblings = None
        if "sibling_states" in z.files:
            siblings = Siblings(
                states=z["sibling_states"],
                parent=z["sibling_parent"],
                values={name: z[f"sibling_{name}"] for name in LABEL_HEURISTICS},
                features=z["sibling_features"],
            )
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
            siblings=siblings,
            optimal=_label_kind(z, path) == LABEL_KINDS[0],
        )


def _label_kind(z, path: str | Path) -> str:
    kind = str(z["label_kind"]) if "label_kind" in z.files else LABEL_KINDS[0]
    if kind not in LABEL_KINDS:
        raise ConfigError(f"label_kind {kind!r} is none of {', '.join(LABEL_KINDS)}", file=path)
    return kind
