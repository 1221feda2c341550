"""The operators applicable in a state, in the order Fast Downward's successor generator lists them.

Fast Downward lists applicable operators in the order of their (variable, value) preconditions
sorted lexicographically, ties by operator id: its successor generator is a decision tree over
those sorted lists (``task_utils/successor_generator_factory.cc``). We build the same tree as a
trie over sorted precondition propositions, flattened in preorder: each node tests one
proposition and lists the operators whose whole precondition it completes; its own operators
come before its children's, children in ascending proposition order, which is that
lexicographic order. A test that fails skips the node's subtree, so only a fraction of the
operators are ever looked at.

A node's test is "this fact holds", or, for a "none of those" value, "none of these facts
holds". The arrays are unsigned where the search engine indexes with them (no wrap-around
checks in numba).
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from pddlgym_sl.task import CompiledTask


class SuccessorGenerator(NamedTuple):
    """The flattened trie (see the module docstring); node 0 is the root, whose test always holds.

    Attributes:
        fact: int64 (n_nodes): the fact the node tests, -1 for a "none of those" test or the root.
        none_ptr, none_idx: uint32 CSR (n_nodes): the facts that must all be false ("none of
            those" tests; empty otherwise).
        skip: uint32 (n_nodes): the node after this node's subtree.
        ops_ptr, ops_idx: uint32 CSR (n_nodes): the operators a node completes, in order.
    """

    fact: np.ndarray
    none_ptr: np.ndarray
    none_idx: np.ndarray
    skip: np.ndarray
    ops_ptr: np.ndarray
    ops_idx: np.ndarray


class _Node:
    __slots__ = ("children", "ops", "prop")

    def __init__(self, prop: int) -> None:
        self.prop = prop
        self.children: dict[int, _Node] = {}
        self.ops: list[int] = []


def build_successor_generator(task: CompiledTask) -> SuccessorGenerator:
    """The successor generator of `task` (use `successor_generator`, which caches it)."""
    fdr = task.fdr
    root = _Node(-1)
    for o in fdr.succ_order.tolist():
        node = root
        for prop in sorted(fdr.pre_idx[fdr.pre_ptr[o] : fdr.pre_ptr[o + 1]].tolist()):
            child = node.children.get(prop)
            if child is None:
                child = node.children[prop] = _Node(prop)
            node = child
        node.ops.append(o)
    preorder: list[_Node] = []
    skip: list[int] = []

    def visit(node: _Node) -> None:
        index = len(preorder)
        preorder.append(node)
        skip.append(0)
        for child in node.children.values():  # created in ascending order (succ_order is sorted)
            visit(child)
        skip[index] = len(preorder)

    # the trie is as deep as the longest precondition; iterative would obscure a short recursion
    visit(root)
    var_of_prop = np.searchsorted(fdr.var_prop, np.arange(fdr.n_props), side="right") - 1
    facts, nones = [], []
    for node in preorder:
        f = int(fdr.prop_fact[node.prop]) if node.prop >= 0 else -1
        facts.append(f)
        nones.append(
            fdr.facts_of_var(int(var_of_prop[node.prop])).tolist() if node.prop >= 0 and f < 0 else []
        )
    none_ptr = np.zeros(len(preorder) + 1, dtype=np.uint32)
    none_ptr[1:] = np.cumsum([len(x) for x in nones])
    ops_ptr = np.zeros(len(preorder) + 1, dtype=np.uint32)
    ops_ptr[1:] = np.cumsum([len(n.ops) for n in preorder])
    return SuccessorGenerator(
        fact=np.array(facts, dtype=np.int64),
        none_ptr=none_ptr,
        none_idx=np.array([f for x in nones for f in x], dtype=np.uint32),
        skip=np.array(skip, dtype=np.uint32),
        ops_ptr=ops_ptr,
        ops_idx=np.array([o for n in preorder for o in n.ops], dtype=np.uint32),
    )


_CACHE: weakref.WeakKeyDictionary[CompiledTask, SuccessorGenerator] = weakref.WeakKeyDictionary()


def successor_generator(task: CompiledTask) -> SuccessorGenerator:
    """The cached `SuccessorGenerator` of `task`."""
    gen = _CACHE.get(task)
    if gen is None:
        gen = _CACHE[task] = build_successor_generator(task)
    return gen
