r"""The arity-3 block of `agents.models.nlm.fast.arity3_block` for inference, memoised and incremental.

In that module's notation, the second layer's pre-activation that the block reduces over ``k`` is

.. math::
    P[i,j,k] = Q[i,j,k] + A'[j,k] + B'[i,k],
    \qquad
    Q[i,j,k] = T[i,j,k] W_0 + T[i,k,j] W_1 + T[j,i,k] W_2 + T[k,i,j] W_3 + T[j,k,i] W_4 + T[k,j,i] W_5

and the block's outputs are ∃T, ∀T (max / min over the valid ``k`` of ``T[i, j, k]``, functions of
``X``, the first layer's arity-2 input, alone) and ∃Y, ∀Y (``σ(max_k P[i,j,k] + C'[i,j])`` and
the min; ``A'``, ``B'``, ``C'`` are pairwise terms of ``X'``, the second layer's arity-2 input).
``Q`` costs ``6 C_t C_p`` multiply-adds per object triple and the reductions of ``P`` a pass over
all ``n³`` triples: on 100 objects that is 32 MB of ``Q`` read per state, nearly all of a
search's network time. Two things make it cheap for the states a search evaluates, which differ
from states evaluated shortly before in the atoms of a few objects:

* **Bases** (``Q``, ∃T, ∀T and the pair terms of one ``X``, kept least recently used first out
  within a byte budget): ``Q`` changes only on the triples holding both objects of a pair where
  ``X`` changed (ferry's sail and gripper's move change no arity-2 atom; board or pick change one or
  two pairs). A state's ``Q`` is its base's, with those triples recomputed where they are read
  (`_q_entry`); a new base is the nearest base's ``Q`` patched (`_patch_q`), or computed in full
  (`_full_q`). ``Q`` at a fixed ``k`` (a column) is copied out once it is needed (`_fill_columns`):
  in ``Q``'s layout its entries lie a row apart.
* **References**: a state evaluated in full keeps, per row ``(i, j)`` and channel, the four largest
  and four smallest ``P[i, j, k]`` with their ``k``. Let ``D`` be a vertex cover of the object
  pairs where a new state's ``X`` or ``X'`` differs from the reference's (`_greedy_cover`: a change
  of one object's own atoms changes its whole row and column of ``X'``, and is covered by that one
  object). On a row ``(i, j)`` with ``i, j ∉ D``, ``P[i, j, k]`` equals the reference's for every
  ``k ∉ D`` (no changed pair among ``i, j, k``), so the max over those ``k`` is the first of the
  reference's four largest whose ``k`` is not in ``D`` (when all four are, the row is computed in
  full), and only the ``k ∈ D`` are computed anew; rows with ``i`` or ``j`` in ``D`` are computed in
  full. A state costs about ``3 |D| n²`` instead of ``n³``. Objects that are in ``D`` in many of a
  search's states (gripper's rooms and grippers: a move changes both rooms) would often be among
  the four largest of every row; a new reference leaves them out (its *special* objects, whose
  ``P`` every derived state computes anew). A state becomes a new reference when ``|D|`` is above
  a limit (`Block3Memo.max_touched`), when its ``X`` drifted that far from its base's, or after a
  derived state computed more than a quarter of its rows in full.

Exactness: every ``P[i, j, k]`` (and every ``Q`` entry, ``T`` row and pairwise term) is computed by
the same sequence of floating-point operations whichever way it is obtained, and a max or min of a
set of values does not depend on the order in which the set is visited (nor on how it is split),
so the outputs are a function of the state alone, bit for bit: they do not depend on what was
evaluated before, nor on the other states of the batch, and a search stays deterministic (also
when several searches share one memo, each in its own slot: `Block3Memo.__call__`). They agree with
`agents.models.nlm.fast.arity3_block.block3_forward` to rounding (the additions of ``A'`` and ``B'``
come in another order); the tests compare the two, and the references against full passes.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from numba import njit

from agents.errors import AgentError
from agents.models.nlm.fast.arity3_block import (
    expand_weight,
    gh_rows,
    own_weight,
    pair_products,
    pair_terms,
    sigmoid_t,
)
from agents.models.nlm.fast.arrays import Workspace, allocate, pad_lanes, pad_last
from agents.models.nlm.fast.jit import INLINE, JIT, fill_padding, vmax_min
from agents.models.nlm.fast.simd import (
    LANES,
    vadd,
    vbcast,
    veq_select,
    vfill,
    vfma,
    vgt_select,
    vload,
    vmul,
    vsigmoid,
    vstore,
)

__all__ = ["Block3Memo"]

DECAY = 0.9
"""Per state, the decay of a slot's counts of the objects in ``D``."""
SPECIAL, SPECIAL_SHARE = 4, 0.15
"""A new reference leaves out of its extremes up to four objects that were in ``D`` in at least 15%
of its slot's recent states (gripper's rooms and grippers): a derived state recomputes ``P`` at
them anyway, and kept among the extremes they would hide the others whenever they change."""
INCREMENTAL_FROM = 40
"""Objects from which references and derived states pay for their bookkeeping (a full pass over
``n³`` triples costs about as much as a derived state's Python and kernel calls near 50 objects)."""
SPARES = 8
"""Flat buffers of dropped bases and references kept for reuse."""
TOP_SLOTS = 16
"""Per row and channel block a reference keeps the four largest and four smallest ``P`` with their
``k``: a derived state recomputes a row only when all four fall among the objects where it differs
(two were too few: gripper's two rooms are the two largest of most rows, and a move changes both)."""


# ----------------------------------------------------------------------------- Q and T
@njit(**JIT)
def _full_q(pair, wq, ct, cp, n, q, tb, gh):
    """``Q`` of one state in full into ``q`` (flat ``[n, n, n, C_p]``), from ``pair = (A, B, C)``;
    ``tb`` (``n³ C_t``) and ``gh`` (``2 n² C_p``) are scratch space."""
    dt = q.dtype
    sigmoid_t(pair, n, ct, tb)
    zeros = np.zeros(n * n * cp, dt)
    c2p = 2 * cp
    for i in range(n):
        for u in range(n):
            for v0 in range(0, n, 4):
                gh_rows(tb, wq, (zeros, zeros), ct, cp, n, i, u, v0, min(4, n - v0), gh)
        for j in range(n):
            for k in range(n):
                out = ((i * n + j) * n + k) * cp
                for ob in range(0, cp, LANES):
                    g, h = vload(gh, (j * n + k) * c2p + ob), vload(gh, (k * n + j) * c2p + cp + ob)
                    vstore(q, out + ob, vadd(g, h))


