"""One expansion in Fast Downward's successor order, for searches written in Python.

`pddlgym_sl.search.engine` generates successors inside its compiled loop; searches that drive
their own open lists from Python (`pddlgym_sl.search.confidence`) call `expand_ordered` once per
expansion and get the same successors in the same order (the task's `SuccessorGenerator`), so
their searches can be compared with the engine's node for node.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.search.successor_generator import successor_generator
from pddlgym_sl.task import CompiledTask

__all__ = ["Expander"]


@njit(cache=CACHE)
def _expand(
    words, fact, none_ptr, none_idx, skip, ops_ptr, ops_idx, add_ptr, add_idx, del_ptr, del_idx, ops, out
):
    """Write the applicable operators of `words` (generator order) to `ops` and their successors to
    `out`; return how many. The trie walk is the engine's (`engine.run`)."""
    one = np.uint64(1)
    n_words = words.shape[0]
    n = 0
    i = 0
    while i < fact.shape[0]:
        f = fact[i]
        if f >= 0:
            holds = (words[f >> 6] >> np.uint64(f & 63)) & one != 0
        else:
            holds = True
            for j in range(none_ptr[i], none_ptr[i + 1]):
                nf = none_idx[j]
                if (words[nf >> 6] >> np.uint64(nf & 63)) & one != 0:
                    holds = False
                    break
        if not holds:
            i = skip[i]
            continue
        for j in range(ops_ptr[i], ops_ptr[i + 1]):
            a = ops_idx[j]
            ops[n] = a
            for w in range(n_words):
                out[n, w] = words[w]
            for k in range(del_ptr[a], del_ptr[a + 1]):
                df = del_idx[k]
                out[n, df >> 6] &= ~(one << np.uint64(df & 63))
            for k in range(add_ptr[a], add_ptr[a + 1]):
                af = add_idx[k]
                out[n, af >> 6] |= one << np.uint64(af & 63)
            n += 1
        i += 1
    return n


class Expander:
    """Successors of a task's states in Fast Downward's order (one compiled call per expansion)."""

    def __init__(self, task: CompiledTask) -> None:
        self.generator = successor_generator(task)
        self.effects = tuple(
            a.astype(np.uint32) for a in (task.add_ptr, task.add_idx, task.del_ptr, task.del_idx)
        )
        self.ops = np.empty(max(task.n_actions, 1), dtype=np.int64)
        self.out = np.empty((max(task.n_actions, 1), task.n_words), dtype=np.uint64)

    def __call__(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(operators, successor states) of the packed state `words`; views valid until the next call."""
        n = _expand(words, *self.generator, *self.effects, self.ops, self.out)
        return self.ops[:n], self.out[:n]
