"""States packed at Fast Downward's density: each finite-domain variable in ceil(log2 |domain|) bits.

The search engine stores one state per node for duplicate detection, for the whole search, so its
bytes per state decide how many states fit in memory. The fact bit set (`pddlgym_sl.task.State`)
spends one bit per fact: a variable with k values costs k bits. Fast Downward packs each variable's
value index in ceil(log2 k) bits instead (``IntPacker``); this module does the same, in 32-bit
words, no variable straddling two words (first fit, widest variables first).

Packed states exist only inside the engine: a successor is packed by writing the operator's
effects (variable := value) into a copy of its parent's packed words, the expanded state is
unpacked once into its fact bit set for the successor generator and the heuristics, and a new
state's fact bit set comes from its parent's by the add and delete lists. Both views describe the
same state because every operator's add and delete lists are its finite-domain effects
(`pddlgym_sl.task`).
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np
from numba import njit

from pddlgym_sl.errors import PlanError
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.task import CompiledTask

_WORD_BITS = 32


class Packing(NamedTuple):
    """How a task's states are packed (arrays the engine reads).

    Attributes:
        var_word, var_shift: int32 / uint32 (n_vars): where each variable's bits are.
        var_mask: uint32 (n_vars): its bits' mask before shifting (2^bits - 1).
        value_fact: int32 (n_props): the fact of each proposition (value), -1 for "none of those";
            indexed by ``var_prop[v] + value`` (`pddlgym_sl.task.FDRLayout`).
        var_prop: int32 (n_vars + 1): the first proposition of each variable.
        eff_ptr: int32 (n_actions + 1): CSR over each operator's effects;
        eff_word, eff_clear, eff_set: int32 / uint32 / uint32: per effect, the word it writes, the
            mask of the variable's bits and the new value's bits (already shifted).
    """

    var_word: np.ndarray
    var_shift: np.ndarray
    var_mask: np.ndarray
    value_fact: np.ndarray
    var_prop: np.ndarray
    eff_ptr: np.ndarray
    eff_word: np.ndarray
    eff_clear: np.ndarray
    eff_set: np.ndarray

    @property
    def n_words(self) -> int:
        """uint32 words per packed state (at least 1)."""
        return max(1, int(self.var_word.max()) + 1) if len(self.var_word) else 1


def build_packing(task: CompiledTask) -> Packing:
    """The packing of `task`'s states (see the module docstring)."""
    fdr = task.fdr
    n_vars = fdr.n_vars
    sizes = np.diff(fdr.var_prop)
    bits = np.array([int(k - 1).bit_length() for k in sizes], dtype=np.int64)  # ceil(log2 k)
    var_word = np.zeros(n_vars, dtype=np.int32)
    var_shift = np.zeros(n_vars, dtype=np.uint32)
    free: list[int] = []  # free bits left in each word
    for v in sorted(range(n_vars), key=lambda v: (-bits[v], v)):
        b = int(bits[v])
        word = next((i for i, left in enumerate(free) if left >= b), None)
        if word is None:
            word = len(free)
            free.append(_WORD_BITS)
        var_word[v] = word
        var_shift[v] = _WORD_BITS - free[word]
        free[word] -= b
    var_mask = ((np.ones(n_vars, dtype=np.uint64) << bits.astype(np.uint64)) - 1).astype(np.uint32)
    prop_var = np.searchsorted(fdr.var_prop, np.arange(fdr.n_props), side="right") - 1
    eff_word, eff_clear, eff_set = [], [], []
    for p in fdr.eff_idx.tolist():
        v = int(prop_var[p])
        value = p - int(fdr.var_prop[v])
        eff_word.append(var_word[v])
        eff_clear.append(int(var_mask[v]) << int(var_shift[v]))
        eff_set.append(value << int(var_shift[v]))
    return Packing(
        var_word=var_word,
        var_shift=var_shift,
        var_mask=var_mask,
        value_fact=fdr.prop_fact.astype(np.int32),
        var_prop=fdr.var_prop.astype(np.int32),
        eff_ptr=fdr.eff_ptr.astype(np.int32),
        eff_word=np.array(eff_word, dtype=np.int32),
        eff_clear=np.array(eff_clear, dtype=np.uint32),
        eff_set=np.array(eff_set, dtype=np.uint32),
    )


def pack_state(task: CompiledTask, packing: Packing, words: np.ndarray) -> np.ndarray:
    """The packed uint32 words of a fact bit set (`PlanError` if some variable has no value)."""
    fdr = task.fdr
    out = np.zeros(packing.n_words, dtype=np.uint32)
    true = set(np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")).tolist())
    for v in range(fdr.n_vars):
        first = int(fdr.var_prop[v])
        values = [x for x in range(int(fdr.var_prop[v + 1]) - first) if int(fdr.prop_fact[first + x]) in true]
        if not values:
            none = int(fdr.var_none[v])
            if none < 0:
                raise PlanError(f"the state gives variable {v} of task {task.name!r} no value")
            values = [none - first]
        out[packing.var_word[v]] |= np.uint32(values[0] << int(packing.var_shift[v]))
    return out


@njit(cache=CACHE, inline="always")
def unpack(packed, pk, out):
    """Write the fact bit set of `packed` into the uint64 words `out`."""
    for w in range(out.shape[0]):
        out[w] = np.uint64(0)
    one = np.uint64(1)
    for v in range(pk.var_word.shape[0]):
        value = (packed[pk.var_word[v]] >> pk.var_shift[v]) & pk.var_mask[v]
        f = pk.value_fact[pk.var_prop[v] + np.int64(value)]
        if f >= 0:
            out[f >> 6] |= one << np.uint64(f & 63)


@njit(cache=CACHE, inline="always")
def apply_packed(packed, a, pk, out):
    """Write the packed successor of `packed` under operator `a` into `out`."""
    for w in range(out.shape[0]):
        out[w] = packed[w]
    for k in range(pk.eff_ptr[a], pk.eff_ptr[a + 1]):
        w = pk.eff_word[k]
        out[w] = (out[w] & ~pk.eff_clear[k]) | pk.eff_set[k]


@njit(cache=CACHE, inline="always")
def hash_words(words):
    """A 64-bit hash of uint32 words (per word a multiply-xorshift step, then splitmix64's
    finaliser): linear probing needs well-spread low bits."""
    x = np.uint64(0x9E3779B97F4A7C15)
    for w in words:
        x = (x ^ np.uint64(w)) * np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(29)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


_CACHE: weakref.WeakKeyDictionary[CompiledTask, tuple[Packing, np.ndarray]] = weakref.WeakKeyDictionary()


def task_packing(task: CompiledTask) -> tuple[Packing, np.ndarray]:
    """The task's `Packing` and its packed initial state (cached per task)."""
    cached = _CACHE.get(task)
    if cached is None:
        packing = build_packing(task)
        cached = _CACHE[task] = (packing, pack_state(task, packing, task.init.words))
    return cached