@njit(**INLINE)
def _t_row(pair, n, ct, x, y, z, tt, off):
    """``T[x, y, z]`` (``ct`` channels) into ``tt[off:]``, computed exactly as `sigmoid_t` does."""
    pa, pb, pc = pair
    a_off, b_off, c_off = (y * n + z) * ct, (x * n + z) * ct, (x * n + y) * ct
    for c0 in range(0, ct, LANES):
        v = vadd(vadd(vload(pa, a_off + c0), vload(pb, b_off + c0)), vload(pc, c_off + c0))
        vstore(tt, off + c0, vsigmoid(v))


@njit(**INLINE)
def _q_entry(pair, wq, ct, cp, n, i, j, k, tt, q, out):
    """``Q[i, j, k]`` into ``q[out:]``: the ``G`` row ``(j, k)`` and the ``H`` row ``(k, j)`` of
    `gh_rows` for first object ``i`` (same products in the same order, from zero), then their sum."""
    c2p = 2 * cp
    _t_row(pair, n, ct, i, j, k, tt, 0)  # G: T[i, u, v], T[u, i, v], T[u, v, i] with (u, v) = (j, k)
    _t_row(pair, n, ct, j, i, k, tt, ct)
    _t_row(pair, n, ct, j, k, i, tt, 2 * ct)
    _t_row(pair, n, ct, i, k, j, tt, 3 * ct)  # H: the same with (u, v) = (k, j)
    _t_row(pair, n, ct, k, i, j, tt, 4 * ct)
    _t_row(pair, n, ct, k, j, i, tt, 5 * ct)
    for ob in range(0, cp, LANES):
        g = h = vfill(q, 0.0)
        for s in range(3):
            for c2 in range(ct):
                w_off = (s * ct + c2) * c2p + ob
                g = vfma(vbcast(tt, s * ct + c2), vload(wq, w_off), g)
                h = vfma(vbcast(tt, (3 + s) * ct + c2), vload(wq, w_off + cp), h)
        vstore(q, out + ob, vadd(g, h))


@njit(**JIT)
def _patch_q(pair, wq, ct, cp, n, pairs, q):
    """Recompute ``q`` on every triple with an ordered pair of ``pairs`` (``[m, 2]``, closed under
    swapping) in positions (1, 2), (1, 3) or (2, 3); the other entries are kept."""
    tt = np.empty(6 * ct, q.dtype)
    for p in range(pairs.shape[0]):
        a, b = pairs[p, 0], pairs[p, 1]
        for m in range(n):
            _q_entry(pair, wq, ct, cp, n, a, b, m, tt, q, ((a * n + b) * n + m) * cp)
            _q_entry(pair, wq, ct, cp, n, a, m, b, tt, q, ((a * n + m) * n + b) * cp)
            _q_entry(pair, wq, ct, cp, n, m, a, b, tt, q, ((m * n + a) * n + b) * cp)


@njit(**INLINE)
def _q_row(q, pair, wq, ct, cp, n, i, j, changed, tt, qrow):
    """``Q[i, j, :]`` of a state into ``qrow`` (``[n, C_p]``): its base's row, recomputed on the
    triples that hold a pair of objects where the state's ``X`` differs from the base's (``changed``,
    ``[n, n]`` flat, symmetric)."""
    base = (i * n + j) * n * cp
    whole = changed[i * n + j]
    for k in range(n):
        if whole or changed[i * n + k] or changed[j * n + k]:
            _q_entry(pair, wq, ct, cp, n, i, j, k, tt, qrow, k * cp)
        else:
            for ob in range(0, cp, LANES):
                vstore(qrow, k * cp + ob, vload(q, base + k * cp + ob))


@njit(**INLINE)
def _row_max_min(pa, pb, q, with_q, i, j, n, ch, c0, exclude_self):
    """∃ / ∀ pre-activations of row ``(i, j)``, channels ``c0 .. c0 + 7``: max and min over the
    valid ``k`` (``k`` not ``i`` or ``j`` with ``exclude_self``) of ``(Q[i, j, k] +) A[j, k] +
    B[i, k]`` (compact ``[n, n, ch]`` pair terms, ``Q`` ``[n, n, n, ch]``, read when ``with_q``);
    -inf / inf when no ``k`` is valid. Offsets are hoisted out of the loop and the exclusion is
    one comparison with two precomputed indices (measured 1.5-2.5x faster than recomputing them
    per ``k``, and faster than two accumulators or branch-free split ranges)."""
    lo, hi = (min(i, j), max(i, j)) if exclude_self else (n, n)
    a_off, b_off, q_off = j * n * ch + c0, i * n * ch + c0, (i * n + j) * n * ch + c0
    mx, mn = vfill(pa, -np.inf), vfill(pa, np.inf)
    for k in range(n):
        if k == lo or k == hi:  # noqa: SIM109 (numba)
            continue
        o = k * ch
        if with_q:
            v = vadd(vadd(vload(q, q_off + o), vload(pa, a_off + o)), vload(pb, b_off + o))
        else:
            v = vadd(vload(pa, a_off + o), vload(pb, b_off + o))
        mx, mn = vmax_min(v, mx, mn)
    return mx, mn


@njit(**JIT)
def _exists_t_rows(pair, n, exclude_self, touched, ex, fa):
    """∃ / ∀ over valid ``k`` of ``T[i, j, k]``, ``σ(max_k (A[j, k] + B[i, k]) + C[i, j])`` and
    the min, into the compact ``[n, n, C_t]`` ``ex`` and ``fa``, on the rows ``(i, j)`` with ``i``
    or ``j`` touched (the others are kept): when ``X`` changed only on pairs of touched objects,
    ``A``, ``B`` and ``C`` changed only there, and so only these rows."""
    pa, pb, pc = pair
    ct = ex.size // (n * n)
    for i in range(n):
        for j in range(n):
            if not (touched[i] or touched[j]):
                continue
            out = (i * n + j) * ct
            for c0 in range(0, ct, LANES):
                mx, mn = _row_max_min(pa, pb, pa, False, i, j, n, ct, c0, exclude_self)
                post = vload(pc, out + c0)
                vstore(ex, out + c0, vsigmoid(vadd(mx, post)))
                vstore(fa, out + c0, vsigmoid(vadd(mn, post)))


@njit(**INLINE)
def _copy_t(src, dst, b, objs, n):
    """Copy the compact ``src`` (``[n, n, C_t]`` flat: ∃T or ∀T of batch row ``b``) into the padded
    ``dst`` (``[B, N, N, C_t]``)."""
    big_n, ct = dst.shape[1], dst.shape[3]
    for i in range(n):
        for j in range(n):
            out, mem = ((b * big_n + objs[i]) * big_n + objs[j]) * ct, (i * n + j) * ct
            for c0 in range(0, ct, LANES):
                vstore(dst, out + c0, vload(src, mem + c0))


@njit(**JIT)
def _t_outputs(ex_t, fa_t, b, objs, n, outs):
    """∃T and ∀T of batch row ``b`` (compact) into ``outs[0]``, ``outs[1]`` (padded)."""
    fill_padding(outs[0], b, n, 0.0)
    fill_padding(outs[1], b, n, 0.0)
    _copy_t(ex_t, outs[0], b, objs, n)
    _copy_t(fa_t, outs[1], b, objs, n)


