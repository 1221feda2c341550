"""A fitted WL colour table (`WLFeaturizer.config`, wlplan's JSON) as arrays for compiled lookups.

What wlplan 2.1.0 stores (``src/feature_generator/features.cpp``, ``feature_generators/wl.cpp``,
``neighbour_containers/wl_neighbour_container.cpp``; read, not copied): per refinement iteration
t = 0..T a map from a colour's *key* to its feature index, and the features are numbered
0..n_features - 1 over all iterations together.

- t = 0: the key is an ILG node's initial colour, one int: 0 for an object (the ILG does not tell
  constants apart), ``1 + 5 p + d`` for an atom of predicate p (its position in the config's
  predicate list) with fact description d (``graph_generators/ilg.hpp``: true / false positive
  goal 0 / 1, true / false negative goal 2 / 3, non-goal 4);
- t >= 1: ``[l_1, c_1, n_1, ..., l_m, c_m, n_m, c]``: the node's neighbours as (edge label, colour
  at t - 1, count) triples sorted by (label, colour), the count 1 under a set hash
  (``multiset_hash`` false) and the multiplicity under a multiset hash, then the node's own
  colour at t - 1. The JSON writes a key as ``"l_1.c_1.n_1. ... .c"``.

A key missing from the table is an *unseen* colour: it is not counted, and every node whose own
or neighbour's colour is unseen is unseen in the later iterations (`kernels`). Pruning (wlplan's
``pruning`` option) only removes entries and renumbers the features, so a pruned table is read
the same way.

`ColourTable` holds the iteration-0 map as a dense array and the other keys, each prefixed by its
iteration, in one open-addressing hash table built by the same compiled hash function the
lookups use (`key_hash`). Keys shaped like an atom's (labels 0..k-1 in order, each once, k <= 3:
the arguments of an atom, or an object with one neighbour per label) are indexed a second time
packed into two words (`pack_atom_key`), so that the atoms, most of the nodes a state changes,
are looked up with one hash of two words and no key to build or compare element by element.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from agents.errors import AgentError
from pddlgym_sl.numba_cache import CACHE

__all__ = [
    "FACT_DESCRIPTIONS",
    "MAX_PACKED_ARITY",
    "UNSEEN",
    "ColourTable",
    "colour_table",
    "key_hash",
    "key_hash_at",
    "lookup",
    "lookup_atom",
    "lookup_in",
    "mix_atom_key",
    "pack_atom_key",
]

UNSEEN = -1
"""wlplan's ``UNSEEN_COLOUR``: a colour the table does not know."""
FACT_DESCRIPTIONS = 5
"""ILG fact descriptions per predicate (``ILGFactDescription``): T_POS_GOAL, F_POS_GOAL,
T_NEG_GOAL, F_NEG_GOAL, NON_GOAL."""

_JIT = {"cache": CACHE, "nogil": True, "error_model": "numpy"}
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


class ColourTable(NamedTuple):
    """The colour table's arrays (what the kernels read; built by `colour_table`).

    ``initial[c]`` is the feature of initial colour c (`UNSEEN` when absent; colours beyond the
    array are unseen). Key k of the later iterations is ``data[ptr[k]:ptr[k + 1]]`` (its
    iteration first, then wlplan's key), hashed to ``hashes[k]`` and mapped to feature
    ``colour[k]``; ``slots`` (a power of two in size) holds key numbers, -1 for empty.
    ``config`` is int64 [iterations, multiset (0/1), n_features, packed index (0/1)]. The packed index of the
    atom-shaped keys: ``atom_keys[k]`` (two uint64 words), ``atom_colour[k]``, ``atom_slots``."""

    initial: np.ndarray
    data: np.ndarray
    ptr: np.ndarray
    hashes: np.ndarray
    colour: np.ndarray
    slots: np.ndarray
    config: np.ndarray
    atom_keys: np.ndarray
    atom_colour: np.ndarray
    atom_slots: np.ndarray


@njit(**{**_JIT, "inline": "always"})
def key_hash(key, n):
    """FNV-1a over the first `n` entries of `key`, with a final avalanche (so that the low bits
    that index the slots depend on every entry)."""
    return key_hash_at(key, 0, n)


