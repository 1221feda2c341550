"""WL colour counts of a state's ILG, kept up to date incrementally from the last state counted.

wlplan's refinement (``feature_generators/wl.cpp``, ``WLFeatures::embed_impl`` / ``refine``): a
node's colour at iteration 0 is the table's feature of its initial colour; at iteration t >= 1 it
is the feature of the key made of its neighbours' (edge label, colour at t - 1) pairs (sorted;
repeated pairs counted once under a set hash, with their multiplicity under a multiset hash) and
its own colour at t - 1 (`table`). A colour the table does not know is *unseen*: a node whose own
colour or one of whose neighbours' colours is unseen at t - 1 is unseen at t, and unseen colours
are not counted. The state's feature vector counts, over all iterations, the nodes of each colour.

Why incremental: a node's colour at t depends only on its t-hop neighbourhood, and consecutive
states of a search differ in a few facts, so recomputing the whole graph per state (hundreds of
nodes, most of them static atoms and objects that the state does not touch) costs tens of
times more than the nodes that change. `WLWork` keeps the colours of every node at every
iteration and the counts of the *reference* state (the last state counted, at first the state
with no true fact, computed once per task). `update` takes a new state's fact bit set and:

1. finds the facts whose truth differs from the reference (XOR of the words): their nodes appear
   or disappear (non-goal facts) or change colour (goal atoms), which changes iteration 0;
2. for t = 1..T recomputes only the nodes whose colour changed at t - 1 and their neighbours,
   keeping those whose colour at t changes for the next round;
3. moves the counts with every change (old colour -1, new colour +1), so that they are exactly
   the new state's, which becomes the reference.

Every count is recomputed from the same rule as wlplan's, so the result does not depend on the
order in which states come (the tests compare every state of whole searches with wlplan's).
Hand-written in numba because it runs once per evaluated state inside the search.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from agents.models.wl.compiled.graph import TaskGraph
from agents.models.wl.compiled.table import (
    MAX_PACKED_ARITY,
    UNSEEN,
    ColourTable,
    lookup,
    lookup_atom,
    lookup_in,
    pack_atom_key,
)
from pddlgym_sl.numba_cache import CACHE

__all__ = ["ABSENT", "WLWork", "linear_output", "new_work", "update"]

ABSENT = -2
"""The colour of a node that is not in the state's graph (a false non-goal fact)."""

_JIT = {"cache": CACHE, "nogil": True, "error_model": "numpy"}
_INLINE = {**_JIT, "inline": "always"}
_INSERTION_SORT_MAX = 24
_LOW32 = np.int64(0xFFFFFFFF)
# de Bruijn sequence: the index of the lowest set bit of a 64-bit word without a loop
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.array(
    [0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33,
     30, 24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11, 46, 26, 40, 15, 34,
     20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6],
    dtype=np.int64,
)  # fmt: skip


