"""`Expander`: the applicable ground actions and successors of lifted states, from Python.

The search engine (`engine`) calls the same kernels inside its compiled loop; this class is for
everything else (tests, plan replay, the environment-like uses) and owns its scratch arrays.
A state is a sorted uint32 array of fact ids (`task.LiftedTask`); a ground action a row
``(schema, objects...)`` of int64.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pddlgym_sl.lifted.join import (
    OVERFLOW,
    apply_action,
    build_views,
    enumerate_bindings,
    state_codes,
)
from pddlgym_sl.lifted.query import LiftedError
from pddlgym_sl.lifted.symmetry import SymmetryArgs, object_classes, symmetry_args
from pddlgym_sl.lifted.task import LiftedTask

__all__ = ["Expander", "view_capacity"]


def view_capacity(task: LiftedTask) -> int:
    """Entries the fluent views of any state of `task` can need: per view, the reachable atoms of
    its predicate."""
    a_max = task.max_arity
    preds = task.fact_code // task.plan.pw[a_max]
    counts = np.bincount(preds, minlength=len(task.pred_names))
    return int(sum(counts[p] for p in task.plan.views[:, 0]))


class Expander:
    """Successor generation on one `LiftedTask` (not thread-safe: one instance per thread).

    Args:
        task: the lifted task.
        symmetry: bind interchangeable objects in canonical order only (`join`'s module
            docstring; `symmetry.object_classes` per state): fewer, non-isomorphic successors.
    """

    def __init__(self, task: LiftedTask, symmetry: bool = False) -> None:
        self.task = task
        self.symmetry = symmetry
        self._sym: SymmetryArgs | None = None
        plan = task.plan
        self._binding = np.zeros(max(task.max_params, 1), dtype=np.int64)
        n_steps = max(len(plan.steps), 1)
        self._pos = np.zeros(n_steps, dtype=np.int64)
        self._end = np.zeros(n_steps, dtype=np.int64)
        self._out = np.zeros((1024, 1 + task.max_params), dtype=np.int64)
        self._codes = np.zeros(max(task.n_facts, 1), dtype=np.int64)
        self._succ = np.zeros(task.n_facts + 1, dtype=np.uint32)
        n_eff = int(np.diff(task.effect_ptr).max(initial=0)) + 1
        self._adds = np.zeros(n_eff, dtype=np.int64)
        self._dels = np.zeros(n_eff, dtype=np.int64)
        self._no_class = np.full(max(len(task.objects), 1), -1, dtype=np.int64)
        self._view_ptr = np.zeros(len(plan.views) + 1, dtype=np.int64)
        self._view_codes = np.zeros(max(view_capacity(task), 1), dtype=np.int64)

    def _classes(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not self.symmetry:
            return self._no_class, self._no_class
        if self._sym is None:
            self._sym = symmetry_args(self.task)
        return object_classes(self.task, state, self._sym)

    def actions(self, state: np.ndarray) -> np.ndarray:
        """The ground actions applicable in `state`, as rows (schema, objects...), by schema then in
        join order."""
        state = np.ascontiguousarray(state, dtype=np.uint32)
        n = len(state)
        state_codes(self.task.fact_code, state, n, self._codes)
        cls, rank = self._classes(state)
        plan = self.task.plan
        build_views(plan, self._codes, n, self._view_codes, self._view_ptr)
        while True:
            k = enumerate_bindings(
                plan, 0, len(plan.queries), self._codes, n, self._view_codes, self._view_ptr, self._binding,
                self._pos, self._end, cls, rank, self.symmetry, False, self._out, 0,
            )  # fmt: skip
            if k != OVERFLOW:
                return self._out[:k].copy()
            self._out = np.zeros((2 * len(self._out), self._out.shape[1]), dtype=np.int64)

    def apply(self, state: np.ndarray, action: np.ndarray) -> np.ndarray:
        """The successor of `state` under the ground action row `action` (not checked for
        applicability: see `successor`)."""
        t = self.task
        state = np.ascontiguousarray(state, dtype=np.uint32)
        row = np.ascontiguousarray(action, dtype=np.int64)
        m = apply_action(
            t.effects,
            t.effect_ptr,
            t.plan.pw,
            t.fact_code,
            row,
            state,
            len(state),
            self._succ,
            self._adds,
            self._dels,
        )
        if m < 0:
            raise LiftedError(f"{t.action_name(row)} adds an atom the reachability analysis missed")
        return self._succ[:m].copy()

    def successors(self, state: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """(action row, successor) of every applicable ground action."""
        return [(row, self.apply(state, row)) for row in self.actions(state)]

    def is_goal(self, state: np.ndarray) -> bool:
        return self.task.is_goal(state)

    def is_applicable(self, state: np.ndarray, action: np.ndarray) -> bool:
        """`LiftedTask.is_applicable`."""
        return self.task.is_applicable(state, action)

    def action_row(self, name: str) -> np.ndarray:
        """`LiftedTask.action_row`."""
        return self.task.action_row(name)

    def validate_plan(self, plan: Sequence[str], start: np.ndarray | None = None) -> list[np.ndarray]:
        """`LiftedTask.validate_plan`."""
        return self.task.validate_plan(plan, start)