@njit(**{**_JIT, "inline": "always"})
def key_hash_at(a, start, n):
    """`key_hash` of the key ``a[start:start + n]``."""
    h = _FNV_OFFSET
    for i in range(start, start + n):
        h = (h ^ np.uint64(a[i])) * _FNV_PRIME
    h ^= h >> np.uint64(29)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(32)
    return h


@njit(**{**_JIT, "inline": "always"})
def lookup_in(slots, ptr, data, hashes, colour, key, n):
    """`lookup` on the table's arrays (what the hot loops call: taking arrays out of a
    NamedTuple costs reference counting on every call)."""
    h = key_hash(key, n)
    mask = np.uint64(slots.shape[0] - 1)
    s = h & mask
    while True:
        k = slots[s]
        if k < 0:
            return UNSEEN
        if hashes[k] == h and ptr[k + 1] - ptr[k] == n:
            start = ptr[k]
            same = True
            for i in range(n):
                if data[start + i] != key[i]:
                    same = False
                    break
            if same:
                return colour[k]
        s = (s + np.uint64(1)) & mask


@njit(**{**_JIT, "inline": "always"})
def lookup(table, key, n):
    """The feature of the key ``key[:n]`` (iteration first), or `UNSEEN`."""
    return lookup_in(table.slots, table.ptr, table.data, table.hashes, table.colour, key, n)


_PACK_BITS = 21
MAX_PACKED_FEATURES = 1 << _PACK_BITS
"""Colour tables with fewer features than this get the packed atom index (2M: every table here)."""
MAX_PACKED_ARITY = 3


@njit(**{**_JIT, "inline": "always"})
def pack_atom_key(t, own, c0, c1, c2, arity):
    """The two words of the atom-shaped key of iteration t: own colour and argument colours
    c0..c(arity-1) (the others 0), each below `MAX_PACKED_FEATURES`."""
    w0 = np.uint64(own) | (np.uint64(c0) << np.uint64(21)) | (np.uint64(c1) << np.uint64(42))
    w1 = np.uint64(c2) | (np.uint64(t) << np.uint64(21)) | (np.uint64(arity) << np.uint64(40))
    return w0, w1


@njit(**{**_JIT, "inline": "always"})
def mix_atom_key(w0, w1):
    """The hash of a packed atom key (`pack_atom_key`)."""
    h = (w0 ^ (w1 * np.uint64(0x9E3779B97F4A7C15))) * np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(31)
    h *= np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(29))


@njit(**{**_JIT, "inline": "always"})
def lookup_atom(atom_slots, atom_keys, atom_colour, w0, w1):
    """The feature of a packed atom-shaped key (`pack_atom_key`), or `UNSEEN`."""
    mask = np.uint64(atom_slots.shape[0] - 1)
    s = mix_atom_key(w0, w1) & mask
    while True:
        k = atom_slots[s]
        if k < 0:
            return UNSEEN
        if atom_keys[k, 0] == w0 and atom_keys[k, 1] == w1:
            return atom_colour[k]
        s = (s + np.uint64(1)) & mask


@njit(**_JIT)
def _fill_slots(data, ptr, hashes, slots):
    mask = np.uint64(slots.shape[0] - 1)
    for k in range(ptr.shape[0] - 1):
        n = ptr[k + 1] - ptr[k]
        h = key_hash(data[ptr[k] : ptr[k + 1]], n)
        hashes[k] = h
        s = h & mask
        while slots[s] >= 0:
            s = (s + np.uint64(1)) & mask
        slots[s] = k


@njit(**_JIT)
def _fill_atom_index(data, ptr, colour, packable, atom_keys, atom_colour, atom_slots):
    """Index the keys whose shape is an atom's (see the module docstring)."""
    mask = np.uint64(atom_slots.shape[0] - 1)
    n = 0
    for k in range(ptr.shape[0] - 1):
        start, length = ptr[k], ptr[k + 1] - ptr[k]
        arity = (length - 2) // 3
        if not packable or arity > MAX_PACKED_ARITY:
            continue
        atom_like = True
        c = np.zeros(MAX_PACKED_ARITY, dtype=np.int64)
        for r in range(arity):
            if data[start + 1 + 3 * r] != r or data[start + 3 + 3 * r] != 1:
                atom_like = False
                break
            c[r] = data[start + 2 + 3 * r]
        if not atom_like:
            continue
        w0, w1 = pack_atom_key(data[start], data[start + length - 1], c[0], c[1], c[2], arity)
        atom_keys[n, 0] = w0
        atom_keys[n, 1] = w1
        atom_colour[n] = colour[k]
        s = mix_atom_key(w0, w1) & mask
        while atom_slots[s] >= 0:
            s = (s + np.uint64(1)) & mask
        atom_slots[s] = n
        n += 1
    return n


