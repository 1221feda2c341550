"""hmax, hadd and hFF: delete-relaxation heuristics, computed as Fast Downward computes them.

hmax(s) and hadd(s) are the max and the sum over the goal propositions of their costs in the
delete relaxation, where a proposition costs the cheapest way to reach it and a unary operator
costs its base cost plus the max (hmax) or the sum (hadd) of its preconditions' costs (Bonet &
Geffner 2001). hFF (Hoffmann & Nebel 2001) is the cost of the relaxed plan made of hadd's best
supporters, collected backwards from the goal, each operator counted once.

The kernels follow Fast Downward's ``additive_heuristic.cc`` / ``max_heuristic.cc`` /
``ff_heuristic.cc`` step for step on the `UnaryTask` of `relaxed_task` (its unary operators and
their order), with its adaptive queue (`queues`), so ties between equally cheap supporters break
the same way and hFF equals Fast Downward's ``ff()`` on every state: operators without
preconditions are queued first, then the state's propositions in variable order; a proposition
is queued again only when its cost strictly drops; the exploration stops once every goal
proposition has been popped; hadd costs are clamped at 10^8.

Hand-written in numba because the pure-Python version (pyperplan) spends milliseconds per state
in dictionaries and heapq, and search calls these heuristics millions of times. All work arrays
are allocated once per heuristic instance (and the queue, like Fast Downward's, lives as long as
the heuristic).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from pddlgym_sl.heuristics import queues as q_
from pddlgym_sl.heuristics.base import Heuristic
from pddlgym_sl.heuristics.compiled import INTEGER_VALUED, state_values
from pddlgym_sl.heuristics.relaxed_task import (
    BASE_COST,
    EFFECT,
    OPERATOR,
    UnaryTask,
    state_props,
    unary_task,
)
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.successors import holds
from pddlgym_sl.task import CompiledTask, State

_MAX_COST = 100_000_000  # Fast Downward's AdditiveHeuristic::MAX_COST_VALUE
_UNSET = np.uint32(0xFFFFFFFF)  # a proposition's cost while unreached, and "no supporter"


class RelaxationWork(NamedTuple):
    """Per-instance scratch arrays of the relaxation kernels (reused for every state).

    Costs are uint32 (Fast Downward's are int, clamped at 10^8) and an unreached proposition
    costs `_UNSET`, larger than any cost, so "unreached or dearer" is one comparison."""

    # uint32 (2 n_unary): cost so far of each unary operator, then its unsatisfied preconditions
    unary: np.ndarray
    prop: np.ndarray  # uint32 (n_props, 2): cost of each proposition and its best supporter
    props: np.ndarray  # uint32 (n_props): the state's propositions
    marked: np.ndarray  # int8 (n_props): propositions visited while collecting the relaxed plan
    touched: np.ndarray  # uint32 (n_props): which ones, to unmark them
    in_plan: np.ndarray  # int8 (n_operators): operators of the relaxed plan
    plan: np.ndarray  # int32 (n_operators): the relaxed plan, preconditions' supporters first
    stack: np.ndarray  # uint32 (2 * n_props): DFS stack (proposition, cursor) of the plan extraction
    queue: np.ndarray  # int64: the adaptive queue (`queues.new_queue`)


def new_work(ut: UnaryTask) -> RelaxationWork:
    n_unary = len(ut.ops)
    # every unary operator fires at most once; the state adds at most n_props pushes
    capacity = n_unary + ut.n_props + 2
    return RelaxationWork(
        unary=ut.reset.copy(),
        prop=np.zeros((ut.n_props, 2), dtype=np.uint32),
        props=np.empty(max(ut.n_props, 1), dtype=np.uint32),
        marked=np.zeros(ut.n_props, dtype=np.int8),
        touched=np.empty(max(ut.n_props, 1), dtype=np.uint32),
        in_plan=np.zeros(len(ut.op_cost), dtype=np.int8),
        plan=np.empty(max(len(ut.op_cost), 1), dtype=np.int32),
        stack=np.empty(2 * ut.n_props + 2, dtype=np.uint32),
        queue=q_.new_queue(capacity, capacity),
    )


# inline="always" (numba-level inlining) for the per-state kernels: a numba call passes every
# array of its tuples as seven scalars, which cost the search up to a fifth of its time
@njit(cache=CACHE, nogil=True, inline="always")
def explore(words, ut, fdr, additive, w):
    """Relaxed exploration of state `words`; returns hadd (``additive``) or hmax, -1 for a dead
    end. Leaves costs and best supporters in ``w.prop``."""
    n = state_props(words, fdr, w.props)
    return explore_props(w.props, n, ut, additive, w)


@njit(cache=CACHE, nogil=True, inline="always")
def explore_props(props, n, ut, additive, w):
    """`explore` from the true propositions ``props[:n]`` (a grounded state's, or a lifted state's
    fact ids, `pddlgym_sl.lifted.relaxed`).

    Fast Downward's ``enqueue_if_necessary`` (improve a proposition and queue it) is written out
    at its three places: a numba call taking these arrays costs more than its body.
    """
    ops, unary, prop, q = ut.ops, w.unary, w.prop, w.queue
    pre_of_ptr, pre_of_idx, is_goal, reset = ut.pre_of_ptr, ut.pre_of_idx, ut.is_goal, ut.reset
    n_unary = ops.shape[0]
    q_.clear(q)
    for p in range(prop.shape[0]):
        prop[p, 0] = _UNSET
    for i in range(reset.shape[0]):  # costs = base costs, unsatisfied = number of preconditions
        unary[i] = reset[i]
    for i in range(ut.no_pre.shape[0]):
        u = ut.no_pre[i]
        c = ops[u, BASE_COST]
        e = ops[u, EFFECT]
        if prop[e, 0] > c:
            prop[e, 0] = c
            prop[e, 1] = u
            q_.push(q, np.int64(c), np.int64(e))
    for i in range(n):
        p = props[i]
        if prop[p, 0] > 0:
            prop[p, 0] = 0
            prop[p, 1] = _UNSET
            q_.push(q, 0, np.int64(p))
    unsolved = ut.goal.shape[0]
    while not q_.is_empty(q):
        distance, p = q_.pop(q)
        c = np.int64(prop[p, 0])
        if c < distance:
            continue
        if is_goal[p]:
            unsolved -= 1
            if unsolved == 0:
                break
        for k in range(pre_of_ptr[p], pre_of_ptr[p + 1]):
            u = pre_of_idx[k]
            if additive:
                uc = np.int64(unary[u]) + c
                if uc > _MAX_COST:
                    uc = _MAX_COST
            else:
                uc = max(np.int64(unary[u]), np.int64(ops[u, BASE_COST]) + c)
            unary[u] = uc
            left = unary[n_unary + u] - np.uint32(1)
            unary[n_unary + u] = left
            if left == 0:
                e = ops[u, EFFECT]
                if np.int64(prop[e, 0]) > uc:
                    prop[e, 0] = uc
                    prop[e, 1] = u
                    q_.push(q, uc, np.int64(e))
    total = 0
    for g in ut.goal:
        cg = prop[g, 0]
        if cg == _UNSET:
            return -1
        total = min(total + np.int64(cg), _MAX_COST) if additive else max(total, np.int64(cg))
    return total


@njit(cache=CACHE, nogil=True, inline="always")
def relaxed_plan(ut, w):
    """Collect the relaxed plan after an additive `explore` (Fast Downward's marking from each
    goal through the best supporters) into ``w.plan``, each operator after the supporters of its
    preconditions; returns its length. Resets the marks it sets."""
    marked, in_plan, stack, prop, plan = w.marked, w.in_plan, w.stack, w.prop, w.plan
    pre_ptr, pre_idx, ops, touched = ut.pre_ptr, ut.pre_idx, ut.ops, w.touched
    n = 0
    n_touched = 0
    for g in ut.goal:
        if marked[g]:
            continue
        marked[g] = 1
        touched[n_touched] = g
        n_touched += 1
        stack[0] = g
        stack[1] = _UNSET
        top = 2
        while top > 0:
            p = stack[top - 2]
            u = prop[p, 1]
            if u == _UNSET:
                top -= 2
                continue
            k = stack[top - 1]
            k = pre_ptr[u] if k == _UNSET else k
            if k < pre_ptr[u + 1]:
                stack[top - 1] = k + 1
                r = pre_idx[k]
                if not marked[r]:
                    marked[r] = 1
                    touched[n_touched] = r
                    n_touched += 1
                    stack[top] = r
                    stack[top + 1] = _UNSET
                    top += 2
                continue
            top -= 2
            o = ops[u, OPERATOR]
            if not in_plan[o]:
                in_plan[o] = 1
                plan[n] = o
                n += 1
    for i in range(n_touched):  # fewer than all propositions on large tasks
        marked[touched[i]] = 0
    for i in range(n):
        in_plan[plan[i]] = 0
    return n


# nogil (both batch kernels): a learned heuristic computes its bound and residual base on a second
# thread during its forward pass
@njit(cache=CACHE, nogil=True)
def explore_batch(states, ut, fdr, additive, w, out):
    """hmax (additive=False) or hadd (additive=True) of every row of `states` into `out`."""
    for i in range(states.shape[0]):
        h = explore(states[i], ut, fdr, additive, w)
        out[i] = np.inf if h < 0 else h


@njit(cache=CACHE, nogil=True, inline="always")
def ff_value(words, ut, fdr, w):
    """hFF of one state (-1 for a dead end); the relaxed plan is left in ``w.plan``."""
    if explore(words, ut, fdr, True, w) < 0:
        return -1, 0
    n = relaxed_plan(ut, w)
    h = 0
    for k in range(n):
        h += ut.op_cost[w.plan[k]]
    return h, n


@njit(cache=CACHE, nogil=True)
def ff_batch(states, ut, fdr, w, out, goal, goal_neg, n_del, features, with_features):
    """hFF of every row into `out`; with `with_features`, also the linear model's features
    (goal count, hFF, total and mean delete effects of the relaxed plan) into `features`."""
    for i in range(states.shape[0]):
        words = states[i]
        h, n = ff_value(words, ut, fdr, w)
        out[i] = np.inf if h < 0 else h
        if with_features:
            gc = 0
            for k in range(goal.shape[0]):
                if not holds(words, goal[k]):
                    gc += 1
            for k in range(goal_neg.shape[0]):
                if holds(words, goal_neg[k]):
                    gc += 1
            total = 0
            for k in range(n):
                total += n_del[w.plan[k]]
            features[i, 0] = gc
            features[i, 1] = out[i]
            features[i, 2] = np.inf if h < 0 else total
            features[i, 3] = np.inf if h < 0 else (total / n if n > 0 else 0.0)


class HMaxArgs(NamedTuple):
    """hmax inside the search engine (`pddlgym_sl.heuristics.compiled`)."""

    ut: UnaryTask
    fdr: tuple
    work: RelaxationWork


class HAddArgs(NamedTuple):
    """hadd inside the search engine."""

    ut: UnaryTask
    fdr: tuple
    work: RelaxationWork


class HFFArgs(NamedTuple):
    """hFF inside the search engine."""

    ut: UnaryTask
    fdr: tuple
    work: RelaxationWork


@njit(cache=CACHE)
def _explore_values(states, n, out, ut, fdr, additive, w):
    for i in range(n):
        h = explore(states[i], ut, fdr, additive, w)
        out[i] = np.inf if h < 0 else float(h)


@njit(cache=CACHE)
def _ff_values(states, n, out, ut, fdr, w):
    for i in range(n):
        h, _ = ff_value(states[i], ut, fdr, w)
        out[i] = np.inf if h < 0 else float(h)


@overload(state_values)
def _relaxation_state_values(args, states, n, out):
    if not isinstance(args, types.BaseNamedTuple):
        return None
    if args.instance_class in (HMaxArgs, HAddArgs):
        additive = args.instance_class is HAddArgs
        return lambda args, states, n, out: _explore_values(
            states, n, out, args.ut, args.fdr, additive, args.work
        )
    if args.instance_class is HFFArgs:
        return lambda args, states, n, out: _ff_values(states, n, out, args.ut, args.fdr, args.work)
    return None


INTEGER_VALUED.update(
    (
        HMaxArgs,
        HAddArgs,
        HFFArgs,
    )
)


class _RelaxationHeuristic(Heuristic):
    additive = False
    _args: type = HMaxArgs

    def __init__(self, task: CompiledTask) -> None:
        super().__init__(task)
        self.ut = unary_task(task)
        self.work = new_work(self.ut)

    def engine_args(self) -> NamedTuple:
        """The arguments of this heuristic inside the search engine."""
        return self._args(self.ut, self.task.fdr, self.work)

    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        explore_batch(states, self.ut, self.task.fdr, self.additive, self.work, out)


class HMax(_RelaxationHeuristic):
    """hmax: cost of the most expensive goal fact in the delete relaxation (admissible)."""

    name = "hmax"
    admissible = True
    additive = False


class HAdd(_RelaxationHeuristic):
    """hadd: sum of the goal facts' relaxed costs, each fact costed independently (inadmissible)."""

    name = "hadd"
    additive = True
    _args = HAddArgs


FEATURE_NAMES = ("goal_count", "hff", "ignored_deletes_total", "ignored_deletes_mean")


class HFF(_RelaxationHeuristic):
    """hFF: cost of FF's relaxed plan, built from hadd's best supporters (inadmissible); equal to
    Fast Downward's ``ff()``.

    Besides the value, gives the relaxed plan itself and the features of the paper's linear
    model (`FEATURE_NAMES`): goal count, hFF, the total number of delete effects of the relaxed
    plan's actions (the deletes the relaxation ignored; `CompiledTask.n_del`) and their mean per
    action (0 for an empty plan). For a dead end hFF and both delete features are ``inf``.
    """

    name = "hff"
    additive = True
    _args = HFFArgs

    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        self._run(states, out, np.empty((0, 4)), False)

    def _run(self, states: np.ndarray, out: np.ndarray, features: np.ndarray, with_features: bool) -> None:
        t = self.task
        ff_batch(states, self.ut, t.fdr, self.work, out, t.goal, t.goal_neg, t.n_del, features, with_features)

    def relaxed_plan(self, state: State | np.ndarray) -> np.ndarray | None:
        """int32 action indices of the relaxed plan of `state`, in an order that is executable in
        the delete relaxation; ``None`` for a dead end (empty for a goal state)."""
        if not self.task.solvable:
            return None
        h, n = ff_value(self.as_batch(state)[0], self.ut, self.task.fdr, self.work)
        return None if h < 0 else self.work.plan[:n].copy()

    def features(self, state: State | np.ndarray) -> np.ndarray:
        """The linear model's features of one state as a float64 vector of length 4."""
        return self.features_batch(self.as_batch(state))[0]

    def features_batch(self, states: np.ndarray) -> np.ndarray:
        """Features of a ``(n, n_words)`` batch as a float64 ``(n, 4)`` array (`FEATURE_NAMES`)."""
        states = self.check_batch(states)
        out = np.empty(states.shape[0], dtype=np.float64)
        features = np.empty((states.shape[0], 4), dtype=np.float64)
        if not self.task.solvable:
            features[:] = np.inf
        elif states.shape[0]:
            self._run(states, out, features, True)
        return features
