"""LM-cut (Helmert & Domshlak 2009), following Fast Downward's implementation.

Each round computes hmax with a precondition-choice function (the supporter of an operator is a
precondition of maximal hmax cost: the one whose pop made the operator applicable), marks the
goal plateau (propositions reaching the artificial goal backwards through zero-cost operators'
supporters), explores forwards from the state along supporter edges up to that plateau, and takes
the operators crossing into the plateau as a disjunctive action landmark (the cut). The cheapest
cut cost is added to h and subtracted from every cut operator; hmax is then updated
incrementally (only propositions whose cost can drop are requeued) and the rounds repeat until
hmax(goal) = 0. A relaxed-unreachable goal gives ``inf``.

While marking the plateau, ties in the supporter of a zero-cost operator are broken as Fast
Downward does by default since 2023 (Fickert & Lauer, HSDIP 2020): prefer a precondition
reachable only through positive-cost operators (border detection) or already in the goal zone
(goal-zone detection). Without this, LM-cut collapses to hmax on visitall. The remaining
tie-breaking follows fact order, which differs from Fast Downward's variable order, so on a few
states the two implementations find different (equally valid) cuts and values differ by a little
(2 of 66 generated initial states in our comparison, both blocksworld with 10+ blocks, by 1).

One deviation in how (not what) is computed: the forward pass that finds the cut stops as soon as
the supporters of all operators entering the goal zone are reached, instead of exploring
everything reachable; the cut is the same set (its order, which only affects later tie-breaking,
may differ). This saves up to a third of the time on ferry and gripper.

Hand-written in numba because pyperplan's pure-Python LM-cut costs milliseconds per state and
LM-cut runs once per state of every optimal plan and once per A* evaluation. Costs must be
non-negative integers: the explorations use a bucket queue over integer keys (LIFO within a
bucket, as in Fast Downward, with decrease-key so that no stale entries are queued). The queue
operations are written out inline (in a micro-benchmark, a numba call passing the queue arrays
cost ten times the operation itself). The work arrays are allocated once per heuristic instance.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics.base import Heuristic
from pddlgym_sl.heuristics.relaxed_task import RelaxedTask, relaxed_task
from pddlgym_sl.task import CompiledTask

_UNREACHED = 0
_REACHED = 1
_GOAL_ZONE = 2
_BEFORE_GOAL_ZONE = 3
_NO_COST = np.int64(2**62)
_ONE = np.uint64(1)


class LMCutWork(NamedTuple):
    """Per-instance scratch arrays of the LM-cut kernel (reused for every state)."""

    cost: np.ndarray  # int64 (n_ops): remaining cost of each operator this round
    hmax: np.ndarray  # int64 (n_props): hmax cost of each proposition
    status: np.ndarray  # int8 (n_props): unreached / reached / goal zone / before goal zone
    unsat: np.ndarray  # int32 (n_ops): unsatisfied preconditions in the first exploration
    sup: np.ndarray  # int32 (n_ops): hmax supporter (a precondition of maximal cost), -1 if none
    sfirst: np.ndarray  # int32 (n_props): first operator supported by the proposition, -1 if none
    snext: np.ndarray  # int32 (n_ops): next operator with the same supporter
    sprev: np.ndarray  # int32 (n_ops): previous operator with the same supporter
    supcost: np.ndarray  # int64 (n_ops): hmax cost of the supporter
    head: np.ndarray  # int32 (n_keys): first proposition of each bucket, -1 if empty
    nxt: np.ndarray  # int32 (n_props): next proposition in the same bucket
    prv: np.ndarray  # int32 (n_props): previous proposition in the same bucket
    where: np.ndarray  # int64 (n_props): bucket of each queued proposition, -1 if not queued
    fire: np.ndarray  # int32 (n_ops): operators whose effects are to be (re)offered; the cut
    stack: np.ndarray  # int32 (n_props): DFS stack of the plateau marking and the forward pass
    cursor: np.ndarray  # int32 (n_props): next achiever to scan, per proposition, in the plateau DFS
    state_facts: np.ndarray  # int32 (n_facts): facts of the state being evaluated
    zone: np.ndarray  # int32 (n_props): propositions of the goal zone, in marking order
    cand: np.ndarray  # int32 (n achievers + 1): operators entering the goal zone from outside it
    is_cand: np.ndarray  # int8 (n_ops): 1 while the operator is in `cand`
    needed: np.ndarray  # int8 (n_props): 1 while the proposition supports a candidate


def new_work(rt: RelaxedTask) -> LMCutWork:
    max_cost = int(rt.icost.max()) if rt.n_ops else 0
    # hmax values are sums of at most n_props - 1 operator costs along a supporter chain.
    n_keys = rt.n_props * max(max_cost, 1) + 1
    if n_keys > 50_000_000:
        raise ConfigError(f"lmcut: action costs up to {max_cost} are too large for its bucket queue")
    return LMCutWork(
        cost=np.empty(rt.n_ops, dtype=np.int64),
        hmax=np.empty(rt.n_props, dtype=np.int64),
        status=np.empty(rt.n_props, dtype=np.int8),
        unsat=np.empty(rt.n_ops, dtype=np.int32),
        sup=np.empty(rt.n_ops, dtype=np.int32),
        sfirst=np.empty(rt.n_props, dtype=np.int32),
        snext=np.empty(rt.n_ops, dtype=np.int32),
        sprev=np.empty(rt.n_ops, dtype=np.int32),
        supcost=np.empty(rt.n_ops, dtype=np.int64),
        head=np.full(n_keys, -1, dtype=np.int32),
        nxt=np.empty(rt.n_props, dtype=np.int32),
        prv=np.empty(rt.n_props, dtype=np.int32),
        where=np.full(rt.n_props, -1, dtype=np.int64),
        fire=np.empty(rt.n_ops, dtype=np.int32),
        stack=np.empty(rt.n_props, dtype=np.int32),
        cursor=np.empty(rt.n_props, dtype=np.int32),
        state_facts=np.empty(max(rt.n_facts, 1), dtype=np.int32),
        zone=np.empty(rt.n_props, dtype=np.int32),
        cand=np.empty(len(rt.ach_idx) + 1, dtype=np.int32),
        is_cand=np.zeros(rt.n_ops, dtype=np.int8),
        needed=np.zeros(rt.n_props, dtype=np.int8),
    )


@njit(cache=True, inline="always")
def _link(sfirst, snext, sprev, o, p):
    """Add operator `o` to the list of operators supported by proposition `p`."""
    first = sfirst[p]
    snext[o] = first
    sprev[o] = -1
    if first >= 0:
        sprev[first] = o
    sfirst[p] = o


@njit(cache=True, inline="always")
def _unlink(sfirst, snext, sprev, o, p):
    """Remove operator `o` from the list of operators supported by proposition `p`."""
    n = snext[o]
    pv = sprev[o]
    if pv >= 0:
        snext[pv] = n
    else:
        sfirst[p] = n
    if n >= 0:
        sprev[n] = pv


@njit(cache=True)
def _hmax_exploration(rt, w, n_facts_true, n_fire, incremental):
    """Dijkstra over hmax costs with the bucket queue; one routine for both explorations.

    First exploration (``incremental=False``): every proposition starts unreached, the state's
    facts and the artificial precondition are queued at cost 0, and an operator fires (offers
    ``supporter cost + cost`` to its effects) when its last precondition is popped; that
    precondition becomes its supporter.
    Incremental exploration: the first `n_fire` operators of ``w.fire`` (the cut, now cheaper)
    fire; a popped proposition re-examines only the operators it supports whose supporter cost
    dropped: the supporter is re-chosen (first precondition of strictly larger cost) and the
    operator fires again if its supporter cost changed.
    """
    pre_ptr, pre_idx, eff_ptr, eff_idx = rt.pre_ptr, rt.pre_idx, rt.eff_ptr, rt.eff_idx
    pre_of_ptr, pre_of_idx = rt.pre_of_ptr, rt.pre_of_idx
    cost, hmax, status, unsat, sup, supcost = w.cost, w.hmax, w.status, w.unsat, w.sup, w.supcost
    sfirst, snext, sprev = w.sfirst, w.snext, w.sprev
    head, nxt, prv, where, fire = w.head, w.nxt, w.prv, w.where, w.fire
    qmin = head.shape[0]  # lowest possibly non-empty bucket
    qlen = 0
    p = -1  # proposition being expanded, its cost, and the next operator it supports to examine
    key = 0
    o_next = -1
    if not incremental:
        status[:] = _UNREACHED
        hmax[:] = _NO_COST
        unsat[:] = rt.n_pre
        sup[:] = -1
        supcost[:] = _NO_COST
        sfirst[:] = -1
        # bucket 0 holds the state's facts, then the artificial precondition (popped first: LIFO)
        first = -1
        for i in range(n_facts_true + 1):
            p = w.state_facts[i] if i < n_facts_true else rt.art_pre
            status[p] = _REACHED
            hmax[p] = 0
            nxt[p] = first
            prv[p] = -1
            if first >= 0:
                prv[first] = p
            first = p
            where[p] = 0
        head[0] = first
        qmin = 0
        qlen = n_facts_true + 1
    while True:
        # ---- fire the pending operators: offer supporter cost + cost to their effects
        for i in range(n_fire):
            o = fire[i]
            t = supcost[o] + cost[o]
            for j in range(eff_ptr[o], eff_ptr[o + 1]):
                e = eff_idx[j]
                if hmax[e] > t:
                    hmax[e] = t
                    status[e] = _REACHED
                    # queue e under key t (decrease-key: unlink it from its old bucket first)
                    old = where[e]
                    if old >= 0:
                        n = nxt[e]
                        pv = prv[e]
                        if pv >= 0:
                            nxt[pv] = n
                        else:
                            head[old] = n
                        if n >= 0:
                            prv[n] = pv
                    else:
                        qlen += 1
                    first = head[t]
                    nxt[e] = first
                    prv[e] = -1
                    if first >= 0:
                        prv[first] = e
                    head[t] = e
                    where[e] = t
                    if t < qmin:
                        qmin = t
        n_fire = 0
        if o_next < 0:
            if qlen == 0:
                break
            # ---- pop a proposition of the lowest cost (the most recently queued one)
            while head[qmin] < 0:
                qmin += 1
            p = head[qmin]
            n = nxt[p]
            head[qmin] = n
            if n >= 0:
                prv[n] = -1
            where[p] = -1
            qlen -= 1
            key = hmax[p]
            if incremental:
                o_next = sfirst[p]
            else:
                for k in range(pre_of_ptr[p], pre_of_ptr[p + 1]):
                    o = pre_of_idx[k]
                    unsat[o] -= 1
                    if unsat[o] == 0:
                        sup[o] = p
                        supcost[o] = key
                        _link(sfirst, snext, sprev, o, p)
                        fire[n_fire] = o
                        n_fire += 1
        # Incremental: examine the operators supported by p whose supporter cost dropped. One
        # that got cheaper fires before the next is examined (its new effect costs can change
        # that one's supporter choice), so the scan resumes at o_next afterwards.
        while o_next >= 0:
            o = o_next
            o_next = snext[o]
            if supcost[o] <= key:
                continue
            s = p
            for j in range(pre_ptr[o], pre_ptr[o + 1]):
                q = pre_idx[j]
                if hmax[q] > hmax[s]:
                    s = q
            if s != p:
                _unlink(sfirst, snext, sprev, o, p)
                _link(sfirst, snext, sprev, o, s)
                sup[o] = s
            if hmax[s] != supcost[o]:
                supcost[o] = hmax[s]
                fire[0] = o
                n_fire = 1
                break


@njit(cache=True)
def _mark_goal_plateau(rt, w, goal_zone_detection, border_detection):
    """Mark the goal zone: the artificial goal and, recursively, the supporters of zero-cost
    achievers of marked propositions, re-choosing tied supporters of those achievers first.
    An explicit stack replays the depth-first order of the recursive definition exactly, because
    goal-zone tie-breaking depends on what is already marked. The zone is listed in ``w.zone``;
    returns its size."""
    ach_ptr, ach_idx, pre_ptr, pre_idx = rt.ach_ptr, rt.ach_idx, rt.pre_ptr, rt.pre_idx
    status, cost, sup, supcost, hmax = w.status, w.cost, w.sup, w.supcost, w.hmax
    sfirst, snext, sprev = w.sfirst, w.snext, w.sprev
    stack, cursor, zone = w.stack, w.cursor, w.zone
    tie_break = goal_zone_detection or border_detection
    status[rt.art_goal] = _GOAL_ZONE
    zone[0] = rt.art_goal
    n_zone = 1
    stack[0] = rt.art_goal
    cursor[rt.art_goal] = ach_ptr[rt.art_goal]
    top = 1
    while top > 0:
        p = stack[top - 1]
        k = cursor[p]
        end = ach_ptr[p + 1]
        while k < end and cost[ach_idx[k]] != 0:
            k += 1
        if k == end:
            top -= 1
            continue
        cursor[p] = k + 1
        o = ach_idx[k]
        if tie_break and sup[o] >= 0:
            chosen = sup[o]
            for j in range(pre_ptr[o], pre_ptr[o + 1]):
                q = pre_idx[j]
                if hmax[q] != supcost[o]:
                    continue
                if border_detection:
                    border = True
                    for m in range(ach_ptr[q], ach_ptr[q + 1]):
                        if cost[ach_idx[m]] == 0:
                            border = False
                            break
                    if border:
                        chosen = q
                        break
                if goal_zone_detection and status[q] == _GOAL_ZONE:
                    chosen = q
                    break
            if chosen != sup[o]:
                _unlink(sfirst, snext, sprev, o, sup[o])
                _link(sfirst, snext, sprev, o, chosen)
                sup[o] = chosen
        q = sup[o]
        if q >= 0 and status[q] != _GOAL_ZONE:
            status[q] = _GOAL_ZONE
            zone[n_zone] = q
            n_zone += 1
            cursor[q] = ach_ptr[q]
            stack[top] = q
            top += 1
    return n_zone


@njit(cache=True)
def _find_cut(rt, w, n_facts_true, n_zone):
    """The cut: operators entering the goal zone from propositions reachable from the state along
    supporter edges without crossing the zone (stored in ``w.fire``; returns its size).

    Candidates are the achievers of zone propositions whose supporter lies outside the zone; the
    forward pass from the state (depth-first, never through an operator with an effect in the
    zone) marks the reachable propositions and stops as soon as every candidate's supporter is
    marked, which in practice skips much of the pass. The cut is the set of candidates with a
    marked supporter: the same set as a complete pass yields.
    """
    ach_ptr, ach_idx, eff_ptr, eff_idx = rt.ach_ptr, rt.ach_idx, rt.eff_ptr, rt.eff_idx
    status, sup, sfirst, snext, stack = w.status, w.sup, w.sfirst, w.snext, w.stack
    cand, is_cand, needed, cut = w.cand, w.is_cand, w.needed, w.fire
    n_cand = 0
    n_needed = 0  # supporters of candidates not yet marked
    for i in range(n_zone):
        z = w.zone[i]
        for k in range(ach_ptr[z], ach_ptr[z + 1]):
            o = ach_idx[k]
            s = sup[o]
            if s < 0 or status[s] == _GOAL_ZONE or is_cand[o]:
                continue
            is_cand[o] = 1
            cand[n_cand] = o
            n_cand += 1
            if not needed[s]:
                needed[s] = 1
                n_needed += 1
    top = 0
    status[rt.art_pre] = _BEFORE_GOAL_ZONE
    n_needed -= needed[rt.art_pre]
    stack[top] = rt.art_pre
    top += 1
    for i in range(n_facts_true):
        f = w.state_facts[i]
        status[f] = _BEFORE_GOAL_ZONE
        n_needed -= needed[f]
        if sfirst[f] >= 0:  # only propositions supporting something need expanding
            stack[top] = f
            top += 1
    while top > 0 and n_needed > 0:
        top -= 1
        p = stack[top]
        o = sfirst[p]
        while o >= 0:
            enters = False
            for j in range(eff_ptr[o], eff_ptr[o + 1]):
                if status[eff_idx[j]] == _GOAL_ZONE:
                    enters = True
                    break
            if not enters:
                for j in range(eff_ptr[o], eff_ptr[o + 1]):
                    e = eff_idx[j]
                    if status[e] != _BEFORE_GOAL_ZONE:
                        status[e] = _BEFORE_GOAL_ZONE
                        n_needed -= needed[e]
                        if sfirst[e] >= 0:
                            stack[top] = e
                            top += 1
            o = snext[o]
    n_cut = 0
    for i in range(n_cand):
        o = cand[i]
        s = sup[o]
        if status[s] == _BEFORE_GOAL_ZONE:
            cut[n_cut] = o
            n_cut += 1
        is_cand[o] = 0
        needed[s] = 0
    return n_cut


@njit(cache=True)
def lmcut_value(words, rt, w, goal_zone_detection, border_detection):
    """LM-cut value of one state (float64; ``inf`` for a relaxed dead end)."""
    n_true = 0
    for f in range(rt.n_facts):
        if (words[f >> 6] >> np.uint64(f & 63)) & _ONE:
            w.state_facts[n_true] = f
            n_true += 1
    w.cost[:] = rt.icost
    _hmax_exploration(rt, w, n_true, 0, False)
    art_goal = rt.art_goal
    if w.status[art_goal] == _UNREACHED:
        return np.inf
    h = 0
    status, cost, cut = w.status, w.cost, w.fire
    while w.hmax[art_goal] != 0:
        n_zone = _mark_goal_plateau(rt, w, goal_zone_detection, border_detection)
        n_cut = _find_cut(rt, w, n_true, n_zone)
        if n_cut == 0:  # impossible while hmax(goal) > 0; guards against an endless loop
            raise RuntimeError("lmcut: empty cut")
        cut_cost = _NO_COST
        for i in range(n_cut):
            if cost[cut[i]] < cut_cost:
                cut_cost = cost[cut[i]]
        for i in range(n_cut):
            cost[cut[i]] -= cut_cost
        h += cut_cost
        _hmax_exploration(rt, w, n_true, n_cut, True)
        for p in range(rt.n_props):
            if status[p] >= _GOAL_ZONE:
                status[p] = _REACHED
    return float(h)


# nogil: a learned heuristic computes its bound on a second thread during its forward pass
@njit(cache=True, nogil=True)
def lmcut_batch(states, rt, w, out, goal_zone_detection, border_detection):
    """LM-cut of every row of `states` into `out`."""
    for i in range(states.shape[0]):
        out[i] = lmcut_value(states[i], rt, w, goal_zone_detection, border_detection)


class LMCut(Heuristic):
    """LM-cut: sum of the costs of disjunctive action landmarks found by repeated hmax cuts
    (admissible; dominates hmax). Needs non-negative integer action costs.

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
        self.rt = relaxed_task(task)
        if not np.array_equal(self.rt.icost, self.rt.cost):
            raise ConfigError(f"lmcut: task {task.name!r} has non-integer action costs")
        self.work = new_work(self.rt)

    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        lmcut_batch(states, self.rt, self.work, out, self.goal_zone_detection, self.border_detection)
