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
times more than the nodes that change. The arrays keep the colours of every node at every
iteration and the counts of the *reference* state (the last state counted; at first the task's
initial state, coloured once per task by `wl_arrays`). `update` takes a new state's fact bit
set and:

1. finds the facts whose truth differs from the reference (XOR of the words): their nodes appear
   or disappear (non-goal facts) or change colour (goal atoms), which changes iteration 0;
2. for t = 1..T recomputes only the nodes whose colour changed at t - 1 and their neighbours,
   keeping those whose colour at t changes for the next round;
3. moves the counts with every change (old colour -1, new colour +1), so that they are exactly
   the new state's, which becomes the reference.

Every count is recomputed from the same rule as wlplan's, so the result does not depend on the
order in which states come (the tests compare every state of whole searches with wlplan's).

Two shortcuts keep the work per node small: an atom's colours at iterations 0 and 1 depend on
nothing but its fact's truth (its neighbours are objects, whose colour at 0 is "object"), so
they are looked up once per task (``atom_col``); and so the static atoms around an object add
fixed (edge label, colour) pairs to its keys at iterations 1 and 2, merged in precomputed
(``sp_*``). An atom's key lists its arguments in label order, each label once: no sorting.

Hand-written in numba because it runs once per evaluated state inside the search. Everything
lives in four flat arrays (`WLArrays`, offsets in a header) rather than some forty: numba counts
a reference on every array it takes out of a tuple, which cost about as much as a whole state's
update (under a microsecond) when `update` took its arrays from NamedTuples. For the same reason
`update` is one function, with only small inlined helpers.
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
    key_hash_at,
    lookup,
    mix_atom_key,
    pack_atom_key,
)
from pddlgym_sl.numba_cache import CACHE

__all__ = ["ABSENT", "WLArrays", "counts_view", "linear_output", "update", "wl_arrays"]

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

# The header of `WLArrays.ints`: sizes, counters, then the offset of every section.
(
    H_ITERATIONS, H_MULTISET, H_N_FEATURES, H_PACKED, H_N_NODES, H_N_OBJECTS, H_N_FIXED, H_WIDTH,
    H_N_OUTPUTS, H_INITIALISED, H_EPOCH, H_RECOMPUTED,
    # ints: the colour table
    O_INITIAL, N_INITIAL, O_SLOTS, N_SLOTS, O_KPTR, O_KDATA, O_KCOLOUR, O_ASLOTS, N_ASLOTS, O_ACOLOUR,
    # ints: the task's graph and what is precomputed on it
    O_FACT_NODE, O_ARGS, O_ARITY, O_STAT_PTR, O_STAT_ATOM, O_STAT_LABEL, O_DYN_PTR, O_DYN_ATOM, O_DYN_LABEL,
    O_ATOM_COL, O_SP_PTR, O_SP_CODE, O_SP_COUNT, O_SP_UNSEEN,
    # ints: the reference state's colouring and counts, and scratch space
    O_COL, O_COUNTS, O_STAMP, O_CHANGED, O_FRONTIER, O_PAIRS, O_KEY,
    # words: the key hashes, the packed atom keys, the reference state, the non-zero counts' bit set
    W_KHASH, W_AKEYS, W_REF, W_NONZERO,
    HEADER,
) = range(48)  # fmt: skip


class WLArrays(NamedTuple):
    """Everything the kernels read and write for one task and model (built by `wl_arrays`).

    ``ints`` (int64): the header (sizes, counters, offsets), the colour table's slots, keys and
    features, the graph (`graph.TaskGraph`'s arrays), the per-task constants (``atom_col[t, v,
    truth]`` for t = 0, 1; each object's static pairs at iterations 1 and 2), the reference's
    colours ``col[t, v]`` (a feature, `UNSEEN` or `ABSENT`) and counts, and scratch arrays.
    ``words`` (uint64): the key hashes, the packed atom keys, the reference state's facts, the bit
    set of the non-zero counts (so that the linear map visits those only). ``reals`` (float64):
    the linear map's ``c0``, ``W`` and ``wz0`` (`export`) and each feature's current term of
    each output (`linear_output`); ``floats`` (float32): the standardisation's mean and inverse
    deviation."""

    ints: np.ndarray
    words: np.ndarray
    reals: np.ndarray
    floats: np.ndarray