class WLWork(NamedTuple):
    """The reference state and its colouring (see the module docstring), per-task constants
    derived from the colour table, and scratch arrays.

    ``col[t, v]``: node v's colour at iteration t (a feature, `UNSEEN` or `ABSENT`);
    ``counts``: the reference state's feature counts, ``nonzero`` a bit set of the features
    with a non-zero count (so that the linear map visits those only, in ascending order);
    ``info``: int64 [stamp epoch, initialised, node colours recomputed (a running total, for
    the benchmarks)].

    Atom nodes' colours at iterations 0 and 1 depend on nothing but the truth of their fact
    (their neighbours, objects, all have the colour of "object" at iteration 0), so they are
    looked up once: ``atom_col[t, v, truth]`` for t = 0, 1. The static atoms around an object
    therefore contribute fixed (edge label, colour) pairs to its keys at iterations 1 and 2:
    those of iteration t are ``sp_code`` / ``sp_count`` (pair, multiplicity; sorted) from
    ``sp_ptr[t - 1, o]`` to ``sp_ptr[t - 1, o + 1]``, and ``sp_unseen[t - 1, o]`` is 1 when one
    of them is unseen."""

    ref: np.ndarray  # uint64 (n_words): the reference state's facts
    col: np.ndarray  # int64 (T + 1, n_nodes)
    counts: np.ndarray  # int64 (n_features)
    nonzero: np.ndarray  # uint64 (n_features // 64 + 1)
    stamp: np.ndarray  # int64 (n_nodes): epoch of the last visit of each node (no double visits)
    info: np.ndarray  # int64 (3)
    changed: np.ndarray  # int64 (n_nodes): the nodes whose colour changed at the last iteration
    frontier: np.ndarray  # int64 (n_nodes): those of the iteration in progress
    pairs: np.ndarray  # int64 (max_degree + 1): a node's (label, colour) neighbour pairs
    key: np.ndarray  # int64 (3 max(max_degree, max arity) + 3): its colour key
    atom_col: np.ndarray  # int64 (2, n_nodes, 2)
    sp_ptr: np.ndarray  # int64 (2, n_objects + 1)
    sp_code: np.ndarray  # int64
    sp_count: np.ndarray  # int64
    sp_unseen: np.ndarray  # int8 (2, n_objects)


