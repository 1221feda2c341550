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
from numba import njit

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics import queues as q_
from pddlgym_sl.heuristics.base import Heuristic
from pddlgym_sl.heuristics.relaxed_task import CutTask, cut_task, state_props
from pddlgym_sl.task import CompiledTask

_UNREACHED = 0
_REACHED = 1
_GOAL_ZONE = 2
_BEFORE_GOAL_ZONE = 3
_NO_COST = np.int64(2**62)


class LMCutWork(NamedTuple):
    """Per-instance scratch arrays of the LM-cut kernel (reused for every state)."""

    cost: np.ndarray  # int64 (n_ops): remaining cost of each operator this round
    hmax: np.ndarray  # int64 (n_props): hmax cost of each proposition
    status: np.ndarray  # int8 (n_props): unreached / reached / goal zone / before goal zone
    unsat: np.ndarray  # int32 (n_ops): unsatisfied preconditions in the first exploration
    sup: np.ndarray  # int32 (n_ops): hmax supporter (a precondition of maximal cost), -1 if none
    supcost: np.ndarray  # int64 (n_ops): hmax cost of the supporter
    props: np.ndarray  # int32 (n_props): the state's propositions
    stack: np.ndarray  # int32 (2 * n_props): DFS stacks of the goal-zone marking and the cut
    cut: np.ndarray  # int32 (n_ops): the operators of the current cut
    queue: q_.Queue


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
        cost=np.empty(n_ops, dtype=np.int64),
        hmax=np.empty(ct.n_props, dtype=np.int64),
        status=np.empty(ct.n_props, dtype=np.int8),
        unsat=np.empty(n_ops, dtype=np.int32),
        sup=np.empty(n_ops, dtype=np.int32),
        supcost=np.empty(n_ops, dtype=np.int64),
        props=np.empty(ct.n_props, dtype=np.int32),
        stack=np.empty(2 * ct.n_props + 2, dtype=np.int32),
        cut=np.empty(n_ops, dtype=np.int32),
        queue=q_.new_queue(n_keys, capacity),
    )


@njit(cache=True, nogil=True, inline="always")
def _enqueue(w, p, c):
    if w.status[p] == _UNREACHED or w.hmax[p] > c:
        w.status[p] = _REACHED
        w.hmax[p] = c
        q_.push(w.queue, c, p)


@njit(cache=True, nogil=True)
def _first_exploration(ct, w, n_state):
    q_.clear(w.queue)
    w.status[:] = _UNREACHED
    w.hmax[:] = _NO_COST
    w.sup[:] = -1
    w.supcost[:] = _NO_COST
    for o in range(w.unsat.shape[0]):
        w.unsat[o] = ct.pre_ptr[o + 1] - ct.pre_ptr[o]
    for i in range(n_state):
        _enqueue(w, w.props[i], 0)
    _enqueue(w, ct.art_pre, 0)
    while not q_.is_empty(w.queue):
        popped, p = q_.pop(w.queue)
        c = w.hmax[p]
        if c < popped:
            continue
        for k in range(ct.pre_of_ptr[p], ct.pre_of_ptr[p + 1]):
            o = ct.pre_of_idx[k]
            w.unsat[o] -= 1
            if w.unsat[o] == 0:
                w.sup[o] = p
                w.supcost[o] = c
                t = c + w.cost[o]
                for j in range(ct.eff_ptr[o], ct.eff_ptr[o + 1]):
                    _enqueue(w, ct.eff_idx[j], t)


@njit(cache=True, nogil=True)
def _incremental_exploration(ct, w, n_cut):
    # Fast Downward pretends the queue had as many pushes as there are propositions, so that it
    # does not switch to a heap too eagerly.
    q_.add_virtual_pushes(w.queue, ct.n_props)
    for i in range(n_cut):
        o = w.cut[i]
        c = w.supcost[o] + w.cost[o]
        for j in range(ct.eff_ptr[o], ct.eff_ptr[o + 1]):
            _enqueue(w, ct.eff_idx[j], c)
    while not q_.is_empty(w.queue):
        popped, p = q_.pop(w.queue)
        c = w.hmax[p]
        if c < popped:
            continue
        for k in range(ct.pre_of_ptr[p], ct.pre_of_ptr[p + 1]):
            o = ct.pre_of_idx[k]
            if w.sup[o] != p:
                continue
            old = w.supcost[o]
            if old > c:
                s = w.sup[o]
                for j in range(ct.pre_ptr[o], ct.pre_ptr[o + 1]):
                    if w.hmax[ct.pre_idx[j]] > w.hmax[s]:
                        s = ct.pre_idx[j]
                w.sup[o] = s
                new = w.hmax[s]
                w.supcost[o] = new
                if new != old:
                    t = new + w.cost[o]
                    for j in range(ct.eff_ptr[o], ct.eff_ptr[o + 1]):
                        _enqueue(w, ct.eff_idx[j], t)


