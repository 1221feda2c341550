"""hmax, hadd and hFF: delete-relaxation heuristics computed by a generalised Dijkstra search.

hmax(s) and hadd(s) are the costs of the artificial goal proposition in the delete relaxation
when a set of propositions costs the max (hmax, admissible) or the sum (hadd) of its members'
costs (Bonet & Geffner 2001). hFF (Hoffmann & Nebel 2001, as in Fast Downward) is the cost of the
relaxed plan made of the best supporters found by hadd, collected backwards from the goal; each
action counts once.

The kernels are hand-written in numba because the pure-Python version (pyperplan) spends
milliseconds per state in dictionaries and heapq, and search calls these heuristics millions of
times. One exploration: every proposition true in the state (and the artificial precondition)
starts at cost 0; popping a proposition decrements the unsatisfied-precondition counter of each
operator that needs it and folds its cost into the operator's accumulated cost (max or sum); an
operator whose counter reaches 0 offers ``accumulated + cost`` to its add effects. Popping the
artificial goal ends the search early: its cost, and the supporters of everything the relaxed
plan can need, are final then. All work arrays are allocated once per heuristic instance.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from pddlgym_sl.heuristics.base import Heuristic
from pddlgym_sl.heuristics.relaxed_task import RelaxedTask, relaxed_task
from pddlgym_sl.successors import holds
from pddlgym_sl.task import CompiledTask, State

_INF = np.inf


class RelaxationWork(NamedTuple):
    """Per-instance scratch arrays of the relaxation kernels (reused for every state)."""

    dist: np.ndarray  # float64 (n_props): cost of each proposition
    sup: np.ndarray  # int32 (n_props): best supporter (operator) of each proposition, -1 if none
    counter: np.ndarray  # int32 (n_ops): unsatisfied preconditions
    acc: np.ndarray  # float64 (n_ops): max / sum of the popped preconditions' costs
    hkeys: np.ndarray  # float64 heap keys
    hitems: np.ndarray  # int32 heap items
    plan: np.ndarray  # int32 (n_ops): relaxed plan (topologically ordered)
    visit: np.ndarray  # int8 (n_ops): DFS state of each operator during plan extraction
    pos: np.ndarray  # int32 (n_ops): DFS cursor into each operator's preconditions
    stack: np.ndarray  # int32 (n_ops): DFS stack


def new_work(rt: RelaxedTask) -> RelaxationWork:
    # Each proposition is queued at most once initially and each operator fires once, offering
    # each add effect at most once, so the heap never holds more than this many entries.
    capacity = rt.n_props + len(rt.eff_idx) + 1
    return RelaxationWork(
        dist=np.empty(rt.n_props, dtype=np.float64),
        sup=np.empty(rt.n_props, dtype=np.int32),
        counter=np.empty(rt.n_ops, dtype=np.int32),
        acc=np.empty(rt.n_ops, dtype=np.float64),
        hkeys=np.empty(capacity, dtype=np.float64),
        hitems=np.empty(capacity, dtype=np.int32),
        plan=np.empty(rt.n_ops, dtype=np.int32),
        visit=np.empty(rt.n_ops, dtype=np.int8),
        pos=np.empty(rt.n_ops, dtype=np.int32),
        stack=np.empty(rt.n_ops, dtype=np.int32),
    )


@njit(cache=True)
def explore(words, rt, additive, w):
    """Fill ``w.dist`` (proposition costs) and ``w.sup`` (best supporters) for state `words`;
    returns the cost of the artificial goal (``inf`` when the goal is relaxed-unreachable).

    The binary heap is written out inline rather than called: a numba call that passes arrays
    costs more than a heap operation on these small heaps.
    """
    dist, sup, counter, acc, hkeys, hitems = w.dist, w.sup, w.counter, w.acc, w.hkeys, w.hitems
    pre_of_ptr, pre_of_idx, eff_ptr, eff_idx, cost = (
        rt.pre_of_ptr,
        rt.pre_of_idx,
        rt.eff_ptr,
        rt.eff_idx,
        rt.cost,
    )
    dist[:] = _INF
    sup[:] = -1
    counter[:] = rt.n_pre
    acc[:] = 0.0
    # The state's facts and the artificial precondition all cost 0: a list of equal keys is
    # already a heap.
    size = 0
    for f in range(rt.n_facts):
        if holds(words, f):
            dist[f] = 0.0
            hkeys[size] = 0.0
            hitems[size] = f
            size += 1
    dist[rt.art_pre] = 0.0
    hkeys[size] = 0.0
    hitems[size] = rt.art_pre
    size += 1
    art_goal = rt.art_goal
    while size > 0:
        # pop the minimum
        key = hkeys[0]
        p = hitems[0]
        size -= 1
        last_key = hkeys[size]
        last_item = hitems[size]
        i = 0
        while True:
            child = 2 * i + 1
            if child >= size:
                break
            if child + 1 < size and hkeys[child + 1] < hkeys[child]:
                child += 1
            if hkeys[child] >= last_key:
                break
            hkeys[i] = hkeys[child]
            hitems[i] = hitems[child]
            i = child
        hkeys[i] = last_key
        hitems[i] = last_item
        if key > dist[p]:
            continue  # stale entry
        if p == art_goal:
            break
        for k in range(pre_of_ptr[p], pre_of_ptr[p + 1]):
            o = pre_of_idx[k]
            if additive:
                acc[o] += key
            elif key > acc[o]:
                acc[o] = key
            counter[o] -= 1
            if counter[o] == 0:
                c = acc[o] + cost[o]
                for j in range(eff_ptr[o], eff_ptr[o + 1]):
                    e = eff_idx[j]
                    if c < dist[e]:
                        dist[e] = c
                        sup[e] = o
                        # push (c, e)
                        i = size
                        size += 1
                        while i > 0:
                            parent = (i - 1) >> 1
                            if hkeys[parent] <= c:
                                break
                            hkeys[i] = hkeys[parent]
                            hitems[i] = hitems[parent]
                            i = parent
                        hkeys[i] = c
                        hitems[i] = e
    return dist[art_goal]


@njit(cache=True)
def extract_plan(rt, w):
    """Collect the best supporters needed for the goal into ``w.plan`` (after an additive
    `explore` that reached the goal), children before parents, so the plan is executable in the
    relaxation in that order. Returns the number of actions."""
    sup, plan, visit, pos, stack = w.sup, w.plan, w.visit, w.pos, w.stack
    pre_ptr, pre_idx = rt.pre_ptr, rt.pre_idx
    visit[:] = 0
    n = 0
    top = 0
    goal_op = rt.goal_op
    stack[0] = goal_op
    visit[goal_op] = 1
    pos[goal_op] = pre_ptr[goal_op]
    top = 1
    while top > 0:
        o = stack[top - 1]
        if pos[o] < pre_ptr[o + 1]:
            q = pre_idx[pos[o]]
            pos[o] += 1
            s = sup[q]
            if s >= 0 and visit[s] == 0:  # supporters form a DAG: visit[s] == 1 never happens
                visit[s] = 1
                pos[s] = pre_ptr[s]
                stack[top] = s
                top += 1
        else:
            top -= 1
            visit[o] = 2
            if o != goal_op:
                plan[n] = o
                n += 1
    return n


# nogil (both batch kernels): a learned heuristic computes its bound and residual base on a second
# thread during its forward pass
@njit(cache=True, nogil=True)
def explore_batch(states, rt, additive, w, out):
    """hmax (additive=False) or hadd (additive=True) of every row of `states` into `out`."""
    for i in range(states.shape[0]):
        out[i] = explore(states[i], rt, additive, w)


@njit(cache=True, nogil=True)
def ff_batch(states, rt, w, out, features, with_features):
    """hFF of every row into `out`; with `with_features`, also the linear model's features
    (goal count, hFF, total and mean delete effects of the relaxed plan) into `features`."""
    goal = rt.goal
    for i in range(states.shape[0]):
        words = states[i]
        h = explore(words, rt, True, w)
        total_del = _INF
        mean_del = _INF
        if h < _INF:
            n = extract_plan(rt, w)
            h = 0.0
            total = 0
            for k in range(n):
                h += rt.cost[w.plan[k]]
                total += rt.n_del[w.plan[k]]
            total_del = float(total)
            mean_del = total / n if n > 0 else 0.0
        out[i] = h
        if with_features:
            gc = 0
            for k in range(goal.shape[0]):
                if not holds(words, goal[k]):
                    gc += 1
            features[i, 0] = gc
            features[i, 1] = h
            features[i, 2] = total_del
            features[i, 3] = mean_del


@njit(cache=True)
def ff_plan(words, rt, w):
    """Relaxed plan of one state into ``w.plan``; returns its length, or -1 for a dead end."""
    if explore(words, rt, True, w) == _INF:
        return -1
    return extract_plan(rt, w)


class _RelaxationHeuristic(Heuristic):
    additive = False

    def __init__(self, task: CompiledTask) -> None:
        super().__init__(task)
        self.rt = relaxed_task(task)
        self.work = new_work(self.rt)

    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        explore_batch(states, self.rt, self.additive, self.work, out)


class HMax(_RelaxationHeuristic):
    """hmax: cost of the most expensive goal fact in the delete relaxation (admissible)."""

    name = "hmax"
    admissible = True
    additive = False


class HAdd(_RelaxationHeuristic):
    """hadd: sum of the goal facts' relaxed costs, each fact costed independently (inadmissible)."""

    name = "hadd"
    additive = True