def new_work(table: ColourTable, graph: TaskGraph, n_words: int) -> WLWork:
    """Work arrays for one task (the reference is set up on the first `update`)."""
    iterations, n_features = int(table.config[0]), int(table.config[2])
    n_nodes, n_objects, _, _, max_degree = (int(x) for x in graph.sizes)
    atom_col = np.full((2, n_nodes, 2), ABSENT, dtype=np.int64)
    sp_ptr = np.zeros((2, n_objects + 1), dtype=np.int64)
    sp_unseen = np.zeros((2, n_objects), dtype=np.int8)
    # a key: the iteration, 3 entries per distinct neighbour pair (an object's, or an atom's
    # arguments), the node's own colour
    key = np.empty(3 * max(max_degree, graph.args.shape[1]) + 3, dtype=np.int64)
    sp_code, sp_count = _prepare(table, graph, atom_col, sp_ptr, sp_unseen, key)
    return WLWork(
        ref=np.zeros(n_words, dtype=np.uint64),
        col=np.full((iterations + 1, n_nodes), ABSENT, dtype=np.int64),
        counts=np.zeros(n_features, dtype=np.int64),
        nonzero=np.zeros(n_features // 64 + 1, dtype=np.uint64),
        stamp=np.zeros(n_nodes, dtype=np.int64),
        info=np.zeros(3, dtype=np.int64),
        changed=np.empty(max(n_nodes, 1), dtype=np.int64),
        frontier=np.empty(max(n_nodes, 1), dtype=np.int64),
        pairs=np.empty(max_degree + 1, dtype=np.int64),
        key=key,
        atom_col=atom_col,
        sp_ptr=sp_ptr,
        sp_code=sp_code,
        sp_count=sp_count,
        sp_unseen=sp_unseen,
    )


@njit(**_INLINE)
def _lowest_bit(x):
    """Index of the lowest set bit of the non-zero uint64 `x`."""
    low = x & (~x + np.uint64(1))
    return _DEBRUIJN_INDEX[(low * _DEBRUIJN) >> np.uint64(58)]


@njit(**_INLINE)
def _recount(counts, nonzero, old, new):
    """Move one node's count from colour `old` to colour `new` (unseen and absent not counted)."""
    one = np.uint64(1)
    if old >= 0:
        counts[old] -= 1
        if counts[old] == 0:
            nonzero[old >> 6] &= ~(one << np.uint64(old & 63))
    if new >= 0:
        if counts[new] == 0:
            nonzero[new >> 6] |= one << np.uint64(new & 63)
        counts[new] += 1


@njit(**_INLINE)
def _sort(a, n):
    """Sort ``a[:n]`` ascending in place (insertion sort for the short lists of most nodes)."""
    if n > _INSERTION_SORT_MAX:
        a[:n].sort()
        return
    for i in range(1, n):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@njit(**_INLINE)
def _initial_colour(table, c):
    """The feature of initial colour `c` at iteration 0."""
    return table.initial[c] if 0 <= c < table.initial.shape[0] else UNSEEN


@njit(**_JIT)
def _prepare(table, graph, atom_col, sp_ptr, sp_unseen, key):
    """Fill ``atom_col``, ``sp_ptr`` and ``sp_unseen`` (see `WLWork`); return the static pairs'
    codes and multiplicities."""
    iterations = table.config[0]
    n_nodes, n_objects, first_goal, n_fixed = graph.sizes[0], graph.sizes[1], graph.sizes[2], graph.sizes[3]
    object_colour = _initial_colour(table, 0)
    for v in range(n_objects, n_nodes):
        for truth in range(2):
            if v >= n_fixed and truth == 0:
                continue  # a false non-goal fact: absent
            c = graph.initial[v] - (truth if first_goal <= v < n_fixed else 0)
            c0 = _initial_colour(table, c)
            atom_col[0, v, truth] = c0
            if iterations >= 1:
                c1 = UNSEEN
                if c0 != UNSEEN and (graph.arity[v] == 0 or object_colour != UNSEEN):
                    key[0] = 1
                    n = 1
                    for r in range(graph.arity[v]):
                        key[n] = r
                        key[n + 1] = object_colour
                        key[n + 2] = 1
                        n += 3
                    key[n] = c0
                    c1 = lookup(table, key, n + 1)
                atom_col[1, v, truth] = c1
    n_pairs = graph.stat_ptr[n_objects]
    codes = np.empty(2 * n_pairs, dtype=np.int64)
    counts = np.empty(2 * n_pairs, dtype=np.int64)
    buf = np.empty(max(n_pairs, 1), dtype=np.int64)
    n_out = 0
    for t in range(1, 3):
        for o in range(n_objects):
            sp_ptr[t - 1, o] = n_out
            m = 0
            for e in range(graph.stat_ptr[o], graph.stat_ptr[o + 1]):
                c = atom_col[t - 1, graph.stat_atom[e], 1]
                if c == UNSEEN:
                    sp_unseen[t - 1, o] = 1
                buf[m] = (graph.stat_label[e] << 32) | c
                m += 1
            _sort(buf, m)
            i = 0
            while i < m:
                j = i + 1
                while j < m and buf[j] == buf[i]:
                    j += 1
                codes[n_out] = buf[i]
                counts[n_out] = j - i
                n_out += 1
                i = j
        sp_ptr[t - 1, n_objects] = n_out
    return codes[:n_out].copy(), counts[:n_out].copy()


@njit(**_JIT)
def update(table, graph, w, words):
    """Make `words` (a state's fact bit set) the reference: ``w.counts`` are then its WL counts.

    One function on purpose: numba counts references whenever an array is bound to a helper's
    parameter or taken out of a NamedTuple, and with per-node helpers that bookkeeping cost
    several times the work (hundreds of nanoseconds per node). Here every array is taken out
    once, and the only helpers are small inlined ones.
    """
    # ---- the arrays, taken out once
    iterations, multiset, packed = table.config[0], table.config[1] != 0, table.config[3] != 0
    slots, kptr, kdata, khash, kcolour = table.slots, table.ptr, table.data, table.hashes, table.colour
    atom_slots, atom_keys, atom_colour = table.atom_slots, table.atom_keys, table.atom_colour
    n_objects, n_fixed = graph.sizes[1], graph.sizes[3]
    fact_node, args, arity = graph.fact_node, graph.args, graph.arity
    stat_ptr, stat_atom, stat_label = graph.stat_ptr, graph.stat_atom, graph.stat_label
    dyn_ptr, dyn_atom, dyn_label = graph.dyn_ptr, graph.dyn_atom, graph.dyn_label
    ref, col, counts, nonzero, stamp, info = w.ref, w.col, w.counts, w.nonzero, w.stamp, w.info
    changed, frontier, pairs, key, atom_col = w.changed, w.frontier, w.pairs, w.key, w.atom_col
    sp_ptr, sp_code, sp_count, sp_unseen = w.sp_ptr, w.sp_code, w.sp_count, w.sp_unseen
    one = np.uint64(1)
    n_changed = 0  # nodes whose colour changed at the last iteration done, in `changed`

    # ---- the first call: the reference is the state with no true fact (the fixed nodes only)
    if info[1] == 0:
        col[:, :] = ABSENT
        counts[:] = 0
        nonzero[:] = 0
        ref[:] = 0
        object_colour = _initial_colour(table, 0)
        for v in range(n_fixed):
            c = object_colour if v < n_objects else atom_col[0, v, 0]
            col[0, v] = c
            _recount(counts, nonzero, ABSENT, c)
            changed[n_changed] = v
            n_changed += 1
        info[1] = 1

    # ---- iteration 0: the facts whose truth changed; their nodes appear, go or change colour
    for i in range(ref.shape[0]):
        diff = words[i] ^ ref[i]
        if diff == 0:
            continue
        ref[i] = words[i]
        while diff != 0:
            f = i * 64 + _lowest_bit(diff)
            diff &= diff - one
            v = fact_node[f]
            truth = 1 if (words[i] >> np.uint64(f & 63)) & one != 0 else 0
            new = atom_col[0, v, truth]
            if new != col[0, v]:
                _recount(counts, nonzero, col[0, v], new)
                col[0, v] = new
                changed[n_changed] = v
                n_changed += 1

    # ---- iterations 1..T: the nodes that changed and their neighbours
    for t in range(1, iterations + 1):
        if n_changed == 0:
            break
        epoch = info[0] + 1
        info[0] = epoch
        n_next = 0
        for k in range(n_changed):
            v = changed[k]
            # v itself (e = -1), then an object's static and dynamic atoms, or an atom's arguments
            n_stat = stat_ptr[v + 1] - stat_ptr[v] if v < n_objects else 0
            degree = n_stat + dyn_ptr[v + 1] - dyn_ptr[v] if v < n_objects else arity[v]
            for e in range(-1, degree):
                if e < 0:
                    u = v
                elif v >= n_objects:
                    u = args[v, e]
                elif e < n_stat:
                    u = stat_atom[stat_ptr[v] + e]
                else:
                    u = dyn_atom[dyn_ptr[v] + e - n_stat]
                if stamp[u] == epoch:
                    continue
                stamp[u] = epoch
                info[2] += 1
                own = col[t - 1, u]
                new = UNSEEN
                n_key = 0  # > 0: look key[:n_key] up in the general table
                if u >= n_objects:
                    # an atom: absent, or its colour at 1 (set by its fact's truth alone), or
                    # looked up from its arguments: in label order, each label once, so no sorting
                    # (and a set and a multiset key are the same), packed where the table can
                    if own == ABSENT:
                        new = ABSENT
                    elif t == 1:
                        new = atom_col[1, u, 1] if own == atom_col[0, u, 1] else atom_col[1, u, 0]
                    elif own != UNSEEN:
                        a = arity[u]
                        if packed and a <= MAX_PACKED_ARITY:
                            c0 = c1 = c2 = 0
                            if a > 0:
                                c0 = col[t - 1, args[u, 0]]
                                if a > 1:
                                    c1 = col[t - 1, args[u, 1]]
                                    if a > 2:
                                        c2 = col[t - 1, args[u, 2]]
                            if c0 != UNSEEN and c1 != UNSEEN and c2 != UNSEEN:
                                w0, w1 = pack_atom_key(t, own, c0, c1, c2, a)
                                new = lookup_atom(atom_slots, atom_keys, atom_colour, w0, w1)
                        else:
                            key[0] = t
                            n_key = 1
                            for r in range(a):
                                c = col[t - 1, args[u, r]]
                                if c == UNSEEN:
                                    n_key = 0
                                    break
                                key[n_key] = r
                                key[n_key + 1] = c
                                key[n_key + 2] = 1
                                n_key += 3
                            if n_key > 0:
                                key[n_key] = own
                                n_key += 1
                elif own != UNSEEN:
                    # an object: its present dynamic atoms' (label, colour) pairs merged with its
                    # static atoms' (precomputed for t <= 2, collected after)
                    m = 0
                    s_start = s_end = 0
                    unseen = False
                    for e2 in range(dyn_ptr[u], dyn_ptr[u + 1]):
                        c = col[t - 1, dyn_atom[e2]]
                        if c == ABSENT:
                            continue
                        if c == UNSEEN:
                            unseen = True
                            break
                        pairs[m] = (dyn_label[e2] << 32) | c
                        m += 1
                    if not unseen:
                        if t <= 2:
                            unseen = sp_unseen[t - 1, u] != 0
                            s_start, s_end = sp_ptr[t - 1, u], sp_ptr[t - 1, u + 1]
                        else:
                            for e2 in range(stat_ptr[u], stat_ptr[u + 1]):
                                c = col[t - 1, stat_atom[e2]]
                                if c == UNSEEN:
                                    unseen = True
                                    break
                                pairs[m] = (stat_label[e2] << 32) | c
                                m += 1
                    if not unseen:
                        _sort(pairs, m)
                        key[0] = t
                        n_key = 1
                        i, j = 0, s_start
                        while i < m or j < s_end:
                            if j >= s_end or (i < m and pairs[i] < sp_code[j]):
                                p = pairs[i]
                            else:
                                p = sp_code[j]
                            count = 0
                            while i < m and pairs[i] == p:
                                count += 1
                                i += 1
                            if j < s_end and sp_code[j] == p:
                                count += sp_count[j]
                                j += 1
                            key[n_key] = p >> 32
                            key[n_key + 1] = p & _LOW32
                            key[n_key + 2] = count if multiset else 1
                            n_key += 3
                        key[n_key] = own
                        n_key += 1
                if n_key > 0:
                    new = lookup_in(slots, kptr, kdata, khash, kcolour, key, n_key)
                old = col[t, u]
                if new != old:
                    _recount(counts, nonzero, old, new)
                    col[t, u] = new
                    frontier[n_next] = u
                    n_next += 1
        changed, frontier = frontier, changed
        n_changed = n_next


@njit(**_JIT)
def linear_output(counts, nonzero, model, j):
    """Output j of the linear map of the counts (`export`): ``c0_j + sum_i (W_ji z_i - wz0_ji)``
    over the non-zero counts, ``z_i = (x_i - m_i) s_i`` in float32 as torch computes it, summed
    in float64 in ascending feature order (a function of the counts alone, whatever the order
    in which states were counted)."""
    c0, weight, wz0, mean, inv_std = model.c0, model.weight, model.wz0, model.mean, model.inv_std
    s = c0[j]
    for i in range(nonzero.shape[0]):
        bits = nonzero[i]
        while bits != 0:
            f = i * 64 + _lowest_bit(bits)
            bits &= bits - np.uint64(1)
            z = (np.float32(counts[f]) - mean[f]) * inv_std[f]
            s += weight[j, f] * np.float64(z) - wz0[j, f]
    return s


@njit(**_JIT)
def counts_batch(table, graph, w, states, out):
    """The WL counts of every row of `states` into `out` (for tests and feature export)."""
    for k in range(states.shape[0]):
        update(table, graph, w, states[k])
        out[k, :] = w.counts
