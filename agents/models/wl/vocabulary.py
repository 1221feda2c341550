"""Our tasks in `wlplan`'s vocabulary: the domain's predicates, a task's objects, goal and atoms.

`wlplan` builds the ILG of a state from a ``Problem`` (objects, goal atoms) and a ``State`` (its
atoms). We hand it the atoms the project's own ILG encoder shows (`pddlgym_sl.envs.encoders.ilg`):
the state's true facts plus the task's *static atoms* (``connected``, ``not-eq``, the type atoms
of the `Schema`, ...), which the grounder compiles away but which carry most of a domain's
structure. Atom objects are made once per task, so a state is a list lookup over its true facts.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
from _wlplan.planning import Atom, Domain, Predicate, Problem, State

from pddlgym_sl.envs.encoders.schema import Schema, batch_bits
from pddlgym_sl.pddl import parse_domain
from pddlgym_sl.task import CompiledTask

__all__ = ["TaskAtoms", "wl_domain"]


@lru_cache(maxsize=16)
def wl_domain(domain_file: str) -> tuple[Domain, Schema]:
    """The `wlplan` domain of a domain file (its predicates, the `Schema`'s type predicates and
    its constants, which WL tells apart) and the file's `Schema`."""
    parsed = parse_domain(Path(domain_file))
    schema = Schema.from_domain(parsed)
    predicates = [Predicate(p, k) for p, k in zip(schema.predicates, schema.arities, strict=True)]
    constants = sorted(parsed.constants)
    # wlplan 2.1.0 numbers predicate colours in the order it is given but saves (and reloads) the
    # predicates sorted: given in its own sorted order, a saved colour table reloads to the same
    # features. Its sort order is the one it puts them in.
    in_its_order = list(Domain(schema.domain_name, predicates, [], [], constants).predicates)
    return Domain(schema.domain_name, in_its_order, [], [], constants), schema


class TaskAtoms:
    """One task's objects, goal and atoms as `wlplan` objects.

    Args:
        task: the compiled task.
        domain_file: its domain file (defaults to ``task.domain_file``).

    Attributes:
        problem: the ``wlplan`` problem (objects, positive and negative goal atoms).
    """

    def __init__(self, task: CompiledTask, domain_file: str | Path | None = None) -> None:
        domain, schema = wl_domain(str(domain_file or task.domain_file))
        table = schema.atom_table(task)
        predicates = {p.name: p for p in domain.predicates}
        by_index = [predicates[name] for name in schema.predicates]
        arity = np.asarray(schema.arities)
        objects = task.objects

        def atoms(pred: np.ndarray, args: np.ndarray) -> list[Atom]:
            return [
                Atom(by_index[p], [objects[o] for o in row[: arity[p]]])
                for p, row in zip(pred.tolist(), args.tolist(), strict=True)
            ]

        self.n_facts = task.n_facts
        self.fact_atoms = atoms(table.fact_pred, table.fact_args)
        self.static_atoms = atoms(table.static_pred, table.static_args)
        goal = [self.fact_atoms[f] for f in task.goal.tolist()]
        goal_neg = [self.fact_atoms[f] for f in task.goal_neg.tolist()]
        self.problem = Problem(domain, list(objects), goal, goal_neg)

    def states(self, words: np.ndarray) -> list[State]:
        """The `wlplan` states of a (n, n_words) uint64 batch of packed states."""
        bits = batch_bits(np.atleast_2d(words), self.n_facts)
        fact_atoms, statics = self.fact_atoms, self.static_atoms
        return [State([fact_atoms[f] for f in np.flatnonzero(row).tolist()] + statics) for row in bits]