@njit(**JIT)
def _t_only_row(x, w0, b0, b, objs, n, exclude_self, outs):
    """∃T and ∀T of batch row ``b`` alone (no second layer, so no ``Q``) into ``outs``."""
    ct = b0.shape[0]
    dt = b0.dtype
    for k in range(2):
        fill_padding(outs[k], b, n, 0.0)
    if n == 0:
        return
    pair = (np.empty(n * n * ct, dt), np.empty(n * n * ct, dt), np.empty(n * n * ct, dt))
    pair_terms(x, w0, b0, b, objs, n, pair)
    ex_t, fa_t = np.empty(n * n * ct, dt), np.empty(n * n * ct, dt)
    _exists_t_rows(pair, n, exclude_self, np.ones(n, np.bool_), ex_t, fa_t)
    _copy_t(ex_t, outs[0], b, objs, n)
    _copy_t(fa_t, outs[1], b, objs, n)


@njit(**JIT)
def _pair_terms(x, w, bias, b, objs, n, pair):
    """`pair_terms` as a kernel of its own (it is inlined elsewhere)."""
    pair_terms(x, w, bias, b, objs, n, pair)


@njit(**JIT)
def _patch_pairs(x, w, bias, b, objs, n, marked, pair):
    """Recompute the entries ``(u, v)`` of ``pair = (A, B, C)`` (`pair_terms` of ``x``) where
    ``marked`` (flat symmetric ``[n, n]``) is set, each the sum of the same two products in the
    order `pair_terms` adds them (the one of the pair visited first, ``(min, max)``, first); the
    other entries are kept. ``A[u, v]`` and ``B[u, v]``, ``C[u, v]`` depend on ``x`` at ``(u, v)``
    and ``(v, u)`` only."""
    pa, pb, pc = pair
    ch = bias.shape[0]
    zero = vfill(pa, 0.0)
    for u in range(n):
        for v in range(n):
            if not marked[u * n + v]:
                continue
            uv = (u * n + v) * ch
            for c0 in range(0, ch, LANES):
                f0, f1, _, _, f4, _ = pair_products(x, w, b, objs, u, v, ch, c0)  # visit (u, v): own terms
                _, _, g2, g3, _, g5 = pair_products(x, w, b, objs, v, u, ch, c0)  # visit (v, u): swapped
                if u <= v:
                    vstore(pc, uv + c0, vadd(vadd(vload(bias, c0), f0), g2))
                    vstore(pb, uv + c0, vadd(vadd(zero, f1), g3))
                    vstore(pa, uv + c0, vadd(vadd(zero, f4), g5))
                else:
                    vstore(pc, uv + c0, vadd(vadd(vload(bias, c0), g2), f0))
                    vstore(pb, uv + c0, vadd(vadd(zero, g3), f1))
                    vstore(pa, uv + c0, vadd(vadd(zero, g5), f4))


# ----------------------------------------------------------------------------- differences
@njit(**INLINE)
def _differs(a, b, off, c):
    """Whether the ``c`` entries of ``a`` and ``b`` from ``off`` on differ (stops at the first)."""
    for ch in range(c):
        if a[off + ch] != b[off + ch]:
            return True
    return False


@njit(**JIT)
def _mark_pairs(a, b, n, c, marked):
    """``marked[u, v] = marked[v, u] = True`` (flat ``[n, n]``) for every pair ``(u, v)`` where the
    compact ``[n, n, c]`` arrays ``a`` and ``b`` (bit patterns: unsigned views) differ."""
    for u in range(n):
        for v in range(n):
            if _differs(a, b, (u * n + v) * c, c):
                marked[u * n + v] = True
                marked[v * n + u] = True


@njit(**JIT)
def _greedy_cover(marked, n, limit, cover):
    """A small vertex cover of the pairs ``marked`` (flat symmetric ``[n, n]``, consumed): objects
    of most uncovered pairs first, into ``cover``; returns its size, or ``limit + 1`` as soon as it
    would exceed ``limit``. A change of one object's own atoms changes its whole row and column of
    ``X'``: the cover is that object, not the ``n`` objects of its pairs."""
    deg = np.zeros(n, np.int64)
    for u in range(n):
        for v in range(n):
            deg[u] += marked[u * n + v]
    size = 0
    while True:
        best, u = 0, -1
        for o in range(n):
            if deg[o] > best:
                best, u = deg[o], o
        if u < 0:
            return size
        if size == limit:
            return limit + 1
        cover[u] = True
        size += 1
        for v in range(n):
            if marked[u * n + v]:
                marked[u * n + v] = False
                marked[v * n + u] = False
                if v != u:
                    deg[v] -= 1
        deg[u] = 0


@njit(**JIT)
def _pair_diff(a, b, n, c, changed, endpoint):
    """``changed[u, v] = changed[v, u] = True`` (flat ``[n, n]``) for every pair where the compact
    ``[n, n, c]`` bit patterns ``a`` and ``b`` differ, ``endpoint`` marks their objects; returns the
    number of ordered pairs marked."""
    for u in range(n):
        for v in range(n):
            if _differs(a, b, (u * n + v) * c, c):
                changed[u * n + v] = True
                changed[v * n + u] = True
                endpoint[u] = True
                endpoint[v] = True
    count = 0
    for m in range(n * n):
        count += changed[m]
    return count


@njit(**JIT)
def _fill_columns(q, n, cp, ks, cols):
    """``cols[k][(i, j)] = Q[i, j, k]`` (flat ``[n, n, C_p]``) for each ``k`` of ``ks``: ``Q`` at a
    fixed ``k`` is strided by a whole row in ``Q``'s layout (a cache and TLB miss per entry),
    contiguous in a column."""
    for t in range(ks.size):
        k = ks[t]
        for m in range(n * n):
            for c0 in range(0, cp, LANES):
                vstore(cols[k], m * cp + c0, vload(q, (m * n + k) * cp + c0))


# ----------------------------------------------------------------------------- the second layer
@njit(**INLINE)
def _p(src, s_off, pa, a_off, pb, b_off, k, cp):
    """``P[i, j, k] = (Q[i, j, k] + A'[j, k]) + B'[i, k]``: the one expression every path uses."""
    o = k * cp
    return vadd(vadd(vload(src, s_off + o), vload(pa, a_off + o)), vload(pb, b_off + o))


@njit(**INLINE)
def _full_row(src, s_off, pa, a_off, pb, b_off, n, lo, hi, cp, post, outs, out):
    """One row and channel block of ∃Y / ∀Y computed in full: ``σ(max_k P[i, j, k] + post)`` and the
    min over every ``k`` but ``lo`` and ``hi`` (`_p`'s offsets) into ``outs[2]``, ``outs[3]`` at
    ``out``."""
    mx, mn = vfill(src, -np.inf), vfill(src, np.inf)
    for k in range(n):
        if k == lo or k == hi:  # noqa: SIM109 (numba)
            continue
        mx, mn = vmax_min(_p(src, s_off, pa, a_off, pb, b_off, k, cp), mx, mn)
    vstore(outs[2], out, vsigmoid(vadd(mx, post)))
    vstore(outs[3], out, vsigmoid(vadd(mn, post)))


