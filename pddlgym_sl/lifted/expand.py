"""`Expander`: the applicable ground actions and successors of lifted states, from Python.

The search engine (`engine`) calls the same kernels inside its compiled loop; this class is for
everything else (tests, plan replay, the environment-like uses) and owns its scratch arrays.
A state is a sorted uint32 array of fact ids (`task.LiftedTask`); a ground action a row
``(schema, objects...)`` of int64.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pddlgym_sl.errors import PlanError
from pddlgym_sl.lifted.join import (
    OVERFLOW,
    apply_action,
    build_views,
    enumerate_bindings,
    is_goal,
    state_codes,
)
from pddlgym_sl.lifted.query import LiftedError, Literal, atom_codes
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
        t = self.task
        state = np.ascontiguousarray(state, dtype=np.uint32)
        return t.solvable and bool(is_goal(state, len(state), t.goal, t.goal_neg))

    def is_applicable(self, state: np.ndarray, action: np.ndarray) -> bool:
        """Whether the ground action row `action` is applicable in `state`: its parameters of their
        types, its preconditions (positive, negative, equalities) holding. Checked literal by
        literal, not by enumerating the applicable actions (39 million in childsnack's largest
        initial state)."""
        t = self.task
        schema = t.schemas[int(action[0])]
        objects = [int(o) for o in action[1 : 1 + len(schema.params)]]
        if any(not t.type_masks[m, o] for m, o in zip(schema.types, objects, strict=True)):
            return False

        def value(term: int) -> int:
            return objects[term] if term >= 0 else -term - 1

        def holds(lit: Literal) -> bool:
            code = int(
                atom_codes(
                    lit.pred,
                    np.array([[value(x) for x in lit.terms]], dtype=np.int64).reshape(1, -1),
                    t.plan.pw,
                )[0]
            )
            pool = (
                t.plan.static_codes
                if lit.pred in t.static_preds
                else t.fact_code[np.asarray(state, dtype=np.int64)]
            )
            i = int(np.searchsorted(pool, code))
            return i < len(pool) and int(pool[i]) == code

        return (
            all(holds(lit) for lit in schema.pre)
            and not any(holds(lit) for lit in schema.neg)
            and all(value(a) == value(b) for a, b in schema.equal)
            and all(value(a) != value(b) for a, b in schema.not_equal)
        )

    def action_row(self, name: str) -> np.ndarray:
        """The row of a ground action written ``"(name a b)"`` (not checked for applicability)."""
        parts = name.strip().strip("()").split()
        t = self.task
        index = {s.name: k for k, s in enumerate(t.schemas)}
        if not parts or parts[0] not in index:
            raise PlanError(f"{name!r} is not an action of task {t.name!r}")
        schema = t.schemas[index[parts[0]]]
        objects = {o: i for i, o in enumerate(t.objects)}
        if len(parts) - 1 != len(schema.params) or any(o not in objects for o in parts[1:]):
            raise PlanError(f"{name!r}: {schema.name} takes {len(schema.params)} objects of task {t.name!r}")
        row = np.zeros(1 + t.max_params, dtype=np.int64)
        row[0] = index[parts[0]]
        row[1 : 1 + len(schema.params)] = [objects[o] for o in parts[1:]]
        return row

    def validate_plan(self, plan: Sequence[str], start: np.ndarray | None = None) -> list[np.ndarray]:
        """Replay `plan` (action names) from `start` (default: the initial state), each step checked
        applicable; return the visited states. `PlanError` names the failing step, or the end
        state when it is not a goal state."""
        state = self.task.init if start is None else start
        states = [state]
        for step, name in enumerate(plan, 1):
            row = self.action_row(name)
            if not self.is_applicable(state, row):
                raise PlanError(
                    f"plan step {step}: action {name} is not applicable", file=self.task.problem_file
                )
            state = self.apply(state, row)
            states.append(state)
        if not self.is_goal(state):
            raise PlanError(
                f"plan of {len(plan)} steps ends in a non-goal state", file=self.task.problem_file
            )
        return states
