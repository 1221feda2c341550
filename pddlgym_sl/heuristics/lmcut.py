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
_NO_COST = np.int64(2**31 - 1)  # above every hmax cost (LMCutWork)


class LMCutWork(NamedTuple):
    """Per-instance scratch arrays of the LM-cut kernel (reused for every state): one array per
    field, in 4 bytes (statuses in 1), not rows of 8-byte fields per operator and proposition. The
    explorations visit operators and propositions in no predictable order, and each loop reads
    one or two fields (the second exploration, most of the time, only supporters and statuses),
    which then stay in the first-level cache: 1.1-1.24x faster on the IPC 2023 LT tasks, the same
    values. Every value fits: bucket keys, hence hmax costs, stay below 50M (`new_work`)."""

    cost: np.ndarray  # int32 (n_ops): an operator's remaining cost this round
    unsat: np.ndarray  # int32 (n_ops): its unsatisfied preconditions in the first exploration
    sup: np.ndarray  # int32 (n_ops): its hmax supporter (-1 if none)
    supcost: np.ndarray  # int32 (n_ops): the supporter's hmax cost
    hmax: np.ndarray  # int32 (n_props): a proposition's hmax cost
    status: np.ndarray  # int8 (n_props): unreached / reached / goal zone / before it
    props: np.ndarray  # int32 (n_props): the state's propositions
    stack: np.ndarray  # int32 (2 * n_props): DFS stacks of the goal-zone marking and the cut
    cut: np.ndarray  # int32 (n_ops): the operators of the current cut
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
        cost=np.zeros(n_ops, dtype=np.int32),
        unsat=np.zeros(n_ops, dtype=np.int32),
        sup=np.full(n_ops, -1, dtype=np.int32),
        supcost=np.zeros(n_ops, dtype=np.int32),
        hmax=np.zeros(ct.n_props, dtype=np.int32),
        status=np.zeros(ct.n_props, dtype=np.int8),
        props=np.empty(ct.n_props, dtype=np.int32),
        stack=np.empty(2 * ct.n_props + 2, dtype=np.int32),
        cut=np.empty(n_ops, dtype=np.int32),
        queue=q_.new_queue(n_keys, capacity),
    )


# Fast Downward's enqueue_if_necessary and the queue's pop are inlined at numba's IR level
# (inline="always") where they are used: a numba call taking these arrays costs more than its body.
@njit(cache=CACHE, nogil=True, inline="always")
def _enqueue_effects(o, t, eff_ptr, eff_idx, status, hmax, q):
    """Operator `o` reaches its effects at cost `t`: each effect unreached or of a larger hmax
    gets hmax `t` and is queued (Fast Downward's ``enqueue_if_necessary``)."""
    for j in range(eff_ptr[o], eff_ptr[o + 1]):
        e = eff_idx[j]
        if status[e] == _UNREACHED or hmax[e] > t:
            status[e] = _REACHED
            hmax[e] = t
            q_.push(q, t, e)


@njit(cache=CACHE, nogil=True, inline="always")
def _pop_settled(q, hmax):
    """The next queued proposition whose hmax is still the cost it was queued with (entries a
    cheaper push made stale are dropped), or -1 when the queue is empty."""
    settled = -1
    while settled < 0 and not q_.is_empty(q):
        popped, p = q_.pop(q)
        if hmax[p] >= popped:
            settled = p
    return settled


@njit(cache=CACHE, nogil=True)
def _first_exploration(ct, w, n_state):
    cost, unsat, sup, supcost, hmax, status, q = w.cost, w.unsat, w.sup, w.supcost, w.hmax, w.status, w.queue
    pre_ptr, pre_of_ptr, pre_of_idx, eff_ptr, eff_idx = (
        ct.pre_ptr,
        ct.pre_of_ptr,
        ct.pre_of_idx,
        ct.eff_ptr,
        ct.eff_idx,
    )
    q_.clear(q)
    for p in range(hmax.shape[0]):
        status[p] = _UNREACHED
        hmax[p] = _NO_COST
    for o in range(sup.shape[0]):
        unsat[o] = pre_ptr[o + 1] - pre_ptr[o]
        sup[o] = -1
        supcost[o] = _NO_COST
    for i in range(n_state + 1):
        p = w.props[i] if i < n_state else ct.art_pre
        if status[p] == _UNREACHED or hmax[p] > 0:
            status[p] = _REACHED
            hmax[p] = 0
            q_.push(q, 0, p)
    p = _pop_settled(q, hmax)
    while p >= 0:
        c = hmax[p]
        for k in range(pre_of_ptr[p], pre_of_ptr[p + 1]):
            o = pre_of_idx[k]
            left = unsat[o] - 1
            unsat[o] = left
            if left == 0:
                sup[o] = p
                supcost[o] = c
                _enqueue_effects(o, c + cost[o], eff_ptr, eff_idx, status, hmax, q)
        p = _pop_settled(q, hmax)