def _field(config: dict[str, Any], name: str) -> Any:
    try:
        return config[name]
    except (KeyError, TypeError):
        raise AgentError(f"WL colour table: the featurizer config has no {name!r} field") from None


def colour_table(config: dict[str, Any]) -> tuple[ColourTable, list[str]]:
    """The arrays of a fitted colour table (`WLFeaturizer.config`) and its predicate names in the
    order that numbers the initial colours. Raises `AgentError` naming the field for a table the
    kernels cannot reproduce (another feature or graph kind, a malformed key)."""
    for name, expected in (("feature_name", "wl"), ("graph_representation", "ilg")):
        if _field(config, name) != expected:
            raise AgentError(
                f"WL colour table: {name}={_field(config, name)!r}; the compiled kernels compute "
                f"{name}={expected!r} only"
            )
    iterations = _field(config, "iterations")
    hashes = _field(config, "colour_hash")
    if not isinstance(iterations, int) or iterations < 0 or len(hashes) != iterations + 1:
        raise AgentError(
            f"WL colour table: iterations={iterations!r} with {len(hashes)} colour_hash layers "
            "(expected iterations + 1)"
        )
    multiset = bool(_field(config, "multiset_hash"))
    try:
        predicates = [str(name) for name, _ in config["domain"]["predicates"]]
    except (KeyError, TypeError, ValueError):
        raise AgentError("WL colour table: domain.predicates must be [name, arity] pairs") from None

    def parse(key: str, layer: int) -> list[int]:
        try:
            return [int(x) for x in key.split(".")]
        except ValueError:
            raise AgentError(f"WL colour table: colour_hash[{layer}] has a malformed key {key!r}") from None

    features: list[int] = []
    initial_pairs = []
    for key, colour in hashes[0].items():
        (value,) = parse(key, 0)
        if value < 0:
            raise AgentError(f"WL colour table: colour_hash[0] key {key!r} is not an ILG initial colour")
        initial_pairs.append((value, int(colour)))
        features.append(int(colour))
    size = max((v for v, _ in initial_pairs), default=-1) + 1
    initial = np.full(size, UNSEEN, dtype=np.int64)
    for value, colour in initial_pairs:
        initial[value] = colour
    rows: list[list[int]] = []
    for layer in range(1, iterations + 1):
        for key, colour in hashes[layer].items():
            parts = parse(key, layer)
            if len(parts) % 3 != 1:
                raise AgentError(
                    f"WL colour table: colour_hash[{layer}] key {key!r} is not l.c.n triples + c"
                )
            rows.append([layer, *parts])
            features.append(int(colour))
    n_features = len(features)
    if sorted(features) != list(range(n_features)):
        raise AgentError("WL colour table: the colours are not the features 0..n-1, one key each")
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    data = np.array([x for r in rows for x in r], dtype=np.int64)
    n_slots = 1
    while n_slots < 2 * max(len(rows), 1):
        n_slots *= 2
    slots = np.full(n_slots, -1, dtype=np.int64)
    key_hashes = np.zeros(len(rows), dtype=np.uint64)
    _fill_slots(data, ptr, key_hashes, slots)
    colours = np.array(features[len(initial_pairs) :], dtype=np.int64)
    atom_keys = np.zeros((len(rows), 2), dtype=np.uint64)
    atom_colour = np.zeros(len(rows), dtype=np.int64)
    atom_slots = np.full(n_slots, -1, dtype=np.int64)
    packable = n_features < MAX_PACKED_FEATURES
    n_atom = _fill_atom_index(data, ptr, colours, packable, atom_keys, atom_colour, atom_slots)
    table = ColourTable(
        initial=initial,
        data=data,
        ptr=ptr,
        hashes=key_hashes,
        colour=colours,
        slots=slots,
        config=np.array([iterations, int(multiset), n_features, int(packable)], dtype=np.int64),
        atom_keys=atom_keys[:n_atom].copy(),
        atom_colour=atom_colour[:n_atom].copy(),
        atom_slots=atom_slots,
    )
    return table, predicates