@njit(**INLINE)
def _y_start(q, pair, outs, b, n):
    """What the kernels of ∃Y / ∀Y start with: ``outs[2]``, ``outs[3]`` padded on batch row ``b``;
    returns ``C_t`` and `_q_row`'s scratch (``tt``, ``qrow``)."""
    ct = pair[0].size // (n * n)
    for k in range(2, 4):
        fill_padding(outs[k], b, n, 0.0)
    return ct, np.empty(6 * ct, q.dtype), np.empty(n * outs[2].shape[3], q.dtype)


@njit(**INLINE)
def _insert4(v, kv, m1, m2, m3, m4, k1, k2, k3, k4):
    """Insert ``v`` (index ``kv``) into the lane-wise four largest ``m1 >= m2 >= m3 >= m4``."""
    n4, l4 = vgt_select(v, m3, m3, vgt_select(v, m4, v, m4)), vgt_select(v, m3, k3, vgt_select(v, m4, kv, k4))
    n3, l3 = vgt_select(v, m2, m2, vgt_select(v, m3, v, m3)), vgt_select(v, m2, k2, vgt_select(v, m3, kv, k3))
    n2, l2 = vgt_select(v, m1, m1, vgt_select(v, m2, v, m2)), vgt_select(v, m1, k1, vgt_select(v, m2, kv, k2))
    return vgt_select(v, m1, v, m1), n2, n3, n4, vgt_select(v, m1, kv, k1), l2, l3, l4


@njit(**INLINE)
def _insert4_low(v, kv, m1, m2, m3, m4, k1, k2, k3, k4):
    """Insert ``v`` (index ``kv``) into the lane-wise four smallest ``m1 <= m2 <= m3 <= m4``."""
    n4, l4 = vgt_select(m3, v, m3, vgt_select(m4, v, v, m4)), vgt_select(m3, v, k3, vgt_select(m4, v, kv, k4))
    n3, l3 = vgt_select(m2, v, m2, vgt_select(m3, v, v, m3)), vgt_select(m2, v, k2, vgt_select(m3, v, kv, k3))
    n2, l2 = vgt_select(m1, v, m1, vgt_select(m2, v, v, m2)), vgt_select(m1, v, k1, vgt_select(m2, v, kv, k2))
    return vgt_select(m1, v, v, m1), n2, n3, n4, vgt_select(m1, v, kv, k1), l2, l3, l4


@njit(**JIT)
def _reference_rows(q, pair, pair2, wq, n, changed, endpoint, exclude_self, special, top, b, objs, outs):
    """A state evaluated in full as a reference: ∃Y / ∀Y into ``outs[2]``, ``outs[3]`` (padded) and,
    per row and channel, the four largest and four smallest ``P[i, j, k]`` over the valid ``k``
    that are not ``special`` (the objects most often among those where later states differ, whose
    ``P`` a derived state recomputes anyway), with their ``k`` (as floats; -inf / inf and -1 where
    there are fewer), into ``top`` (flat ``[n, n, TOP_SLOTS, C_p]``: max, its k, second, its k, ...,
    then min, its k, ...; one row's slots together, read in one stream). ``Q`` is the base's ``q``
    recomputed on the triples of ``changed`` pairs (`_q_row`). With an empty ``top`` only ∃Y / ∀Y
    (`_plain_rows`)."""
    keep = top.size > 0
    pa2, pb2, pc2 = pair2
    big_n, cp = outs[2].shape[1], outs[2].shape[3]
    ct, tt, qrow = _y_start(q, pair, outs, b, n)
    for i in range(n):
        for j in range(n):
            lo, hi = (min(i, j), max(i, j)) if exclude_self else (n, n)
            if endpoint[i] or endpoint[j]:
                _q_row(q, pair, wq, ct, cp, n, i, j, changed, tt, qrow)
                src, s_off = qrow, 0
            else:
                src, s_off = q, (i * n + j) * n * cp
            out = ((b * big_n + objs[i]) * big_n + objs[j]) * cp
            for ob in range(0, cp, LANES):
                a_off, b_off = j * n * cp + ob, i * n * cp + ob
                if not keep:
                    post = vload(pc2, (i * n + j) * cp + ob)
                    _full_row(src, s_off + ob, pa2, a_off, pb2, b_off, n, lo, hi, cp, post, outs, out + ob)
                    continue
                m1 = m2 = m3 = m4 = sx = vfill(q, -np.inf)
                n1 = n2 = n3 = n4 = sn = vfill(q, np.inf)
                km1 = km2 = km3 = km4 = kn1 = kn2 = kn3 = kn4 = vfill(q, -1.0)
                for k in range(n):
                    if k == lo or k == hi:  # noqa: SIM109 (numba)
                        continue
                    v = _p(src, s_off + ob, pa2, a_off, pb2, b_off, k, cp)
                    if special[k]:
                        sx, sn = vmax_min(v, sx, sn)
                        continue
                    kv = vfill(q, k)
                    m1, m2, m3, m4, km1, km2, km3, km4 = _insert4(v, kv, m1, m2, m3, m4, km1, km2, km3, km4)
                    low = _insert4_low(v, kv, n1, n2, n3, n4, kn1, kn2, kn3, kn4)
                    n1, n2, n3, n4, kn1, kn2, kn3, kn4 = low
                r, tr = (i * n + j) * cp + ob, (i * n + j) * TOP_SLOTS * cp + ob
                slots = (m1, km1, m2, km2, m3, km3, m4, km4, n1, kn1, n2, kn2, n3, kn3, n4, kn4)
                for t in range(TOP_SLOTS):
                    vstore(top, tr + t * cp, slots[t])
                post = vload(pc2, r)
                vstore(outs[2], out + ob, vsigmoid(vadd(vgt_select(sx, m1, sx, m1), post)))
                vstore(outs[3], out + ob, vsigmoid(vadd(vgt_select(n1, sn, sn, n1), post)))


@njit(**JIT)
def _plain_rows(q, pair, pair2, wq, n, changed, endpoint, exclude_self, b, objs, outs):
    """∃Y / ∀Y of a state in full into ``outs[2]``, ``outs[3]``: `_reference_rows` keeping no
    extremes (the path of states of few objects, where a full pass costs less than bookkeeping)."""
    no_special, no_top = np.zeros(n, np.bool_), np.empty(0, q.dtype)
    _reference_rows(q, pair, pair2, wq, n, changed, endpoint, exclude_self, no_special, no_top, b, objs, outs)