class _Layout:
    """Sections appended to one flat array, their offsets recorded."""

    def __init__(self, start: int = 0) -> None:
        self.parts: list[np.ndarray] = []
        self.size = start

    def add(self, array: np.ndarray, dtype) -> int:
        offset = self.size
        flat = np.ascontiguousarray(array, dtype=dtype).reshape(-1)
        self.parts.append(flat)
        self.size += len(flat)
        return offset


def wl_arrays(
    table: ColourTable,
    graph: TaskGraph,
    n_words: int,
    model: tuple[np.ndarray, ...] | None = None,
    reference: np.ndarray | None = None,
) -> WLArrays:
    """The arrays of one task (``n_words`` words per state) under a colour table, with the linear
    map `model` = (c0, weight, wz0, mean, inv_std) (`export`; None: none, for counting only).
    The graph is coloured here, once per task: the state with no true fact, then `reference`
    (the task's initial state, the first a search evaluates) when given."""
    iterations, multiset, n_features, packed = (int(x) for x in table.config)
    n_nodes, n_objects, _, n_fixed, max_degree = (int(x) for x in graph.sizes)
    width = graph.args.shape[1]
    atom_col = np.full((2, n_nodes, 2), ABSENT, dtype=np.int64)
    sp_ptr = np.zeros((2, n_objects + 1), dtype=np.int64)
    sp_unseen = np.zeros((2, n_objects), dtype=np.int64)
    key_size = 3 * max(max_degree, width) + 3  # the iteration, 3 per neighbour pair, the own colour
    key = np.empty(key_size, dtype=np.int64)
    sp_code, sp_count = _prepare(table, graph, atom_col, sp_ptr, sp_unseen, key)

    header = np.zeros(HEADER, dtype=np.int64)
    ints = _Layout(HEADER)
    i64 = np.int64
    sections = {
        O_INITIAL: table.initial, O_SLOTS: table.slots, O_KPTR: table.ptr, O_KDATA: table.data,
        O_KCOLOUR: table.colour, O_ASLOTS: table.atom_slots, O_ACOLOUR: table.atom_colour,
        O_FACT_NODE: graph.fact_node, O_ARGS: graph.args, O_ARITY: graph.arity,
        O_STAT_PTR: graph.stat_ptr, O_STAT_ATOM: graph.stat_atom, O_STAT_LABEL: graph.stat_label,
        O_DYN_PTR: graph.dyn_ptr, O_DYN_ATOM: graph.dyn_atom, O_DYN_LABEL: graph.dyn_label,
        O_ATOM_COL: atom_col, O_SP_PTR: sp_ptr, O_SP_CODE: sp_code, O_SP_COUNT: sp_count,
        O_SP_UNSEEN: sp_unseen,
        O_COL: np.full((iterations + 1, n_nodes), ABSENT), O_COUNTS: np.zeros(n_features),
        O_STAMP: np.zeros(n_nodes), O_CHANGED: np.zeros(max(n_nodes, 1)),
        O_FRONTIER: np.zeros(max(n_nodes, 1)), O_PAIRS: np.zeros(max_degree + 1), O_KEY: np.zeros(key_size),
    }  # fmt: skip
    for slot, array in sections.items():
        header[slot] = ints.add(array, i64)
    header[N_INITIAL], header[N_SLOTS] = len(table.initial), len(table.slots)
    header[N_ASLOTS] = len(table.atom_slots)
    words = _Layout()
    u64 = np.uint64
    header[W_KHASH] = words.add(table.hashes, u64)
    header[W_AKEYS] = words.add(table.atom_keys, u64)
    header[W_REF] = words.add(np.zeros(n_words), u64)
    header[W_NONZERO] = words.add(np.zeros(n_features // 64 + 1), u64)
    sizes = (iterations, multiset, n_features, packed, n_nodes, n_objects, n_fixed, width)
    header[H_ITERATIONS : H_WIDTH + 1] = sizes
    if model is None:
        reals, floats = np.zeros(0), np.zeros(0, dtype=np.float32)
    else:
        c0, weight, wz0, mean, inv_std = model
        header[H_N_OUTPUTS] = len(c0)
        terms = np.zeros_like(wz0)  # each feature's term at count 0 (`_term`)
        reals = np.concatenate([c0, *(a.reshape(-1) for a in (weight, wz0, terms))]).astype(np.float64)
        floats = np.concatenate([mean, inv_std]).astype(np.float32)
    arrays = WLArrays(np.concatenate([header, *ints.parts]), np.concatenate(words.parts), reals, floats)
    update(*arrays, np.zeros(n_words, dtype=np.uint64))
    if reference is not None:
        update(*arrays, np.ascontiguousarray(reference, dtype=np.uint64))
    return arrays


def counts_view(arrays: WLArrays) -> np.ndarray:
    """The reference state's counts (a view into ``arrays.ints``)."""
    start = int(arrays.ints[O_COUNTS])
    return arrays.ints[start : start + int(arrays.ints[H_N_FEATURES])]


@njit(**_JIT)
def _prepare(table, graph, atom_col, sp_ptr, sp_unseen, key):
    """Fill ``atom_col`` (each atom's colours at iterations 0 and 1 by its fact's truth),
    ``sp_ptr`` and ``sp_unseen`` (each object's static pairs at iterations 1 and 2, and whether one
    is unseen); return the static pairs' codes and multiplicities."""
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
            _sort(buf, 0, m)
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


@njit(**_INLINE)
def _lowest_bit(x):
    """Index of the lowest set bit of the non-zero uint64 `x`."""
    low = x & (~x + np.uint64(1))
    return _DEBRUIJN_INDEX[(low * _DEBRUIJN) >> np.uint64(58)]


@njit(**_INLINE)
def _term(ints, reals, floats, f, j):
    """Feature f's term of linear output j at its current count x: ``W_jf z - wz0_jf`` with
    ``z = (x - m_f) s_f`` in float32 as torch computes it (0 at x = 0; `linear_output`)."""
    n_features, n_outputs = ints[H_N_FEATURES], ints[H_N_OUTPUTS]
    z = (np.float32(ints[ints[O_COUNTS] + f]) - floats[f]) * floats[n_features + f]
    weight = reals[n_outputs + j * n_features + f]
    return weight * np.float64(z) - reals[n_outputs + (n_outputs + j) * n_features + f]


@njit(**_INLINE)
def _recount(ints, words, reals, floats, o_counts, w_nonzero, old, new):
    """Move one node's count from colour `old` to colour `new` (unseen and absent not counted),
    and refresh the two features' terms of the linear map (when there is one)."""
    one = np.uint64(1)
    n_features, n_outputs = ints[H_N_FEATURES], ints[H_N_OUTPUTS]
    r_terms = n_outputs * (1 + 2 * n_features)
    if old >= 0:
        ints[o_counts + old] -= 1
        if ints[o_counts + old] == 0:
            words[w_nonzero + (old >> 6)] &= ~(one << np.uint64(old & 63))
        for j in range(n_outputs):
            reals[r_terms + j * n_features + old] = _term(ints, reals, floats, old, j)
    if new >= 0:
        if ints[o_counts + new] == 0:
            words[w_nonzero + (new >> 6)] |= one << np.uint64(new & 63)
        ints[o_counts + new] += 1
        for j in range(n_outputs):
            reals[r_terms + j * n_features + new] = _term(ints, reals, floats, new, j)


@njit(**_INLINE)
def _recolour(ints, words, reals, floats, o_counts, w_nonzero, at, node, new, listed, n):
    """Give `node`, whose colour is stored at ``ints[at]``, the colour `new` if it has another one:
    recount (`_recount`), store it and list the node at ``ints[listed + n]``. Returns the length of
    that list of changed nodes, ``n + 1`` or ``n``."""
    old = ints[at]
    if new == old:
        return n
    _recount(ints, words, reals, floats, o_counts, w_nonzero, old, new)
    ints[at] = new
    ints[listed + n] = node
    return n + 1


@njit(**_INLINE)
def _sort(a, start, n):
    """Sort ``a[start:start + n]`` ascending in place (insertion sort for the short lists of most
    nodes)."""
    if n > _INSERTION_SORT_MAX:
        a[start : start + n].sort()
        return
    for i in range(start + 1, start + n):
        x = a[i]
        j = i - 1
        while j >= start and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@njit(**_INLINE)
def _initial_colour(table, c):
    """The feature of initial colour `c` at iteration 0."""
    return table.initial[c] if 0 <= c < table.initial.shape[0] else UNSEEN


@njit(**_JIT)
def update(ints, words, reals, floats, state):
    """Make `state` (a fact bit set) the reference of the arrays `WLArrays` ``(ints, words, reals,
    floats)``: their counts are then its WL counts (and the linear map's terms, those of its
    counts)."""
    # ---- sizes and offsets, read once
    iterations, multiset, packed = ints[H_ITERATIONS], ints[H_MULTISET] != 0, ints[H_PACKED] != 0
    n_nodes, n_objects, n_fixed, width = ints[H_N_NODES], ints[H_N_OBJECTS], ints[H_N_FIXED], ints[H_WIDTH]
    o_initial, n_initial = ints[O_INITIAL], ints[N_INITIAL]
    o_slots, n_slots, o_kptr = ints[O_SLOTS], ints[N_SLOTS], ints[O_KPTR]
    o_kdata, o_kcolour = ints[O_KDATA], ints[O_KCOLOUR]
    o_aslots, n_aslots, o_acolour = ints[O_ASLOTS], ints[N_ASLOTS], ints[O_ACOLOUR]
    o_fact_node, o_args, o_arity = ints[O_FACT_NODE], ints[O_ARGS], ints[O_ARITY]
    o_stat_ptr, o_stat_atom, o_stat_label = ints[O_STAT_PTR], ints[O_STAT_ATOM], ints[O_STAT_LABEL]
    o_dyn_ptr, o_dyn_atom, o_dyn_label = ints[O_DYN_PTR], ints[O_DYN_ATOM], ints[O_DYN_LABEL]
    o_atom_col, o_sp_ptr, o_sp_code, o_sp_count, o_sp_unseen = (
        ints[O_ATOM_COL],
        ints[O_SP_PTR],
        ints[O_SP_CODE],
        ints[O_SP_COUNT],
        ints[O_SP_UNSEEN],
    )
    o_col, o_counts, o_stamp = ints[O_COL], ints[O_COUNTS], ints[O_STAMP]
    o_pairs, o_key = ints[O_PAIRS], ints[O_KEY]
    changed, frontier = ints[O_CHANGED], ints[O_FRONTIER]  # offsets of the two node lists, swapped per round
    w_khash, w_akeys, w_ref, w_nonzero = ints[W_KHASH], ints[W_AKEYS], ints[W_REF], ints[W_NONZERO]
    n_words = w_nonzero - w_ref
    one = np.uint64(1)
    n_changed = 0  # nodes whose colour changed at the last iteration done, listed at `changed`

    # ---- the first call: the reference is the state with no true fact (the fixed nodes only)
    if ints[H_INITIALISED] == 0:
        ints[o_col : o_col + (iterations + 1) * n_nodes] = ABSENT
        ints[o_counts : o_counts + ints[H_N_FEATURES]] = 0
        words[w_nonzero : w_nonzero + ints[H_N_FEATURES] // 64 + 1] = 0
        words[w_ref : w_ref + n_words] = 0
        object_colour = ints[o_initial] if n_initial > 0 else UNSEEN
        for v in range(n_fixed):
            c = object_colour if v < n_objects else ints[o_atom_col + 2 * v]
            ints[o_col + v] = c
            _recount(ints, words, reals, floats, o_counts, w_nonzero, ABSENT, c)
            ints[changed + n_changed] = v
            n_changed += 1
        ints[H_INITIALISED] = 1

    # ---- iteration 0: the facts whose truth changed; their nodes appear, go or change colour
    for i in range(n_words):
        diff = state[i] ^ words[w_ref + i]
        if diff == 0:
            continue
        words[w_ref + i] = state[i]
        while diff != 0:
            f = i * 64 + _lowest_bit(diff)
            diff &= diff - one
            v = ints[o_fact_node + f]
            truth = 1 if (state[i] >> np.uint64(f & 63)) & one != 0 else 0
            new = ints[o_atom_col + 2 * v + truth]
            n_changed = _recolour(
                ints, words, reals, floats, o_counts, w_nonzero, o_col + v, v, new, changed, n_changed
            )

    # ---- iterations 1..T: the nodes that changed and their neighbours
    for t in range(1, iterations + 1):
        if n_changed == 0:
            break
        epoch = ints[H_EPOCH] + 1
        ints[H_EPOCH] = epoch
        prev, cur = o_col + (t - 1) * n_nodes, o_col + t * n_nodes  # colours at t - 1 and t
        n_next = 0
        for k in range(n_changed):
            v = ints[changed + k]
            # v itself (e = -1), then an object's static and dynamic atoms, or an atom's arguments
            if v < n_objects:
                s_first, d_first = ints[o_stat_ptr + v], ints[o_dyn_ptr + v]
                n_stat = ints[o_stat_ptr + v + 1] - s_first
                degree = n_stat + ints[o_dyn_ptr + v + 1] - d_first
            else:
                s_first = d_first = n_stat = 0
                degree = ints[o_arity + v]
            for e in range(-1, degree):
                if e < 0:
                    u = v
                elif v >= n_objects:
                    u = ints[o_args + v * width + e]
                elif e < n_stat:
                    u = ints[o_stat_atom + s_first + e]
                else:
                    u = ints[o_dyn_atom + d_first + e - n_stat]
                if ints[o_stamp + u] == epoch:
                    continue
                ints[o_stamp + u] = epoch
                ints[H_RECOMPUTED] += 1
                own = ints[prev + u]
                new = UNSEEN
                n_key = 0  # > 0: look the key up in the general table
                if u >= n_objects:
                    # an atom: absent, or its colour at 1 (set by its fact's truth alone), or
                    # looked up from its arguments' colours (packed, where the table can)
                    a = ints[o_arity + u]
                    if own == ABSENT:
                        new = ABSENT
                    elif t == 1:
                        truth = 1 if own == ints[o_atom_col + 2 * u + 1] else 0
                        new = ints[o_atom_col + 2 * (n_nodes + u) + truth]
                    elif own != UNSEEN:
                        if packed and a <= MAX_PACKED_ARITY:
                            c0 = c1 = c2 = 0
                            if a > 0:
                                c0 = ints[prev + ints[o_args + u * width]]
                                if a > 1:
                                    c1 = ints[prev + ints[o_args + u * width + 1]]
                                    if a > 2:
                                        c2 = ints[prev + ints[o_args + u * width + 2]]
                            if c0 != UNSEEN and c1 != UNSEEN and c2 != UNSEEN:
                                w0, w1 = pack_atom_key(t, own, c0, c1, c2, a)
                                mask = np.uint64(n_aslots - 1)
                                s = mix_atom_key(w0, w1) & mask
                                while True:
                                    slot = ints[o_aslots + np.int64(s)]
                                    if slot < 0:
                                        break
                                    k2 = w_akeys + 2 * slot
                                    if words[k2] == w0 and words[k2 + 1] == w1:
                                        new = ints[o_acolour + slot]
                                        break
                                    s = (s + one) & mask
                        else:
                            ints[o_key] = t
                            n_key = 1
                            for r in range(a):
                                c = ints[prev + ints[o_args + u * width + r]]
                                if c == UNSEEN:
                                    n_key = 0
                                    break
                                ints[o_key + n_key] = r
                                ints[o_key + n_key + 1] = c
                                ints[o_key + n_key + 2] = 1
                                n_key += 3
                            if n_key > 0:
                                ints[o_key + n_key] = own
                                n_key += 1
                elif own != UNSEEN:
                    # an object: its present dynamic atoms' (label, colour) pairs merged with its
                    # static atoms' (precomputed for t <= 2, collected after)
                    m = 0
                    sp_start = sp_end = 0
                    unseen = False
                    for e2 in range(ints[o_dyn_ptr + u], ints[o_dyn_ptr + u + 1]):
                        c = ints[prev + ints[o_dyn_atom + e2]]
                        if c == ABSENT:
                            continue
                        if c == UNSEEN:
                            unseen = True
                            break
                        ints[o_pairs + m] = (ints[o_dyn_label + e2] << 32) | c
                        m += 1
                    if not unseen:
                        if t <= 2:
                            unseen = ints[o_sp_unseen + (t - 1) * n_objects + u] != 0
                            sp_start = ints[o_sp_ptr + (t - 1) * (n_objects + 1) + u]
                            sp_end = ints[o_sp_ptr + (t - 1) * (n_objects + 1) + u + 1]
                        else:
                            for e2 in range(ints[o_stat_ptr + u], ints[o_stat_ptr + u + 1]):
                                c = ints[prev + ints[o_stat_atom + e2]]
                                if c == UNSEEN:
                                    unseen = True
                                    break
                                ints[o_pairs + m] = (ints[o_stat_label + e2] << 32) | c
                                m += 1
                    if not unseen:
                        _sort(ints, o_pairs, m)
                        ints[o_key] = t
                        n_key = 1
                        i, j = 0, sp_start
                        while i < m or j < sp_end:
                            if j >= sp_end or (i < m and ints[o_pairs + i] < ints[o_sp_code + j]):
                                p = ints[o_pairs + i]
                            else:
                                p = ints[o_sp_code + j]
                            count = 0
                            while i < m and ints[o_pairs + i] == p:
                                count += 1
                                i += 1
                            if j < sp_end and ints[o_sp_code + j] == p:
                                count += ints[o_sp_count + j]
                                j += 1
                            ints[o_key + n_key] = p >> 32
                            ints[o_key + n_key + 1] = p & _LOW32
                            ints[o_key + n_key + 2] = count if multiset else 1
                            n_key += 3
                        ints[o_key + n_key] = own
                        n_key += 1
                if n_key > 0:
                    # the general table: hash the key, probe, compare element by element
                    h = key_hash_at(ints, o_key, n_key)
                    mask = np.uint64(n_slots - 1)
                    s = h & mask
                    while True:
                        slot = ints[o_slots + np.int64(s)]
                        if slot < 0:
                            break
                        start = ints[o_kptr + slot]
                        if words[w_khash + slot] == h and ints[o_kptr + slot + 1] - start == n_key:
                            same = True
                            for q in range(n_key):
                                if ints[o_kdata + start + q] != ints[o_key + q]:
                                    same = False
                                    break
                            if same:
                                new = ints[o_kcolour + slot]
                                break
                        s = (s + one) & mask
                n_next = _recolour(
                    ints, words, reals, floats, o_counts, w_nonzero, cur + u, u, new, frontier, n_next
                )
        changed, frontier = frontier, changed
        n_changed = n_next


@njit(**_JIT)
def linear_output(ints, words, reals, j):
    """Output j of the linear map of the reference's counts (`export`): ``c0_j + sum_i (W_ji z_i
    - wz0_ji)``, ``z_i = (x_i - m_i) s_i`` in float32 as torch computes it. The terms are kept
    up to date by `update` (0 for a zero count); they are summed here in float64 over the
    non-zero counts in ascending feature order, so the output is a function of the counts alone,
    whatever the order in which states were counted."""
    n_features, n_outputs, w_nonzero = ints[H_N_FEATURES], ints[H_N_OUTPUTS], ints[W_NONZERO]
    r_terms = n_outputs * (1 + 2 * n_features) + j * n_features
    s = reals[j]
    for i in range(n_features // 64 + 1):
        bits = words[w_nonzero + i]
        while bits != 0:
            s += reals[r_terms + i * 64 + _lowest_bit(bits)]
            bits &= bits - np.uint64(1)
    return s


@njit(**_JIT)
def counts_batch(ints, words, reals, floats, states, out):
    """The WL counts of every row of `states` into `out` (for tests and feature export)."""
    o_counts, n_features = ints[O_COUNTS], ints[H_N_FEATURES]
    for k in range(states.shape[0]):
        update(ints, words, reals, floats, states[k])
        out[k, :] = ints[o_counts : o_counts + n_features]
