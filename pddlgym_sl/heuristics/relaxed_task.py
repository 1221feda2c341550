"""The delete relaxations of a `CompiledTask` as flat arrays, built exactly as Fast Downward builds
them, and the conversion of a packed state into Fast Downward's propositions.

Both structures live on the task's finite-domain view (`CompiledTask.fdr`): a proposition is a
(variable, value) pair, "none of those" values included, numbered as Fast Downward numbers them.

- `UnaryTask` (hmax, hadd, hFF; Fast Downward's ``RelaxationHeuristic``): one *unary operator*
  per effect of each operator, its precondition the operator's precondition (plus the effect's
  guard) sorted and without duplicates; dominated unary operators are removed as in
  Fast Downward's ``simplify()``; ``precondition_of`` lists follow unary-operator order.
- `CutTask` (LM-cut; Fast Downward's ``LandmarkCutLandmarks``): one relaxed operator per
  operator with all its effects, preconditions in the operator's own order, an artificial
  precondition for operators without one and an artificial goal operator; ``precondition_of``
  and ``effect_of`` lists follow operator order.

These orders are what make ties break as in Fast Downward. Both are built once per task and
cached (weakly) on it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import NamedTuple

import numpy as np
from numba import njit

from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.task import NO_PROP, CompiledTask

# Fast Downward's RelaxationHeuristic::simplify tests dominating subsets only for unary operators
# with at most this many preconditions.
_MAX_PRECONDITIONS_TO_TEST = 5


# columns of UnaryTask.ops: one row per unary operator, so that the exploration reads one cache
# line per operator (it touches them in an order no layout can predict). The index arrays the
# kernels read in their inner loops are unsigned: numba then skips its check for negative
# (wrap-around) indices, which cost a quarter of hFF's time.
EFFECT, N_PRE, BASE_COST, OPERATOR = range(4)


class UnaryTask(NamedTuple):
    """Unary operators of the delete relaxation (see the module docstring)."""

    n_props: int
    goal: np.ndarray  # uint32: goal propositions, in Fast Downward's goal order
    is_goal: np.ndarray  # int8 (n_props)
    ops: np.ndarray  # uint32 (n_unary, 4): effect, number of preconditions, base cost, operator
    pre_ptr: np.ndarray  # uint32 (n_unary + 1): preconditions of each unary operator (sorted)
    pre_idx: np.ndarray
    pre_of_ptr: np.ndarray  # uint32 (n_props + 1): unary operators having the proposition as precondition
    pre_of_idx: np.ndarray
    op_cost: np.ndarray  # int64 (n_operators)
    reset: np.ndarray  # uint32 (2 n_unary): each unary operator's base cost, then its number of preconditions
    no_pre: np.ndarray  # uint32: the unary operators without preconditions, in order


class CutTask(NamedTuple):
    """Relaxed operators of LM-cut (see the module docstring). Propositions ``0..n_props-1`` are
    the task's; ``art_pre`` and ``art_goal`` are the artificial ones; operator ``goal_op`` (the
    last) is the artificial goal operator."""

    n_props: int  # including the two artificial propositions
    art_pre: int
    art_goal: int
    goal_op: int
    pre_ptr: np.ndarray  # uint32 (n_ops + 1): preconditions in operator order (never empty)
    pre_idx: np.ndarray
    eff_ptr: np.ndarray  # uint32 (n_ops + 1)
    eff_idx: np.ndarray
    pre_of_ptr: np.ndarray  # uint32 (n_props + 1)
    pre_of_idx: np.ndarray
    eff_of_ptr: np.ndarray  # uint32 (n_props + 1): operators adding the proposition
    eff_of_idx: np.ndarray
    base_cost: np.ndarray  # int64 (n_ops), 0 for the goal operator


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(lists) + 1, dtype=np.int32)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    idx = np.fromiter((v for x in lists for v in x), dtype=np.int32, count=int(ptr[-1]))
    return ptr, idx


def _occurrences(lists: list[list[int]], n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """For each row r, the indices i of the lists containing r (ascending, repeats kept)."""
    inverse: list[list[int]] = [[] for _ in range(n_rows)]
    for i, items in enumerate(lists):
        for r in items:
            inverse[r].append(i)
    return _csr(inverse)


def _undominated(unary: list[tuple[tuple[int, ...], int, int, int]]) -> list[int]:
    """Indices of the unary operators that Fast Downward's ``simplify()`` keeps.

    Operator o1 dominates o2 when they have the same effect, pre(o1) is a subset of pre(o2),
    cost(o1) <= cost(o2), and either one of the last two is strict or o1 comes first. Strict
    subsets are tested only for operators with at most five preconditions.
    """
    best: dict[tuple[tuple[int, ...], int], tuple[int, int]] = {}
    for i, (pre, eff, _, cost) in enumerate(unary):
        key = (pre, eff)
        old = best.get(key)
        if old is None or (cost, i) < old:
            best[key] = (cost, i)
    keep = []
    for i, (pre, eff, _, cost) in enumerate(unary):
        if best[(pre, eff)][1] != i:
            continue
        dominated = False
        if len(pre) <= _MAX_PRECONDITIONS_TO_TEST:
            for size in range(len(pre)):
                for subset in combinations(pre, size):
                    found = best.get((subset, eff))
                    if found is not None and found[0] <= cost:
                        dominated = True
                        break
                if dominated:
                    break
        if not dominated:
            keep.append(i)
    return keep


def build_unary_task(task: CompiledTask) -> UnaryTask:
    """Build the unary operators of `task` (use `unary_task`, which caches them)."""
    fdr = task.fdr
    n_props = fdr.n_props
    unary: list[tuple[tuple[int, ...], int, int, int]] = []
    for o in range(task.n_actions):
        pre = fdr.pre_idx[fdr.pre_ptr[o] : fdr.pre_ptr[o + 1]].tolist()
        for k in range(fdr.eff_ptr[o], fdr.eff_ptr[o + 1]):
            guard = int(fdr.guard_idx[k])
            props = [*pre, guard] if guard >= 0 else pre
            unary.append((tuple(sorted(set(props))), int(fdr.eff_idx[k]), o, int(fdr.cost[o])))
    unary = [unary[i] for i in _undominated(unary)]
    pre_ptr, pre_idx = _csr([list(u[0]) for u in unary])
    pre_of_ptr, pre_of_idx = _occurrences([list(u[0]) for u in unary], n_props)
    columns = {
        EFFECT: [u[1] for u in unary],
        N_PRE: np.diff(pre_ptr),
        BASE_COST: [u[3] for u in unary],
        OPERATOR: [u[2] for u in unary],
    }
    return assemble_unary_task(
        n_props, fdr.goal, columns, (pre_ptr, pre_idx), (pre_of_ptr, pre_of_idx), fdr.cost
    )


def assemble_unary_task(
    n_props: int,
    goal: Sequence[int] | np.ndarray,
    columns: dict[int, Sequence[int] | np.ndarray],
    pre: tuple[np.ndarray, np.ndarray],
    pre_of: tuple[np.ndarray, np.ndarray],
    op_cost: Sequence[int] | np.ndarray,
) -> UnaryTask:
    """A `UnaryTask` from its parts in any integer type: the goal propositions, the columns of
    ``ops`` (`EFFECT`, `N_PRE`, `BASE_COST`, `OPERATOR`: one entry per unary operator), the
    precondition lists and their inverse (``(ptr, idx)``) and each operator's cost; the goal mask,
    the reset row and the operators without preconditions follow from them. The grounded task
    (`build_unary_task`) and the lifted one (`pddlgym_sl.lifted.relaxed`) are built by it, so that
    the kernels get the same layout and dtypes from both."""
    is_goal = np.zeros(n_props, dtype=np.int8)
    is_goal[goal] = 1
    ops = np.zeros((len(columns[EFFECT]), 4), dtype=np.uint32)
    for column, values in columns.items():
        ops[:, column] = values
    return UnaryTask(
        n_props=n_props,
        goal=np.array(goal, dtype=np.uint32),
        is_goal=is_goal,
        ops=ops,
        pre_ptr=pre[0].astype(np.uint32),
        pre_idx=pre[1].astype(np.uint32),
        pre_of_ptr=pre_of[0].astype(np.uint32),
        pre_of_idx=pre_of[1].astype(np.uint32),
        op_cost=np.array(op_cost, dtype=np.int64),
        reset=np.concatenate([ops[:, BASE_COST], ops[:, N_PRE]]),
        no_pre=np.flatnonzero(ops[:, N_PRE] == 0).astype(np.uint32),
    )


def build_cut_task(task: CompiledTask) -> CutTask:
    """Build the relaxed operators of LM-cut for `task` (use `cut_task`, which caches them)."""
    fdr = task.fdr
    n = fdr.n_props
    art_pre, art_goal = n, n + 1
    pre = [
        fdr.pre_idx[fdr.pre_ptr[o] : fdr.pre_ptr[o + 1]].tolist() or [art_pre] for o in range(task.n_actions)
    ]
    eff = [fdr.eff_idx[fdr.eff_ptr[o] : fdr.eff_ptr[o + 1]].tolist() for o in range(task.n_actions)]
    pre.append(fdr.goal.tolist() or [art_pre])
    eff.append([art_goal])
    arrays = (*_csr(pre), *_csr(eff), *_occurrences(pre, n + 2), *_occurrences(eff, n + 2))
    pre_ptr, pre_idx, eff_ptr, eff_idx, pre_of_ptr, pre_of_idx, eff_of_ptr, eff_of_idx = (
        a.astype(np.uint32) for a in arrays
    )
    return CutTask(
        n_props=n + 2,
        art_pre=art_pre,
        art_goal=art_goal,
        goal_op=task.n_actions,
        pre_ptr=pre_ptr,
        pre_idx=pre_idx,
        eff_ptr=eff_ptr,
        eff_idx=eff_idx,
        pre_of_ptr=pre_of_ptr,
        pre_of_idx=pre_of_idx,
        eff_of_ptr=eff_of_ptr,
        eff_of_idx=eff_of_idx,
        base_cost=np.append(np.asarray(fdr.cost, dtype=np.int64), 0),
    )


def _cached(build: Callable[[CompiledTask], tuple]) -> Callable[[CompiledTask], tuple]:
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def get(task: CompiledTask):
        value = cache.get(task)
        if value is None:
            value = cache[task] = build(task)
        return value

    get.__doc__ = f"The cached result of `{build.__name__}` for `task` (built on first use)."
    return get


unary_task = _cached(build_unary_task)
cut_task = _cached(build_cut_task)


@njit(cache=CACHE, nogil=True, inline="always")
def state_props(words, fdr, out):
    """Fast Downward's propositions of a packed state, in variable order, into `out`; returns how
    many. A variable contributes its true fact, or its "none of those" value when none of its
    facts holds. (A state outside the finite-domain encoding, with two facts of one variable or
    none and no such value, contributes all or none of them.)"""
    var_table, fact_table = fdr.var_table, fdr.fact_table
    one = np.uint64(1)
    n = 0
    for v in range(var_table.shape[0]):
        found = False
        for k in range(var_table[v, 0], var_table[v, 1]):
            f = fact_table[k, 0]
            if (words[f >> 6] >> np.uint64(f & 63)) & one:
                out[n] = fact_table[k, 1]
                n += 1
                found = True
        if not found and var_table[v, 2] != NO_PROP:
            out[n] = var_table[v, 2]
            n += 1
    return n
