"""Two quadratic steps of Fast Downward's translator, made linear with the same results.

Loading a task with many objects spent most of its time in two steps of the translator whose
cost grows with the square of the objects; this module replaces them, for the duration of one
translator call (`linear_steps`), by functions with the same results in the same order.

**Mutex groups.** The translator turns each invariant it finds into groups of atoms that are
mutually exclusive (``{(at c0 ?X), (on c0)}`` for each car of ferry), and instantiates the counted
argument ``?X`` of each group by trying every object of the task (`fact_groups.expand_group`):
one pass over the objects per group. Tasks have about as many groups as objects, so that step is
quadratic in the objects: with 5,000 cars of ferry it took 73 of the 88 seconds of `load_task`
(under cProfile), and it grows fourfold with each doubling.

`instantiate_groups` returns the same lists, atom for atom and in the same order (objects in
the task's object order), from an index of the reachable atoms by their other arguments, built
once in time linear in the atoms.

**Variable order.** For each strongly connected component of the causal graph, the translator
keeps the edges that stay inside it by testing each edge's target for membership in the
component, a list (`variable_order.CausalGraph.calculate_topological_pseudo_sort`): one pass
over the component per edge. Ferry's cars and ferry form one component, so that was quadratic
too (2.8 of 52 s with 20,000 cars, under cProfile). `linear_steps` hands it the same lists in a
`list` subclass whose membership test is a set lookup; nothing else changes.

`tests/test_translator_patches.py` checks both against the translator's own code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

COUNTED = "?X"
"""The translator's name for the counted argument of a group's atoms."""


def instantiate_groups(groups: list[list[Any]], task: Any, reachable_facts: set[Any]) -> list[list[Any]]:
    """The translator's ``fact_groups.instantiate_groups(groups, task, reachable_facts)``: each group's
    atoms with ``?X`` replaced by every object (in ``task.objects`` order) that makes a reachable
    atom, atoms without ``?X`` kept when reachable."""
    from fast_downward.translate import pddl

    atom_class = pddl.Atom
    wanted = {
        (fact.predicate, fact.args.index(COUNTED))
        for group in groups
        for fact in group
        if COUNTED in fact.args
    }
    # (predicate, counted position, the other arguments) -> names at the counted position
    index: dict[tuple[str, int, tuple[str, ...]], list[str]] = {}
    if wanted:
        positions_of: dict[str, list[int]] = {}
        for pred, pos in wanted:
            positions_of.setdefault(pred, []).append(pos)
        for fact in reachable_facts:
            if fact.__class__ is not atom_class:
                continue
            args = fact.args
            for pos in positions_of.get(fact.predicate, ()):
                if pos < len(args):
                    key = (fact.predicate, pos, args[:pos] + args[pos + 1 :])
                    index.setdefault(key, []).append(args[pos])
    order: dict[str, list[int]] = {}  # object name -> its positions in task.objects
    for k, obj in enumerate(task.objects):
        order.setdefault(obj.name, []).append(k)

    result = []
    for group in groups:
        atoms = []
        for fact in group:
            args = fact.args
            if COUNTED not in args:
                if fact in reachable_facts:
                    atoms.append(fact)
                continue
            pos = args.index(COUNTED)
            names = index.get((fact.predicate, pos, args[:pos] + args[pos + 1 :]), ())
            ks = sorted(k for name in set(names) for k in order.get(name, ()))
            atoms.extend(
                atom_class(fact.predicate, [*args[:pos], task.objects[k].name, *args[pos + 1 :]]) for k in ks
            )
        result.append(atoms)
    return result


class SetMembershipList(list):
    """A list whose ``in`` is a set lookup (its items must be hashable and the list unchanged)."""

    def __init__(self, items: Any) -> None:
        super().__init__(items)
        self._members = frozenset(self)

    def __contains__(self, item: object) -> bool:
        return item in self._members


@contextlib.contextmanager
def linear_steps() -> Iterator[None]:
    """Use `instantiate_groups` and components with `SetMembershipList` membership in the
    translator while the block runs; the translator's own functions are restored afterwards."""
    from fast_downward.translate import fact_groups, variable_order

    graph = variable_order.CausalGraph
    original_groups = fact_groups.instantiate_groups
    original_sccs = graph.get_strongly_connected_components

    def components(self: Any) -> list[SetMembershipList]:
        return [SetMembershipList(scc) for scc in original_sccs(self)]

    fact_groups.instantiate_groups = instantiate_groups
    graph.get_strongly_connected_components = components
    try:
        yield
    finally:
        fact_groups.instantiate_groups = original_groups
        graph.get_strongly_connected_components = original_sccs
