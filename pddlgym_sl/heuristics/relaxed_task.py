"""`RelaxedTask`: the delete relaxation of a `CompiledTask` as flat arrays for the heuristic kernels.

Two artificial propositions and one artificial operator make every kernel uniform (the same
construction as Fast Downward's LM-cut, used here by all relaxation heuristics):

- proposition ``art_pre`` (index ``n_facts``) is true in every state and is the only
  precondition of each precondition-free action, so no action has an empty precondition list
  and precondition counters always fire from a popped proposition;
- proposition ``art_goal`` (index ``n_facts + 1``) is the only effect of the goal operator
  ``goal_op`` (index ``n_actions``, cost 0) whose preconditions are the goal facts (``art_pre``
  when the goal is empty), so h(goal) is simply the value of ``art_goal``.

Adjacency in both directions (proposition -> operators that need it, proposition -> operators
that add it) is precomputed once per task in CSR form and cached per `CompiledTask`.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.task import CompiledTask


class RelaxedTask(NamedTuple):
    """Delete-relaxed task arrays (see the module docstring). Operators ``0..n_actions-1`` are the
    task's actions, operator ``goal_op`` is the artificial goal operator."""

    n_facts: int
    n_props: int
    n_ops: int
    art_pre: int
    art_goal: int
    goal_op: int
    pre_ptr: np.ndarray  # int32 (n_ops + 1): preconditions of each operator (never empty)
    pre_idx: np.ndarray
    eff_ptr: np.ndarray  # int32 (n_ops + 1): add effects of each operator
    eff_idx: np.ndarray
    pre_of_ptr: np.ndarray  # int32 (n_props + 1): operators having the proposition as precondition
    pre_of_idx: np.ndarray
    ach_ptr: np.ndarray  # int32 (n_props + 1): operators adding the proposition
    ach_idx: np.ndarray
    n_pre: np.ndarray  # int32 (n_ops): precondition counts
    cost: np.ndarray  # float64 (n_ops): action costs, 0 for goal_op
    icost: np.ndarray  # int64 (n_ops): the same costs as integers (LM-cut's bucket queue)
    n_del: np.ndarray  # int32 (n_ops): delete-effect counts, 0 for goal_op
    goal: np.ndarray  # int32: goal facts


def _invert(ptr: np.ndarray, idx: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Transpose a CSR relation: row r -> columns becomes column c -> rows (rows ascending)."""
    rows = np.repeat(np.arange(len(ptr) - 1, dtype=np.int32), np.diff(ptr))
    order = np.argsort(idx, kind="stable")
    inv_ptr = np.zeros(n_rows + 1, dtype=np.int32)
    inv_ptr[1:] = np.cumsum(np.bincount(idx, minlength=n_rows))
    return inv_ptr, rows[order].astype(np.int32)


def _append_rows(ptr: np.ndarray, idx: np.ndarray, rows: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    extra = np.cumsum([len(r) for r in rows], dtype=np.int64) + ptr[-1]
    new_ptr = np.concatenate([ptr, extra]).astype(np.int32)
    new_idx = np.concatenate([idx, *rows]).astype(np.int32)
    return new_ptr, new_idx


def build_relaxed_task(task: CompiledTask) -> RelaxedTask:
    """Build the relaxed arrays of `task` (use `relaxed_task`, which caches them)."""
    n_facts, n_actions = task.n_facts, task.n_actions
    art_pre, art_goal, goal_op = n_facts, n_facts + 1, n_actions
    n_props, n_ops = n_facts + 2, n_actions + 1

    # Preconditions: the action's own, or [art_pre] when it has none; the goal operator needs the goal.
    counts = np.diff(task.pre_ptr)
    empty = counts == 0
    pre_counts = np.where(empty, 1, counts).astype(np.int64)
    pre_ptr = np.zeros(n_actions + 1, dtype=np.int64)
    pre_ptr[1:] = np.cumsum(pre_counts)
    pre_idx = np.empty(int(pre_ptr[-1]), dtype=np.int32)
    keep = np.repeat(~empty, pre_counts)
    pre_idx[keep] = task.pre_idx
    pre_idx[~keep] = art_pre
    goal_pre = task.goal if len(task.goal) else np.array([art_pre], dtype=np.int32)
    pre_ptr, pre_idx = _append_rows(pre_ptr, pre_idx, [goal_pre])
    eff_ptr, eff_idx = _append_rows(task.add_ptr, task.add_idx, [np.array([art_goal], dtype=np.int32)])

    pre_of_ptr, pre_of_idx = _invert(pre_ptr, pre_idx, n_props)
    ach_ptr, ach_idx = _invert(eff_ptr, eff_idx, n_props)

    costs = np.asarray(task.action_costs, dtype=np.float64)
    if len(costs) != n_actions or np.any(costs < 0) or not np.all(np.isfinite(costs)):
        raise ConfigError(f"task {task.name!r}: action costs must be finite and non-negative")
    cost = np.append(costs, 0.0)
    n_del = np.append(np.diff(task.del_ptr), 0).astype(np.int32)
    return RelaxedTask(
        n_facts=n_facts,
        n_props=n_props,
        n_ops=n_ops,
        art_pre=art_pre,
        art_goal=art_goal,
        goal_op=goal_op,
        pre_ptr=pre_ptr,
        pre_idx=pre_idx,
        eff_ptr=eff_ptr,
        eff_idx=eff_idx,
        pre_of_ptr=pre_of_ptr,
        pre_of_idx=pre_of_idx,
        ach_ptr=ach_ptr,
        ach_idx=ach_idx,
        n_pre=np.diff(pre_ptr).astype(np.int32),
        cost=cost,
        icost=np.rint(cost).astype(np.int64),
        n_del=n_del,
        goal=np.asarray(task.goal, dtype=np.int32),
    )


_CACHE: weakref.WeakKeyDictionary[CompiledTask, RelaxedTask] = weakref.WeakKeyDictionary()


def relaxed_task(task: CompiledTask) -> RelaxedTask:
    """The `RelaxedTask` of `task`, built on first use and shared by all heuristics of the task."""
    rt = _CACHE.get(task)
    if rt is None:
        rt = build_relaxed_task(task)
        _CACHE[task] = rt
    return rt
