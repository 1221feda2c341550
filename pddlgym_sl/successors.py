"""Compiled (numba) kernels for STRIPS state transitions on packed bit sets.

A state is a row of ``uint64`` words: fact ``f`` is bit ``f & 63`` of word ``f >> 6``.
These kernels are the hot path of search and of `PDDLEnv.step` (every expansion calls
`expand`), which is why they are compiled rather than written with Python sets.
Actions are given in CSR form: the preconditions of action ``a`` are
``pre_idx[pre_ptr[a]:pre_ptr[a + 1]]`` (same for the negative preconditions ``neg``, which must
be false, and for the add and delete lists).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pddlgym_sl.numba_cache import CACHE

_ONE = np.uint64(1)


@njit(cache=CACHE, inline="always")
def holds(words, f):
    """True when fact `f` is set in the packed state `words`."""
    return (words[f >> 6] >> np.uint64(f & 63)) & _ONE != 0


@njit(cache=CACHE)
def is_applicable(words, a, pre_ptr, pre_idx, neg_ptr, neg_idx):
    """True when action `a`'s preconditions hold in `words` (one action; see `action_mask`)."""
    for k in range(pre_ptr[a], pre_ptr[a + 1]):
        if not holds(words, pre_idx[k]):
            return False
    for k in range(neg_ptr[a], neg_ptr[a + 1]):
        if holds(words, neg_idx[k]):
            return False
    return True


@njit(cache=CACHE)
def action_mask(words, pre_ptr, pre_idx, neg_ptr, neg_idx):
    """int8 vector over all actions: 1 where applicable.

    The test is written out here rather than calling `is_applicable` per action: numba's call
    (even inlined, with its early returns) made this ten times slower, and the environment calls
    it on every step."""
    n_actions = pre_ptr.shape[0] - 1
    out = np.zeros(n_actions, dtype=np.int8)
    for a in range(n_actions):
        ok = True
        for k in range(pre_ptr[a], pre_ptr[a + 1]):
            if not holds(words, pre_idx[k]):
                ok = False
                break
        if ok:
            for k in range(neg_ptr[a], neg_ptr[a + 1]):
                if holds(words, neg_idx[k]):
                    ok = False
                    break
        if ok:
            out[a] = 1
    return out


@njit(cache=CACHE)
def applicable_actions(words, pre_ptr, pre_idx, neg_ptr, neg_idx):
    """Indices of the actions whose preconditions hold in `words` (ascending)."""
    return np.flatnonzero(action_mask(words, pre_ptr, pre_idx, neg_ptr, neg_idx)).astype(np.int32)


@njit(cache=CACHE, inline="always")
def _apply_into(src, dst, a, add_ptr, add_idx, del_ptr, del_idx):
    for w in range(src.shape[0]):
        dst[w] = src[w]
    for k in range(del_ptr[a], del_ptr[a + 1]):
        f = del_idx[k]
        dst[f >> 6] &= ~(_ONE << np.uint64(f & 63))
    for k in range(add_ptr[a], add_ptr[a + 1]):
        f = add_idx[k]
        dst[f >> 6] |= _ONE << np.uint64(f & 63)


@njit(cache=CACHE)
def apply_action(words, a, add_ptr, add_idx, del_ptr, del_idx):
    """Successor of `words` under action `a` (deletes first, then adds; no applicability check)."""
    out = np.empty_like(words)
    _apply_into(words, out, a, add_ptr, add_idx, del_ptr, del_idx)
    return out


@njit(cache=CACHE)
def satisfies(words, goal, goal_neg):
    """True when every fact of `goal` holds in `words` and no fact of `goal_neg` does."""
    for k in range(goal.shape[0]):
        if not holds(words, goal[k]):
            return False
    for k in range(goal_neg.shape[0]):
        if holds(words, goal_neg[k]):
            return False
    return True


@njit(cache=CACHE)
def expand(words, pre_ptr, pre_idx, neg_ptr, neg_idx, add_ptr, add_idx, del_ptr, del_idx, goal, goal_neg):
    """All successors of one state: (actions int32[k], states uint64[k, n_words], is_goal bool[k])."""
    acts = applicable_actions(words, pre_ptr, pre_idx, neg_ptr, neg_idx)
    k = acts.shape[0]
    succ = np.empty((k, words.shape[0]), dtype=np.uint64)
    is_goal = np.empty(k, dtype=np.bool_)
    for i in range(k):
        _apply_into(words, succ[i], acts[i], add_ptr, add_idx, del_ptr, del_idx)
        is_goal[i] = satisfies(succ[i], goal, goal_neg)
    return acts, succ, is_goal