FEATURE_NAMES = ("goal_count", "hff", "ignored_deletes_total", "ignored_deletes_mean")


class HFF(_RelaxationHeuristic):
    """hFF: cost of FF's relaxed plan, built from hadd's best supporters (inadmissible).

    Besides the value, gives the relaxed plan itself and the features of the paper's linear
    model (`FEATURE_NAMES`): goal count, hFF, the total number of delete effects of the relaxed
    plan's actions (the deletes the relaxation ignored) and their mean per action (0 for an empty
    plan). For a dead end hFF and both delete features are ``inf``.
    """

    name = "hff"
    additive = True

    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        ff_batch(states, self.rt, self.work, out, np.empty((0, 4)), False)

    def relaxed_plan(self, state: State | np.ndarray) -> np.ndarray | None:
        """int32 action indices of the relaxed plan of `state`, in an order that is executable in
        the delete relaxation; ``None`` for a dead end (empty for a goal state)."""
        n = ff_plan(self.as_batch(state)[0], self.rt, self.work)
        return None if n < 0 else self.work.plan[:n].copy()

    def features(self, state: State | np.ndarray) -> np.ndarray:
        """The linear model's features of one state as a float64 vector of length 4."""
        return self.features_batch(self.as_batch(state))[0]

    def features_batch(self, states: np.ndarray) -> np.ndarray:
        """Features of a ``(n, n_words)`` batch as a float64 ``(n, 4)`` array (`FEATURE_NAMES`)."""
        states = self.check_batch(states)
        out = np.empty(states.shape[0], dtype=np.float64)
        features = np.empty((states.shape[0], 4), dtype=np.float64)
        if states.shape[0]:
            ff_batch(states, self.rt, self.work, out, features, True)
        return features