@njit(cache=CACHE, nogil=True)
def _incremental_exploration(ct, w, n_cut):
    cost, sup, supcost, hmax, status, q, cut = w.cost, w.sup, w.supcost, w.hmax, w.status, w.queue, w.cut
    pre_ptr, pre_idx, pre_of_ptr, pre_of_idx = ct.pre_ptr, ct.pre_idx, ct.pre_of_ptr, ct.pre_of_idx
    eff_ptr, eff_idx = ct.eff_ptr, ct.eff_idx
    # Fast Downward pretends the queue had as many pushes as there are propositions, so that it
    # does not switch to a heap too eagerly.
    q_.add_virtual_pushes(q, ct.n_props)
    for i in range(n_cut):
        o = cut[i]
        _enqueue_effects(o, supcost[o] + cost[o], eff_ptr, eff_idx, status, hmax, q)
    p = _pop_settled(q, hmax)
    while p >= 0:
        c = hmax[p]
        for k in range(pre_of_ptr[p], pre_of_ptr[p + 1]):
            o = pre_of_idx[k]
            if sup[o] != p:
                continue
            old = supcost[o]
            if old > c:
                s = p
                for j in range(pre_ptr[o], pre_ptr[o + 1]):
                    r = pre_idx[j]
                    if hmax[r] > hmax[s]:
                        s = r
                sup[o] = s
                new = hmax[s]
                supcost[o] = new
                if new != old:
                    _enqueue_effects(o, new + cost[o], eff_ptr, eff_idx, status, hmax, q)
        p = _pop_settled(q, hmax)


@njit(cache=CACHE, nogil=True)
def _mark_goal_plateau(ct, w, goal_zone_detection, border_detection):
    """Fast Downward's recursive ``mark_goal_plateau(artificial goal)`` with an explicit stack of
    (proposition, position in its achiever list) frames; zero-cost achievers' tied supporters are
    re-chosen first (``break_supporter_ties``)."""
    cost, sup, supcost, hmax, status, stack = w.cost, w.sup, w.supcost, w.hmax, w.status, w.stack
    pre_ptr, pre_idx, eff_of_ptr, eff_of_idx = ct.pre_ptr, ct.pre_idx, ct.eff_of_ptr, ct.eff_of_idx
    tie_break = goal_zone_detection or border_detection
    status[ct.art_goal] = _GOAL_ZONE
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
        if cost[o] != 0:
            continue
        if tie_break:
            for j in range(pre_ptr[o], pre_ptr[o + 1]):
                r = pre_idx[j]
                if hmax[r] != supcost[o]:
                    continue
                if border_detection:
                    no_zero_cost_achiever = True
                    for m in range(eff_of_ptr[r], eff_of_ptr[r + 1]):
                        if cost[eff_of_idx[m]] == 0:
                            no_zero_cost_achiever = False
                            break
                    if no_zero_cost_achiever:
                        sup[o] = r
                        break
                if goal_zone_detection and status[r] == _GOAL_ZONE:
                    sup[o] = r
                    break
        s = sup[o]
        if s >= 0 and status[s] != _GOAL_ZONE:
            status[s] = _GOAL_ZONE
            stack[top] = s
            stack[top + 1] = eff_of_ptr[s]
            top += 2


@njit(cache=CACHE, nogil=True)
def _second_exploration(ct, w, n_state):
    """Explore forwards from the state along supporter edges; the operators entering the goal
    zone form the cut (into ``w.cut``; returns its size)."""
    sup, status, stack, cut = w.sup, w.status, w.stack, w.cut
    pre_of_ptr, pre_of_idx, eff_ptr, eff_idx = ct.pre_of_ptr, ct.pre_of_idx, ct.eff_ptr, ct.eff_idx
    top = 0
    status[ct.art_pre] = _BEFORE_GOAL_ZONE
    stack[top] = ct.art_pre
    top += 1
    for i in range(n_state):
        p = w.props[i]
        status[p] = _BEFORE_GOAL_ZONE
        stack[top] = p
        top += 1
    n_cut = 0
    while top > 0:
        top -= 1
        p = stack[top]
        for k in range(pre_of_ptr[p], pre_of_ptr[p + 1]):
            o = pre_of_idx[k]
            if sup[o] != p:
                continue
            reached_goal_zone = False
            for j in range(eff_ptr[o], eff_ptr[o + 1]):
                if status[eff_idx[j]] == _GOAL_ZONE:
                    reached_goal_zone = True
                    cut[n_cut] = o
                    n_cut += 1
                    break
            if not reached_goal_zone:
                for j in range(eff_ptr[o], eff_ptr[o + 1]):
                    e = eff_idx[j]
                    if status[e] != _BEFORE_GOAL_ZONE:
                        status[e] = _BEFORE_GOAL_ZONE
                        stack[top] = e
                        top += 1
    return n_cut


@njit(cache=CACHE, nogil=True)
def lmcut_value(words, ct, fdr, w, goal_zone_detection, border_detection):
    """LM-cut value of one state (-1 for a relaxed dead end)."""
    cost, hmax, status, cut = w.cost, w.hmax, w.status, w.cut
    cost[:] = ct.base_cost
    n_state = state_props(words, fdr, w.props)
    _first_exploration(ct, w, n_state)
    if status[ct.art_goal] == _UNREACHED:
        return -1
    h = 0
    while hmax[ct.art_goal] != 0:
        _mark_goal_plateau(ct, w, goal_zone_detection, border_detection)
        n_cut = _second_exploration(ct, w, n_state)
        if n_cut == 0:  # impossible while hmax(goal) > 0; guards against an endless loop
            raise RuntimeError("lmcut: empty cut")
        cut_cost = _NO_COST
        for i in range(n_cut):
            cut_cost = min(cut_cost, cost[cut[i]])
        for i in range(n_cut):
            cost[cut[i]] -= cut_cost
        h += cut_cost
        _incremental_exploration(ct, w, n_cut)
        for p in range(hmax.shape[0]):
            if status[p] >= _GOAL_ZONE:
                status[p] = _REACHED
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