@njit(**JIT)
def _derived_rows(
    q, cols, pair, pair2, wq, n, changed, endpoint, exclude_self, top, touched, special, cp_true, b, objs,
    outs,
):  # fmt: skip
    """∃Y / ∀Y of a state from a reference's ``top`` (see `_reference_rows`) into ``outs[2]``,
    ``outs[3]``: rows with an object of ``touched`` (the set ``D`` of the module docstring) and
    rows whose reference extremes all fall in ``D`` (on a real channel, below ``cp_true``) are
    computed in full, the others from the reference's first extremes outside ``D`` and ``P`` at
    the ``k`` of ``D`` and of the reference's ``special`` objects (``Q`` read from ``cols``,
    `_fill_columns`, unless it has no rows). Returns the number of rows computed in full."""
    pa2, pb2, pc2 = pair2
    big_n, cp = outs[2].shape[1], outs[2].shape[3]
    ct, tt, qrow = _y_start(q, pair, outs, b, n)
    dt = q.dtype
    lanes = np.empty(LANES, dt)
    dlist = np.flatnonzero(touched)  # D: membership tests of the extremes
    nd = dlist.size
    rlist = np.flatnonzero(touched | special)  # recomputed in every row
    nr = rlist.size
    qd = np.empty(max(nr, 1) * cp, dt)
    with_cols = cols.shape[0] > 0
    one, zero, half = vfill(q, 1.0), vfill(q, 0.0), vfill(q, 0.5)
    full_rows = 0
    for i in range(n):
        for j in range(n):
            lo, hi = (min(i, j), max(i, j)) if exclude_self else (n, n)
            row_full = touched[i] or touched[j]
            have_row = have_d = False
            q_off = (i * n + j) * n * cp
            src, s_off = q, q_off
            out = ((b * big_n + objs[i]) * big_n + objs[j]) * cp
            for ob in range(0, cp, LANES):
                a_off, b_off = j * n * cp + ob, i * n * cp + ob
                r, tr = (i * n + j) * cp + ob, (i * n + j) * TOP_SLOTS * cp + ob
                post = vload(pc2, r)
                if not row_full:
                    if not have_d:  # Q at the recomputed k, with the triples of changed pairs recomputed
                        have_d = True
                        for t in range(nr):
                            k = rlist[t]
                            if changed[i * n + j] or changed[i * n + k] or changed[j * n + k]:
                                _q_entry(pair, wq, ct, cp, n, i, j, k, tt, qd, t * cp)
                            elif with_cols:
                                for c0 in range(0, cp, LANES):
                                    vstore(qd, t * cp + c0, vload(cols[k], (i * n + j) * cp + c0))
                            else:
                                for c0 in range(0, cp, LANES):
                                    vstore(qd, t * cp + c0, vload(q, q_off + k * cp + c0))
                    # which of the reference's four largest / smallest have their k in D
                    e1 = e2 = e3 = e4 = f1 = f2 = f3 = f4 = zero
                    k1, k2 = vload(top, tr + cp), vload(top, tr + 3 * cp)
                    k3, k4 = vload(top, tr + 5 * cp), vload(top, tr + 7 * cp)
                    l1, l2 = vload(top, tr + 9 * cp), vload(top, tr + 11 * cp)
                    l3, l4 = vload(top, tr + 13 * cp), vload(top, tr + 15 * cp)
                    for t in range(nd):
                        dv = vfill(q, dlist[t])
                        e1, e2 = veq_select(k1, dv, one, e1), veq_select(k2, dv, one, e2)
                        e3, e4 = veq_select(k3, dv, one, e3), veq_select(k4, dv, one, e4)
                        f1, f2 = veq_select(l1, dv, one, f1), veq_select(l2, dv, one, f2)
                        f3, f4 = veq_select(l3, dv, one, f3), veq_select(l4, dv, one, f4)
                    vstore(lanes, 0, vadd(vmul(vmul(e1, e2), vmul(e3, e4)), vmul(vmul(f1, f2), vmul(f3, f4))))
                    fallback = False
                    for lane in range(min(LANES, cp_true - ob)):
                        if lanes[lane] != 0.0:
                            fallback = True
                    if not fallback:  # the first of the four (in order) whose k is not in D
                        mx = vgt_select(e3, half, vload(top, tr + 6 * cp), vload(top, tr + 4 * cp))
                        mx = vgt_select(e2, half, mx, vload(top, tr + 2 * cp))
                        mx = vgt_select(e1, half, mx, vload(top, tr))
                        mn = vgt_select(f3, half, vload(top, tr + 14 * cp), vload(top, tr + 12 * cp))
                        mn = vgt_select(f2, half, mn, vload(top, tr + 10 * cp))
                        mn = vgt_select(f1, half, mn, vload(top, tr + 8 * cp))
                        for t in range(nr):
                            k = rlist[t]
                            if k == lo or k == hi:  # noqa: SIM109 (numba): a special object of this row
                                continue
                            v = vadd(vload(qd, t * cp + ob), vload(pa2, a_off + k * cp))
                            v = vadd(v, vload(pb2, b_off + k * cp))
                            mx, mn = vmax_min(v, mx, mn)
                        vstore(outs[2], out + ob, vsigmoid(vadd(mx, post)))
                        vstore(outs[3], out + ob, vsigmoid(vadd(mn, post)))
                        continue
                if not have_row:
                    have_row = True
                    full_rows += 1
                    if endpoint[i] or endpoint[j]:
                        _q_row(q, pair, wq, ct, cp, n, i, j, changed, tt, qrow)
                        src, s_off = qrow, 0
                _full_row(src, s_off + ob, pa2, a_off, pb2, b_off, n, lo, hi, cp, post, outs, out + ob)
    return full_rows


# ----------------------------------------------------------------------------- memo
def _bits(a: np.ndarray) -> np.ndarray:
    """The bit patterns of a contiguous float array, flat (compared exactly: -0.0 differs from 0.0)."""
    return a.reshape(-1).view(np.uint32 if a.dtype == np.float32 else np.uint64)


@dataclass(eq=False)
class _Base:
    """``Q``, ∃T, ∀T and the pair terms ``(A, B, C)`` of one ``X`` (compact, ``n`` real objects) in
    one memo slot."""

    slot: int
    key: bytes
    n: int
    exclude_self: bool
    x: np.ndarray  # bit patterns of X, flat
    pair: tuple[np.ndarray, ...]
    q: np.ndarray
    ex_t: np.ndarray
    fa_t: np.ndarray
    cols: np.ndarray | None = None  # [n, n * n * C_p]: Q at fixed k (`_fill_columns`), made on demand
    have_col: np.ndarray | None = None  # bool [n]

    @property
    def nbytes(self) -> int:
        cols = 0 if self.cols is None else self.cols.nbytes
        return sum(a.nbytes for a in (self.x, *self.pair, self.q, self.ex_t, self.fa_t)) + cols


