"""Interchangeable objects of a state: the classes `join` binds in canonical order only.

Swapping two objects a and b maps a state to itself, with the goal and the static atoms, when
every atom that mentions one of them has its swapped image among the atoms. That holds exactly
when a and b have the same *signature*: the multiset of the atoms (fluent, static, goal: tagged
apart) that mention each, with the object replaced by a placeholder, and the same type (a and b
then never share an atom: the signature of a would name b). Signatures equal for every pair of
a class make every permutation of the class an automorphism of the state, so the successors of
actions that differ by such a permutation are isomorphic, and only one of each needs to be
generated (`join`'s module docstring). Childsnack's 410 not-yet-made sandwiches are one class,
its breads and fillings two classes each (gluten-free or not): the 39 million ground actions
applicable in the initial state of its largest hard task come down to a few dozen.

A signature is a sum of 64-bit hashes of its atoms (a multiset hash); the static and goal part is
computed once per task (`SymmetryArgs`), the fluent part per state (`object_classes`). Domain
constants are never interchangeable (schemas name them). Where no two objects agree on type,
static atoms and goal, no state has a class (`SymmetryArgs.possible` is False) and nothing is
computed per state.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from pddlgym_sl.lifted.task import LiftedTask
from pddlgym_sl.numba_cache import CACHE

__all__ = ["SymmetryArgs", "classes_of", "object_classes", "symmetry_args"]

_JIT = {"cache": CACHE, "nogil": True}
_FLUENT, _STATIC, _GOAL, _GOAL_NEG, _TYPE = 1, 2, 3, 4, 5
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class SymmetryArgs(NamedTuple):
    """What `classes_of` needs: ``static_hash`` uint64 (N): each object's type, static and goal
    signature; ``candidate`` int64: the objects some other object agrees with on it (the only
    ones a state can make interchangeable), ascending; ``arity`` int64 per predicate; ``pw``:
    N^0..N^A; ``work`` uint64 (N) and ``order`` int64 (N): scratch."""

    static_hash: np.ndarray
    candidate: np.ndarray
    arity: np.ndarray
    pw: np.ndarray
    work: np.ndarray
    order: np.ndarray

    @property
    def possible(self) -> bool:
        return len(self.candidate) > 0


@njit(cache=CACHE, inline="always")
def _mix(h, x):
    """splitmix64's finaliser over ``h + x``: a well-spread 64-bit hash step."""
    z = h + np.uint64(x) * _GOLDEN + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(**_JIT)
def _add_atoms(codes, n_codes, tag, arity, pw, h):
    """Add to ``h[o]`` the hash of each atom of ``codes[:n_codes]`` mentioning object o, with o
    replaced by a placeholder (N) wherever it occurs."""
    a_max = pw.shape[0] - 1
    n = pw[1]
    args = np.empty(a_max, dtype=np.int64)
    for k in range(n_codes):
        code = codes[k]
        pred = code // pw[a_max]
        m = arity[pred]
        for i in range(m):
            args[i] = (code // pw[a_max - 1 - i]) % n
        for i in range(m):
            o = args[i]
            seen = False
            for j in range(i):
                if args[j] == o:
                    seen = True
                    break
            if seen:
                continue
            x = _mix(np.uint64(tag), pred)
            for j in range(m):
                x = _mix(x, n if args[j] == o else args[j])
            h[o] += x


@njit(**_JIT)
def classes_of(sym, codes, n_codes, cls, rank):
    """Fill ``cls`` (class index, -1 for an object interchangeable with none) and ``rank`` (position
    in its class, by object index) of the state whose atom codes are ``codes[:n_codes]``."""
    h = sym.work
    for o in range(h.shape[0]):
        h[o] = sym.static_hash[o]
        cls[o] = -1
        rank[o] = 0
    _add_atoms(codes, n_codes, _FLUENT, sym.arity, sym.pw, h)
    m = sym.candidate.shape[0]
    if m < 2:
        return
    keys = np.empty(m, dtype=np.uint64)
    for i in range(m):
        keys[i] = h[sym.candidate[i]]
    order = np.argsort(keys, kind="mergesort")  # stable: ties in object order
    c = 0
    i = 0
    while i < m:
        j = i + 1
        while j < m and keys[order[j]] == keys[order[i]]:
            j += 1
        if j - i > 1:
            for r in range(i, j):
                o = sym.candidate[order[r]]
                cls[o] = c
                rank[o] = r - i
            c += 1
        i = j


def symmetry_args(task: LiftedTask) -> SymmetryArgs:
    """The task's part of the signatures (types, static atoms, goal) and its candidate objects."""
    n = max(len(task.objects), 1)
    pw = task.plan.pw
    arity = np.array([task.predicates[p] for p in task.pred_names], dtype=np.int64)
    h = np.zeros(n, dtype=np.uint64)
    types = {t: i for i, t in enumerate(sorted(set(task.object_types.values())))}
    for o, name in enumerate(task.objects):
        h[o] = _mix(np.uint64(_TYPE), types[task.object_types[name]])
    _add_atoms(task.plan.static_codes, len(task.plan.static_codes), _STATIC, arity, pw, h)
    for tag, ids in ((_GOAL, task.goal), (_GOAL_NEG, task.goal_neg)):
        codes = task.fact_code[ids.astype(np.int64)]
        _add_atoms(codes, len(codes), tag, arity, pw, h)
    constants = {i for i, o in enumerate(task.objects) if o in task.constants}
    values, counts = np.unique(h, return_counts=True)
    shared = set(values[counts > 1].tolist())
    candidate = np.array(
        [o for o in range(len(task.objects)) if int(h[o]) in shared and o not in constants], dtype=np.int64
    )
    return SymmetryArgs(h, candidate, arity, pw, np.zeros(n, dtype=np.uint64), np.zeros(n, dtype=np.int64))


def object_classes(
    task: LiftedTask, state: np.ndarray, sym: SymmetryArgs | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(class, rank) per object of a state (sorted fact ids); see `classes_of`."""
    sym = symmetry_args(task) if sym is None else sym
    n = max(len(task.objects), 1)
    cls, rank = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64)
    codes = task.fact_code[np.asarray(state, dtype=np.int64)]
    classes_of(sym, codes, len(codes), cls, rank)
    return cls, rank
