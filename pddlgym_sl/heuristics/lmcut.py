"""LM-cut (Helmert & Domshlak 2009), computed as Fast Downward computes it.

Each round computes hmax with a precondition-choice function (an operator's supporter is the
precondition whose pop made it applicable, a precondition of maximal hmax cost), marks the goal
zone (propositions reaching the artificial goal backwards through zero-cost operators'
supporters), explores forwards from the state along supporter edges up to that zone, and takes
the operators entering it as a disjunctive action landmark (the cut). The cut's cheapest cost is
added to h and subtracted from each cut operator; hmax is then updated incrementally and the
rounds repeat until hmax(goal) = 0. A relaxed-unreachable goal gives ``inf``.

The kernel follows Fast Downward's ``lm_cut_landmarks.cc`` step for step on the `CutTask` of
`relaxed_task` (its operators, their precondition and effect orders, the ``precondition_of`` and
``effect_of`` lists), with its adaptive queue (`queues`, including the virtual pushes of the
incremental explorations), so every cut and every value equal Fast Downward's ``lmcut()``. That
includes its default tie-breaking of the supporters of zero-cost operators while marking the goal
zone (Lauer & Fickert, HSDIP 2020): prefer a tied precondition without zero-cost achievers
(``border_detection``) or already in the goal zone (``goal_zone_detection``); without it LM-cut
collapses to hmax on visitall. The goal-zone marking replays Fast Downward's recursion with an
explicit stack, because goal-zone detection depends on what is already marked.

Hand-written in numba because pyperplan's pure-Python LM-cut costs milliseconds per state, and
LM-cut runs once per state of every optimal plan and once per A* evaluation. The work arrays are
allocated once per heuristic instance.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics import queues as q_
from pddlgym_sl.heuristics.base import Heuristic
from pddlgym_sl.heuristics.compiled import INTEGER_VALUED, state_values
from pddlgym_sl.heuristics.relaxed_task import CutTask, cut_task, state_props
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.task import CompiledTask

_UNREACHED = 0
_REACHED = 1
_GOAL_ZONE = 2
_BEFORE_GOAL_ZONE = 3
_NO_COST = np.int64(2**62)


# columns of LMCutWork.op (one row per operator: the explorations touch them in no predictable order)
_COST, _UNSAT, _SUP, _SUPCOST = range(4)
# columns of LMCutWork.prop
_HMAX, _STATUS = range(2)


class LMCutWork(NamedTuple):
    """Per-instance scratch arrays of the LM-cut kernel (reused for every state)."""

    op: np.ndarray  # int64 (n_ops, 4): remaining cost this round, unsatisfied preconditions in
    #                 the first exploration, hmax supporter (-1 if none) and its hmax cost
    prop: np.ndarray  # int64 (n_props, 2): hmax cost and status (unreached / reached / goal zone / before it)
    props: np.ndarray  # int32 (n_props): the state's propositions
    stack: np.ndarray  # int64 (2 * n_props): DFS stacks of the goal-zone marking and the cut
    cut: np.ndarray  # int64 (n_ops): the operators of the current cut
    queue: np.ndarray  # int64: the adaptive queue (`queues.new_queue`)


def new_work(ct: CutTask) -> LMCutWork:
    n_ops = len(ct.base_cost)
    max_cost = int(ct.base_cost.max()) if n_ops else 0
    # bucket keys are hmax values: sums of at most n_props - 1 operator costs along a supporter chain
    n_keys = ct.n_props * max(max_cost, 1) + 2
    if n_keys > 50_000_000:
        raise ConfigError(f"lmcut: action costs up to {max_cost} are too large for its bucket queue")
    n_pre = np.diff(ct.pre_ptr).astype(np.int64)
    n_eff = np.diff(ct.eff_ptr).astype(np.int64)
    # an operator fires once per drop of its supporter's cost: at most once per precondition
    capacity = int(np.sum(np.maximum(n_pre, 1) * n_eff)) + ct.n_props + 2
    return LMCutWork(
        op=np.zeros((n_ops, 4), dtype=np.int64),
        prop=np.zeros((ct.n_props, 2), dtype=np.int64),
        props=np.empty(ct.n_props, dtype=np.int32),
        stack=np.empty(2 * ct.n_props + 2, dtype=np.int64),
        cut=np.empty(n_ops, dtype=np.int64),
        queue=q_.new_queue(n_keys, capacity),
    )


# Fast Downward's enqueue_if_necessary (improve a proposition's hmax and queue it) is written out
# where it is used: a numba call taking these arrays costs more than its body.


@njit(cache=CACHE, nogil=True)
def _first_exploration(ct, w, n_state):
    op, prop, q = w.op, w.prop, w.queue
    pre_ptr, pre_of_ptr, pre_of_idx, eff_ptr, eff_idx = (
        ct.pre_ptr,
        ct.pre_of_ptr,
        ct.pre_of_idx,
        ct.eff_ptr,
        ct.eff_idx,
    )
    q_.clear(q)
    for p in range(prop.shape[0]):
        prop[p, _STATUS] = _UNREACHED
        prop[p, _HMAX] = _NO_COST
    for o in range(op.shape[0]):
        op[o, _UNSAT] = pre_ptr[o + 1] - pre_ptr[o]
        op[o, _SUP] = -1
        op[o, _SUPCOST] = _NO_COST
    for i in range(n_state + 1):
        p = w.props[i] if i < n_state else ct.art_pre
        if prop[p, _STATUS] == _UNREACHED or prop[p, _HMAX] > 0:
            prop[p, _STATUS] = _REACHED
            prop[p, _HMAX] = 0
            q_.push(q, 0, p)
    while not q_.is_empty(q):
        popped, p = q_.pop(q)
        c = prop[p, _HMAX]
        if c < popped:
            continue
        for k in range(pre_of_ptr[p], pre_of_ptr[p + 1]):
            o = pre_of_idx[k]
            left = op[o, _UNSAT] - 1
            op[o, _UNSAT] = left
            if left == 0:
                op[o, _SUP] = p
                op[o, _SUPCOST] = c
                t = c + op[o, _COST]
                for j in range(eff_ptr[o], eff_ptr[o + 1]):
                    e = eff_idx[j]
                    if prop[e, _STATUS] == _UNREACHED or prop[e, _HMAX] > t:
                        prop[e, _STATUS] = _REACHED
                        prop[e, _HMAX] = t
                        q_.push(q, t, e)


@njit(cache=CACHE, nogil=True)
def _incremental_exploration(ct, w, n_cut):
    op, prop, q, cut = w.op, w.prop, w.queue, w.cut
    pre_ptr, pre_idx, pre_of_ptr, pre_of_idx = ct.pre_ptr, ct.pre_idx, ct.pre_of_ptr, ct.pre_of_idx
    eff_ptr, eff_idx = ct.eff_ptr, ct.eff_idx
    # Fast Downward pretends the queue had as many pushes as there are propositions, so that it
    # does not switch to a heap too eagerly.
    q_.add_virtual_pushes(q, ct.n_props)
    for i in range(n_cut):
        o = cut[i]
        t = op[o, _SUPCOST] + op[o, _COST]
        for j in range(eff_ptr[o], eff_ptr[o + 1]):
            e = eff_idx[j]
            if prop[e, _STATUS] == _UNREACHED or prop[e, _HMAX] > t:
                prop[e, _STATUS] = _REACHED
                prop[e, _HMAX] = t
                q_.push(q, t, e)
    while not q_.is_empty(q):
        popped, p = q_.pop(q)
        c = prop[p, _HMAX]
        if c < popped:
            continue
        for k in range(pre_of_ptr[p], pre_of_ptr[p + 1]):
            o = pre_of_idx[k]
            if op[o, _SUP] != p:
                continue
            old = op[o, _SUPCOST]
            if old > c:
                s = p
                for j in range(pre_ptr[o], pre_ptr[o + 1]):
                    r = pre_idx[j]
                    if prop[r, _HMAX] > prop[s, _HMAX]:
                        s = r
                op[o, _SUP] = s
                new = prop[s, _HMAX]
                op[o, _SUPCOST] = new
                if new != old:
                    t = new + op[o, _COST]
                    for j in range(eff_ptr[o], eff_ptr[o + 1]):
                        e = eff_idx[j]
                        if prop[e, _STATUS] == _UNREACHED or prop[e, _HMAX] > t:
                            prop[e, _STATUS] = _REACHED
                            prop[e, _HMAX] = t
                            q_.push(q, t, e)


@njit(cache=CACHE, nogil=True)
def _mark_goal_plateau(ct, w, goal_zone_detection, border_detection):
    """Fast Downward's recursive ``mark_goal_plateau(artificial goal)`` with an explicit stack of
    (proposition, position in its achiever list) frames; zero-cost achievers' tied supporters are
    re-chosen first (``break_supporter_ties``)."""
    op, prop, stack = w.op, w.prop, w.stack
    pre_ptr, pre_idx, eff_of_ptr, eff_of_idx = ct.pre_ptr, ct.pre_idx, ct.eff_of_ptr, ct.eff_of_idx
    tie_break = goal_zone_detection or border_detection
    prop[ct.art_goal, _STATUS] = _GOAL_ZONE
    stack[0] = ct.art_goal
    stack[1] = eff_of_ptr[ct.art_goal]
    top = 2
    while top > 0:
        p = stack[top - 2]
        k = stack[top - 1]
        if k == eff_of_ptr[p + 1]:
            top -= 2
            continue
        stack[top - 1] = k + 1
        o = eff_of_idx[k]
        if op[o, _COST] != 0:
            continue
        if tie_break:
            for j in range(pre_ptr[o], pre_ptr[o + 1]):
                r = pre_idx[j]
                if prop[r, _HMAX] != op[o, _SUPCOST]:
                    continue
                if border_detection:
                    no_zero_cost_achiever = True
                    for m in range(eff_of_ptr[r], eff_of_ptr[r + 1]):
                        if op[eff_of_idx[m], _COST] == 0:
                            no_zero_cost_achiever = False
                            break
                    if no_zero_cost_achiever:
                        op[o, _SUP] = r
                        break
                if goal_zone_detection and prop[r, _STATUS] == _GOAL_ZONE:
                    op[o, _SUP] = r
                    break
        s = op[o, _SUP]
        if s >= 0 and prop[s, _STATUS] != _GOAL_ZONE:
            prop[s, _STATUS] = _GOAL_ZONE
            stack[top] = s
            stack[top + 1] = eff_of_ptr[s]
            top += 2


@njit(cache=CACHE, nogil=True)
def _second_exploration(ct, w, n_state):
    """Explore forwards from the state along supporter edges; the operators entering the goal
    zone form the cut (into ``w.cut``; returns its size)."""
    op, prop, stack, cut = w.op, w.prop, w.stack, w.cut
    pre_of_ptr, pre_of_idx, eff_ptr, eff_idx = ct.pre_of_ptr, ct.pre_of_idx, ct.eff_ptr, ct.eff_idx
    top = 0
    prop[ct.art_pre, _STATUS] = _BEFORE_GOAL_ZONE
    stack[top] = ct.art_pre
    top += 1
    for i in range(n_state):
        p = w.props[i]
        prop[p, _STATUS] = _BEFORE_GOAL_ZONE
        stack[top] = p
        top += 1
    n_cut = 0
    while top > 0:
        top -= 1
        p = stack[top]
        for k in range(pre_of_ptr[p], pre_of_ptr[p + 1]):
            o = pre_of_idx[k]
            if op[o, _SUP] != p:
                continue
            reached_goal_zone = False
            for j in range(eff_ptr[o], eff_ptr[o + 1]):
                if prop[eff_idx[j], _STATUS] == _GOAL_ZONE:
                    reached_goal_zone = True
                    cut[n_cut] = o
                    n_cut += 1
                    break
            if not reached_goal_zone:
                for j in range(eff_ptr[o], eff_ptr[o + 1]):
                    e = eff_idx[j]
                    if prop[e, _STATUS] != _BEFORE_GOAL_ZONE:
                        prop[e, _STATUS] = _BEFORE_GOAL_ZONE
                        stack[top] = e
                        top += 1
    return n_cut


@njit(cache=CACHE, nogil=True)
def lmcut_value(words, ct, fdr, w, goal_zone_detection, border_detection):
    """LM-cut value of one state (-1 for a relaxed dead end)."""
    op, prop, cut = w.op, w.prop, w.cut
    op[:, _COST] = ct.base_cost
    n_state = state_props(words, fdr, w.props)
    _first_exploration(ct, w, n_state)
    if prop[ct.art_goal, _STATUS] == _UNREACHED:
        return -1
    h = 0
    while prop[ct.art_goal, _HMAX] != 0:
        _mark_goal_plateau(ct, w, goal_zone_detection, border_detection)
        n_cut = _second_exploration(ct, w, n_state)
        if n_cut == 0:  # impossible while hmax(goal) > 0; guards against an endless loop
            raise RuntimeError("lmcut: empty cut")
        cut_cost = _NO_COST
        for i in range(n_cut):
            cut_cost = min(cut_cost, op[cut[i], _COST])
        for i in range(n_cut):
            op[cut[i], _COST] -= cut_cost
        h += cut_cost
        _incremental_exploration(ct, w, n_cut)
        for p in range(prop.shape[0]):
            if prop[p, _STATUS] >= _GOAL_ZONE:
                prop[p, _STATUS] = _REACHED
    return h


# nogil: a learned heuristic computes its bound on a second thread during its forward pass
@njit(cache=CACHE, nogil=True)
def lmcut_batch(states, ct, fdr, w, out, goal_zone_detection, border_detection):
    """LM-cut of every row of `states` into `out`."""
    for i in range(states.shape[0]):
        h = lmcut_value(states[i], ct, fdr, w, goal_zone_detection, border_detection)
        out[i] = np.inf if h < 0 else h


class LMCutArgs(NamedTuple):
    """LM-cut inside the search engine (`pddlgym_sl.heuristics.compiled`)."""

    ct: CutTask
    fdr: tuple
    work: LMCutWork
    goal_zone_detection: bool
    border_detection: bool


@njit(cache=CACHE)
def _lmcut_values(states, n, out, ct, fdr, w, goal_zone_detection, border_detection):
    for i in range(n):
        h = lmcut_value(states[i], ct, fdr, w, goal_zone_detection, border_detection)
        out[i] = np.inf if h < 0 else float(h)


@overload(state_values)
def _lmcut_overload(args, states, n, out):
    if isinstance(args, types.BaseNamedTuple) and args.instance_class is LMCutArgs:
        return lambda args, states, n, out: _lmcut_values(
            states, n, out, args.ct, args.fdr, args.work, args.goal_zone_detection, args.border_detection
        )
    return None


INTEGER_VALUED.update((LMCutArgs,))


class LMCut(Heuristic):
    """LM-cut: sum of the costs of disjunctive action landmarks found by repeated hmax cuts
    (admissible; dominates hmax); equal to Fast Downward's ``lmcut()``.

    Args:
        task: the task.
        goal_zone_detection, border_detection: Fast Downward's tie-breaking options of the same
            names (both on by default, as in Fast Downward).
    """

    name = "lmcut"
    admissible = True

    def __init__(
        self, task: CompiledTask, goal_zone_detection: bool = True, border_detection: bool = True
    ) -> None:
        super().__init__(task)
        self.goal_zone_detection = bool(goal_zone_detection)
        self.border_detection = bool(border_detection)
        self.ct = cut_task(task)
        self.work = new_work(self.ct)

    def engine_args(self) -> LMCutArgs:
        """The arguments of this heuristic inside the search engine."""
        return LMCutArgs(self.ct, self.task.fdr, self.work, self.goal_zone_detection, self.border_detection)

    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        lmcut_batch(
            states, self.ct, self.task.fdr, self.work, out, self.goal_zone_detection, self.border_detection
        )