@dataclass(eq=False)
class _Reference:
    """A state evaluated in full: its ``X`` and ``X'`` (bit patterns), its base, the pair terms of
    its ``X'``, its special objects and its extremes (`_reference_rows`)."""

    base: _Base
    x: np.ndarray
    x2: np.ndarray
    pair2: tuple[np.ndarray, ...]
    special: np.ndarray  # bool [n]: objects left out of the extremes (recomputed by every derived state)
    top: np.ndarray

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.x, self.x2, *self.pair2, self.special, self.top))


def _patched(
    pair: tuple[np.ndarray, ...], x, w, bias, b, objs, n, marked, ws: Workspace | None = None, name: str = ""
) -> tuple[np.ndarray, ...]:
    """Copies of ``pair`` (in ``ws``'s arrays ``name0..2`` when given) with the entries of the
    ``marked`` pairs recomputed (`_patch_pairs`)."""
    if ws is None:
        out = tuple(a.copy() for a in pair)
    else:
        out = tuple(ws.get(f"{name}{k}", a.shape, a.dtype) for k, a in enumerate(pair))
        for a, o in zip(pair, out, strict=True):
            np.copyto(o, a)
    _patch_pairs(x, w, bias, b, objs, n, marked, out)
    return out


class Block3Memo:
    """`agents.models.nlm.fast.arity3_block`'s block without gradients, memoised and incremental
    (module docstring), for one set of weights: `agents.models.nlm.fast.inference.InferencePlan`
    owns one and is rebuilt when the weights change.

    Args:
        w0, b0: the first layer's arity-3 linear map (``[C_t, 6 C_x]``, built from expansions of
            ``X`` only).
        w1, b1: the second layer's (``[C_p, 6 (C_x2 + C_t)]``), or None when the second layer has
            no arity-3 output: then only ∃T and ∀T are computed (no ``Q``, nothing memoised).
        max_entries: most bases and references kept, all slots together.
        budget_bytes: most bytes kept (a base's ``Q`` is ``4 n³ C_p`` bytes in float32: 0.9 MB on
            30 objects, 32 MB on 100; its columns as much again once all are made).
        candidates: how many of a slot's most recent references (and bases) are compared with a
            new state to find the closest.
        max_touched: the largest ``|D|`` (objects where a state differs from its reference), and
            the most objects of pairs where its ``X`` differs from its base's, for which a state is
            computed from a reference; None: ``max(2, n // 8)`` for ``n`` objects.
        base_touched: the most objects of changed ``X`` pairs with which a new reference reuses
            a base instead of making a new one; None: ``max(2, max_touched // 3)``.
        incremental_from: states with fewer objects are computed by a full pass over their
            base's ``Q`` (`_plain_rows`), without references; None: `INCREMENTAL_FROM`.

    The buffers of evicted bases and dropped references are reused for new ones (`_recycle`), and
    each call's outputs and temporaries are the same arrays from call to call (a `Workspace`).
    """

    def __init__(
        self,
        w0: np.ndarray,
        b0: np.ndarray,
        w1: np.ndarray | None = None,
        b1: np.ndarray | None = None,
        max_entries: int = 256,
        budget_bytes: int = 768 << 20,
        candidates: int = 6,
        max_touched: int | None = None,
        base_touched: int | None = None,
        incremental_from: int | None = None,
    ):
        self.max_entries, self.budget_bytes, self.candidates = max_entries, budget_bytes, candidates
        self.incremental_from = INCREMENTAL_FROM if incremental_from is None else incremental_from
        self.max_touched, self.base_touched = max_touched, base_touched
        self.ct, self.cx = w0.shape[0], w0.shape[1] // 6
        self.w0, self.b0 = expand_weight(w0, self.cx)[0], pad_last(b0, pad_lanes(self.ct))
        self.cp = 0 if w1 is None else w1.shape[0]
        if w1 is not None and b1 is not None:
            self.cx2 = w1.shape[1] // 6 - self.ct
            self.w1, self.b1 = expand_weight(w1, self.cx2)[0], pad_last(b1, pad_lanes(self.cp))
            self.wq = own_weight(w1, self.cx2, self.ct)[0]
        self._spare: list[np.ndarray] = []  # buffers of dropped bases and references, free for reuse
        self._bases: OrderedDict[tuple[int, bytes], _Base] = OrderedDict()  # least recently used first
        self._refs: dict[int, list[_Reference]] = {}  # per slot, most recently used first
        self._often: dict[int, np.ndarray] = {}  # per slot: how often each object was in D, decaying
        self._ws = Workspace()  # outputs and a state's temporaries, reused from call to call
        self._bytes = 0
        names = ("plain", "derived", "reference", "special", "base_full", "base_patched", "full_rows")
        self.counts = dict.fromkeys(names, 0)
        """How each batch row was computed (``plain``: a full pass from a base, below
        ``incremental_from`` objects; ``special``: references with special objects), and the rows
        of derived states computed in full (for benchmarks and tests)."""

    def spawn(self) -> Block3Memo:
        """An empty memo of the same weights and limits (for another thread)."""
        memo = copy.copy(self)
        memo._spare, memo._bases, memo._refs, memo._often, memo._bytes = [], OrderedDict(), {}, {}, 0
        memo._ws = Workspace()
        memo.counts = dict.fromkeys(self.counts, 0)
        return memo

    def __len__(self) -> int:
        return len(self._bases) + sum(len(refs) for refs in self._refs.values())

    @property
    def nbytes(self) -> int:
        """Bytes held by the bases and references."""
        return self._bytes

    def _limits(self, n: int) -> tuple[int, int]:
        touched = self.max_touched if self.max_touched is not None else max(2, n // 8)
        base = self.base_touched if self.base_touched is not None else max(2, touched // 3)
        return touched, base

    # ------------------------------------------------------------------ storage
    def _buffer(self, size: int, dtype: np.dtype) -> np.ndarray:
        """A flat buffer (``Q``, its columns, a reference's extremes): a spare one of this size and
        type, else a new one."""
        for k, spare in enumerate(self._spare):
            if spare.size == size and spare.dtype == dtype:
                return self._spare.pop(k)
        return allocate(size, dtype)

    def _recycle(self, *arrays: np.ndarray | None) -> None:
        """Keep the flat buffers of dropped entries for `_buffer` (at most `SPARES`): fresh memory
        costs a page fault per page on first touch, and here as much again on the host (a new
        36 MB ``Q`` took longer than computing it)."""
        for a in arrays:
            if a is not None:
                self._spare.insert(0, a.reshape(-1))
        del self._spare[SPARES:]

    def _evict(self, keep: _Base) -> None:
        """Drop least recently used bases (with their references) while over a limit; never
        ``keep`` (the base just used)."""
        refs = sum(len(r) for r in self._refs.values())
        while len(self._bases) > 1 and (
            self._bytes > self.budget_bytes or len(self._bases) + refs > self.max_entries
        ):
            key, old = next(iter(self._bases.items()))
            if old is keep:
                self._bases.move_to_end(key)
                continue
            del self._bases[key]
            self._bytes -= old.nbytes
            slot_refs = self._refs.get(old.slot, [])
            dropped = [r for r in slot_refs if r.base is old]
            self._refs[old.slot] = [r for r in slot_refs if r.base is not old]
            if not self._refs[old.slot]:
                del self._refs[old.slot]
                self._often.pop(old.slot, None)
            self._bytes -= sum(r.nbytes for r in dropped)
            refs -= len(dropped)
            self._recycle(old.q, old.cols, *(r.top for r in dropped))

    def _add_reference(self, slot: int, ref: _Reference) -> None:
        refs = self._refs.setdefault(slot, [])
        refs.insert(0, ref)
        self._bytes += ref.nbytes
        while len(refs) > 2 * self.candidates:
            old = refs.pop()
            self._bytes -= old.nbytes
            self._recycle(old.top)

    def _columns(self, base: _Base, touched: np.ndarray) -> np.ndarray:
        """The base's ``Q`` columns (`_fill_columns`), with those of the ``touched`` objects made;
        none (an array without rows: ``Q`` is read in place) when they would not fit the budget
        beside ``Q``."""
        n, cp8 = base.n, pad_lanes(self.cp)
        if base.cols is None and 2 * base.q.nbytes > self.budget_bytes:
            return np.empty((0, 1), base.q.dtype)
        if base.cols is None:
            base.cols = self._buffer(n**3 * cp8, base.q.dtype).reshape(n, n * n * cp8)
            base.have_col = np.zeros(n, np.bool_)
            self._bytes += base.cols.nbytes
        assert base.have_col is not None
        missing = np.flatnonzero(touched & ~base.have_col)
        if missing.size:
            _fill_columns(base.q, n, cp8, missing, base.cols)
            base.have_col[missing] = True
        return base.cols

    # ------------------------------------------------------------------ bases
    def _state_pair(self, base: _Base, xb, x, b, objs, n) -> tuple[tuple, np.ndarray, np.ndarray]:
        """The state's pair terms of ``X`` (its base's, patched where the two differ) and the changed
        pairs and their objects (``changed``, ``endpoint``)."""
        changed, endpoint = np.zeros(n * n, np.bool_), np.zeros(n, np.bool_)
        if _pair_diff(xb, base.x, n, self.cx, changed, endpoint) == 0:
            return base.pair, changed, endpoint
        return (
            _patched(base.pair, x, self.w0, self.b0, b, objs, n, changed, self._ws, "pair"),
            changed,
            endpoint,
        )

    def _base_for(self, slot, xb, n, excl, x, b, objs) -> _Base:
        """The base of a new reference: an exact one, a near one within ``base_touched`` objects,
        or a new one (patched from the nearest, or computed in full)."""
        dt = self.b0.dtype
        ct8, cp8 = pad_lanes(self.ct), pad_lanes(self.cp)
        key = xb.tobytes() + n.to_bytes(4, "little") + bytes([excl])
        base = self._bases.get((slot, key))
        if base is not None:
            self._bases.move_to_end((slot, key))
            return base
        _, base_touched = self._limits(n)
        near: tuple[int, _Base, np.ndarray, np.ndarray] | None = None
        seen = 0
        for base in reversed(self._bases.values()):
            if seen == self.candidates:
                break
            if base.slot != slot or base.n != n or base.exclude_self != excl:
                continue
            seen += 1
            changed, endpoint = np.zeros(n * n, np.bool_), np.zeros(n, np.bool_)
            count = _pair_diff(xb, base.x, n, self.cx, changed, endpoint)
            if near is None or count < near[0]:
                near = (count, base, changed, endpoint)
        if near is not None and np.count_nonzero(near[3]) <= base_touched:
            base = near[1]
            self._bases.move_to_end((base.slot, base.key))
            return base
        t_size = n * n * ct8
        if near is not None and 18 * n * near[0] < n**3:  # a patched triple computes six T rows
            _, old, changed, endpoint = near
            pair = _patched(old.pair, x, self.w0, self.b0, b, objs, n, changed)
            q = self._buffer(old.q.size, dt)
            np.copyto(q, old.q)
            _patch_q(pair, self.wq, ct8, cp8, n, np.argwhere(changed.reshape(n, n)), q)
            ex_t, fa_t = old.ex_t.copy(), old.fa_t.copy()
            touched = endpoint
            self.counts["base_patched"] += 1
        else:
            pair = tuple(np.empty(n * n * ct8, dt) for _ in range(3))
            _pair_terms(x, self.w0, self.b0, b, objs, n, pair)
            q = self._buffer(n**3 * cp8, dt)
            tb, gh = self._ws.get("tb", (n**3 * ct8,), dt), self._ws.get("gh", (2 * n * n * cp8,), dt)
            _full_q(pair, self.wq, ct8, cp8, n, q, tb, gh)
            ex_t, fa_t = np.empty(t_size, dt), np.empty(t_size, dt)
            touched = np.ones(n, np.bool_)
            self.counts["base_full"] += 1
        _exists_t_rows(pair, n, excl, touched, ex_t, fa_t)
        base = _Base(slot, key, n, excl, xb.copy(), pair, q, ex_t, fa_t)
        self._bases[(slot, key)] = base
        self._bytes += base.nbytes
        return base

    # ------------------------------------------------------------------ one state
    def _t_of(self, base: _Base, pair, changed, endpoint, n, excl, b, objs, outs) -> None:
        """∃T and ∀T of a state into ``outs``: its base's, recomputed on the rows of the objects of
        changed pairs."""
        if not endpoint.any():
            _t_outputs(base.ex_t, base.fa_t, b, objs, n, outs)
            return
        ex_t, fa_t = (
            self._ws.get("ex_t", base.ex_t.shape, base.ex_t.dtype),
            self._ws.get("fa_t", base.fa_t.shape, base.fa_t.dtype),
        )
        np.copyto(ex_t, base.ex_t)
        np.copyto(fa_t, base.fa_t)
        _exists_t_rows(pair, n, excl, endpoint, ex_t, fa_t)
        _t_outputs(ex_t, fa_t, b, objs, n, outs)

    def _closest(self, slot, xb, x2b, n, excl) -> tuple[int, _Reference, np.ndarray, np.ndarray] | None:
        """The slot's recent reference with the smallest ``D`` (``(|D|, reference, D as a mask, the
        pairs where ``X'`` differs)``), or None when none has ``|D| <= max_touched``."""
        max_touched, _ = self._limits(n)
        best = None
        for ref in self._refs.get(slot, [])[: self.candidates]:
            base = ref.base
            if base.n != n or base.exclude_self != excl:
                continue
            marked2, cover = np.zeros(n * n, np.bool_), np.zeros(n, np.bool_)
            _mark_pairs(x2b, ref.x2, n, self.cx2, marked2)
            marked = marked2.copy()
            _mark_pairs(xb, ref.x, n, self.cx, marked)
            count = _greedy_cover(marked, n, max_touched if best is None else best[0] - 1, cover)
            if count <= max_touched and (best is None or count < best[0]):
                best = (count, ref, cover, marked2)
                if count <= 2:
                    break
        return best

    def _note(self, slot: int, n: int, touched: np.ndarray) -> None:
        """Count the objects of a state's ``D`` in its slot's history (decaying by `DECAY` per state)."""
        often = self._often.get(slot)
        if often is None or often.size != n:
            often = self._often[slot] = np.zeros(n)
        often *= DECAY
        often[touched] += 1.0

    def _special(self, slot: int, n: int) -> np.ndarray:
        """The slot's special objects (`_reference_rows`): up to `SPECIAL` of those most often in
        ``D`` lately, each in at least `SPECIAL_SHARE` of the states (in the decayed count)."""
        special = np.zeros(n, np.bool_)
        often = self._often.get(slot)
        if often is None or often.size != n:
            return special
        order = np.argsort(-often, kind="stable")[:SPECIAL]
        special[order[often[order] >= SPECIAL_SHARE / (1 - DECAY)]] = True
        return special

    def _row(self, slot, x, x2, b, objs, excl, outs) -> None:
        n = objs.size
        big_n = x.shape[1]
        dt = self.b0.dtype
        cp8 = pad_lanes(self.cp)
        xc = x[b] if n == big_n else np.ascontiguousarray(x[b][np.ix_(objs, objs)])
        xb = _bits(xc)
        if n < self.incremental_from:  # a full pass over Q (from a base): cheaper than bookkeeping
            base = self._base_for(slot, xb, n, excl, x, b, objs)
            pair, changed, endpoint = self._state_pair(base, xb, x, b, objs, n)
            self._t_of(base, pair, changed, endpoint, n, excl, b, objs, outs)
            pair2 = tuple(self._ws.get(f"plain{k}", (n * n * cp8,), dt) for k in range(3))
            _pair_terms(x2, self.w1, self.b1, b, objs, n, pair2)
            _plain_rows(base.q, pair, pair2, self.wq, n, changed, endpoint, excl, b, objs, outs)
            self.counts["plain"] += 1
            self._evict(base)
            return
        x2c = x2[b] if n == big_n else np.ascontiguousarray(x2[b][np.ix_(objs, objs)])
        x2b = _bits(x2c)
        best = self._closest(slot, xb, x2b, n, excl)
        if best is not None:
            _, ref, cover, marked2 = best
            base = ref.base
            pair, changed, endpoint = self._state_pair(base, xb, x, b, objs, n)
            if np.count_nonzero(endpoint) > self._limits(n)[0]:
                best = None  # its base drifted: ``Q`` recomputed on too many triples, a new reference
        if best is not None:
            refs = self._refs[slot]
            refs.remove(ref)
            refs.insert(0, ref)
            self._bases.move_to_end((base.slot, base.key))
            self._t_of(base, pair, changed, endpoint, n, excl, b, objs, outs)
            pair2 = _patched(ref.pair2, x2, self.w1, self.b1, b, objs, n, marked2, self._ws, "pair2")
            cols = self._columns(base, cover | ref.special)
            args = (pair, pair2, self.wq, n, changed, endpoint, excl, ref.top, cover, ref.special, self.cp)
            full_rows = _derived_rows(base.q, cols, *args, b, objs, outs)
            self.counts["full_rows"] += full_rows
            self.counts["derived"] += 1
            self._note(slot, n, cover)
            if full_rows * 4 > n * n:  # its extremes fall among the objects that change: a new one
                refs.remove(ref)
                self._bytes -= ref.nbytes
                self._recycle(ref.top)
            return
        base = self._base_for(slot, xb, n, excl, x, b, objs)
        pair, changed, endpoint = self._state_pair(base, xb, x, b, objs, n)
        self._t_of(base, pair, changed, endpoint, n, excl, b, objs, outs)
        pair2 = tuple(np.empty(n * n * cp8, dt) for _ in range(3))
        _pair_terms(x2, self.w1, self.b1, b, objs, n, pair2)
        top = self._buffer(n * n * TOP_SLOTS * cp8, dt)
        special = self._special(slot, n)
        args = (pair, pair2, self.wq, n, changed, endpoint, excl, special, top, b, objs, outs)
        _reference_rows(base.q, *args)
        own_x = base.x if not endpoint.any() else xb.copy()
        self._add_reference(slot, _Reference(base, own_x, x2b.copy(), pair2, special, top))
        self.counts["reference"] += 1
        self.counts["special"] += bool(special.any())
        self._evict(base)

    def __call__(
        self,
        x: np.ndarray,
        x2: np.ndarray | None,
        mask: np.ndarray,
        exclude_self: bool,
        slots: np.ndarray | None = None,
    ) -> tuple[np.ndarray, ...]:
        """``(∃T, ∀T)``, and ``(∃Y, ∀Y)`` with a second layer: channel-padded ``[B, N, N, C8]``
        arrays (padded lanes hold values that zero weights ignore; valid until the next call: they
        are reused), from ``x`` (``[B, N, N, C_x]``),
        ``x2`` (``[B, N, N, C_x2]``, the second layer's arity-2 input; None without a second
        layer) and the bool ``[B, N]`` mask of real objects. ``slots`` (int ``[B]``, default all 0)
        names each row's memo slot: rows of one search share a slot (its states are near one
        another), so that searches advanced together (lockstep batches) do not compete for
        references; the outputs do not depend on it."""
        x = np.ascontiguousarray(x)
        nb, big_n, _, _ = x.shape
        dt = self.b0.dtype
        ct8, cp8 = pad_lanes(self.ct), pad_lanes(self.cp)
        if (x2 is None) != (self.cp == 0):
            raise AgentError("x2 is the second layer's input: give it exactly when w1 was given")
        outs = tuple(
            self._ws.get(f"out{k}", (nb, big_n, big_n, ct8 if k < 2 else cp8), dt)
            for k in range(2 if x2 is None else 4)
        )
        excl = bool(exclude_self)
        if x2 is None:
            for b in range(nb):
                objs = np.flatnonzero(mask[b]).astype(np.int64)
                _t_only_row(x, self.w0, self.b0, b, objs, objs.size, excl, outs)
            return outs
        x2 = np.ascontiguousarray(x2)
        for b in range(nb):
            objs = np.flatnonzero(mask[b]).astype(np.int64)
            if objs.size == 0:
                for out in outs:
                    out[b] = 0.0
                continue
            # one thread: the second core computes the search's bounds meanwhile (agents.learned_heuristic)
            self._row(0 if slots is None else int(slots[b]), x, x2, b, objs, excl, outs)
        return outs