@njit(cache=True, nogil=True, inline="always")
def _break_supporter_ties(ct, w, o, goal_zone_detection, border_detection):
    for j in range(ct.pre_ptr[o], ct.pre_ptr[o + 1]):
        p = ct.pre_idx[j]
        if w.hmax[p] != w.supcost[o]:
            continue
        if border_detection:
            no_zero_cost_achiever = True
            for m in range(ct.eff_of_ptr[p], ct.eff_of_ptr[p + 1]):
                if w.cost[ct.eff_of_idx[m]] == 0:
                    no_zero_cost_achiever = False
                    break
            if no_zero_cost_achiever:
                w.sup[o] = p
                return
        if goal_zone_detection and w.status[p] == _GOAL_ZONE:
            w.sup[o] = p
            return


@njit(cache=True, nogil=True)
def _mark_goal_plateau(ct, w, goal_zone_detection, border_detection):
    """Fast Downward's recursive ``mark_goal_plateau(artificial goal)`` with an explicit stack of
    (proposition, position in its achiever list) frames."""
    stack = w.stack
    tie_break = goal_zone_detection or border_detection
    w.status[ct.art_goal] = _GOAL_ZONE
    stack[0] = ct.art_goal
    stack[1] = ct.eff_of_ptr[ct.art_goal]
    top = 2
    while top > 0:
        p = stack[top - 2]
        k = stack[top - 1]
        if k == ct.eff_of_ptr[p + 1]:
            top -= 2
            continue
        stack[top - 1] = k + 1
        o = ct.eff_of_idx[k]
        if w.cost[o] != 0:
            continue
        if tie_break:
            _break_supporter_ties(ct, w, o, goal_zone_detection, border_detection)
        s = w.sup[o]
        if s >= 0 and w.status[s] != _GOAL_ZONE:
            w.status[s] = _GOAL_ZONE
            stack[top] = s
            stack[top + 1] = ct.eff_of_ptr[s]
            top += 2


@njit(cache=True, nogil=True)
def _second_exploration(ct, w, n_state):
    """Explore forwards from the state along supporter edges; the operators entering the goal
    zone form the cut (into ``w.cut``; returns its size)."""
    stack = w.stack
    top = 0
    w.status[ct.art_pre] = _BEFORE_GOAL_ZONE
    stack[top] = ct.art_pre
    top += 1
    for i in range(n_state):
        p = w.props[i]
        w.status[p] = _BEFORE_GOAL_ZONE
        stack[top] = p
        top += 1
    n_cut = 0
    while top > 0:
        top -= 1
        p = stack[top]
        for k in range(ct.pre_of_ptr[p], ct.pre_of_ptr[p + 1]):
            o = ct.pre_of_idx[k]
            if w.sup[o] != p:
                continue
            reached_goal_zone = False
            for j in range(ct.eff_ptr[o], ct.eff_ptr[o + 1]):
                if w.status[ct.eff_idx[j]] == _GOAL_ZONE:
                    reached_goal_zone = True
                    w.cut[n_cut] = o
                    n_cut += 1
                    break
            if not reached_goal_zone:
                for j in range(ct.eff_ptr[o], ct.eff_ptr[o + 1]):
                    e = ct.eff_idx[j]
                    if w.status[e] != _BEFORE_GOAL_ZONE:
                        w.status[e] = _BEFORE_GOAL_ZONE
                        stack[top] = e
                        top += 1
    return n_cut


@njit(cache=True, nogil=True)
def lmcut_value(words, ct, fdr, w, goal_zone_detection, border_detection):
    """LM-cut value of one state (-1 for a relaxed dead end)."""
    w.cost[:] = ct.base_cost
    n_state = state_props(words, fdr, w.props)
    _first_exploration(ct, w, n_state)
    if w.status[ct.art_goal] == _UNREACHED:
        return -1
    h = 0
    while w.hmax[ct.art_goal] != 0:
        _mark_goal_plateau(ct, w, goal_zone_detection, border_detection)
        n_cut = _second_exploration(ct, w, n_state)
        if n_cut == 0:  # impossible while hmax(goal) > 0; guards against an endless loop
            raise RuntimeError("lmcut: empty cut")
        cut_cost = _NO_COST
        for i in range(n_cut):
            cut_cost = min(cut_cost, w.cost[w.cut[i]])
        for i in range(n_cut):
            w.cost[w.cut[i]] -= cut_cost
        h += cut_cost
        _incremental_exploration(ct, w, n_cut)
        for p in range(ct.n_props):
            if w.status[p] >= _GOAL_ZONE:
                w.status[p] = _REACHED
    return h


# nogil: a learned heuristic computes its bound on a second thread during its forward pass
@njit(cache=True, nogil=True)
def lmcut_batch(states, ct, fdr, w, out, goal_zone_detection, border_detection):
    """LM-cut of every row of `states` into `out`."""
    for i in range(states.shape[0]):
        h = lmcut_value(states[i], ct, fdr, w, goal_zone_detection, border_detection)
        out[i] = np.inf if h < 0 else h


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

    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        lmcut_batch(
            states, self.ct, self.task.fdr, self.work, out, self.goal_zone_detection, self.border_detection
        )
