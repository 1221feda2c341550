"""The predicate vocabulary of a domain, and every ground atom of a task as index arrays.

All four encoders speak about *atoms* of the lifted domain, not only about the grounder's facts:

- `Schema` is the domain's vocabulary: its predicates in declaration order, followed by one unary
  *type predicate* per non-root type (``place`` in visitall), so that a typed object carries its
  type as a static unary atom. It depends on the domain only, which is what makes a learned model
  transferable across the problems of a domain.
- `AtomTable` grounds that vocabulary on one `CompiledTask`: the *static atoms* (true in every
  state but compiled away by the grounder: ``not-eq``, ``connected``, ``car``, type atoms, ...)
  and the *facts* (the task's state variables), each as a predicate index and a row of object
  indices into ``task.objects``. Encoders precompute their per-step index arrays from it once.

A type predicate takes the type's name, or ``type-<name>`` when the domain already declares a
predicate of that name with another arity (a unary predicate of the same name is simply reused).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from pddlgym_sl.pddl import Domain
from pddlgym_sl.task import CompiledTask, parse_atom

__all__ = ["AtomTable", "Schema", "batch_bits", "state_bits"]


def state_bits(state: np.ndarray | bytes, n_facts: int) -> np.ndarray:
    """The true-fact vector (uint8 0/1, length `n_facts`) of one packed state (`State` or words)."""
    raw = np.frombuffer(state, dtype=np.uint8) if isinstance(state, bytes) else state.view(np.uint8)
    return np.unpackbits(raw, count=n_facts, bitorder="little")


def batch_bits(states: np.ndarray, n_facts: int) -> np.ndarray:
    """The (n, n_facts) uint8 0/1 fact matrix of a (n, n_words) uint64 batch of packed states."""
    states = np.ascontiguousarray(states, dtype=np.uint64)
    raw = states.view(np.uint8).reshape(states.shape[0], 8 * states.shape[1])  # no -1: n may be 0
    return np.unpackbits(raw, axis=1, count=n_facts, bitorder="little")


@dataclass(frozen=True)
class Schema:
    """A domain's predicate vocabulary (domain predicates, then type predicates).

    Attributes:
        domain_name: the PDDL domain name.
        predicates: predicate names; the position is the predicate index used by the encoders.
        arities: arity of each predicate.
        type_predicates: non-root type name -> the predicate standing for "is of this type".
        type_closure: type name -> the non-root types an object of that type belongs to (itself and
            its ancestors, root excluded), as predicate names.
        n_constants: number of domain constants (they are objects of every problem).
        actions: the action schemas' names in declaration order; the position is the *schema id*
            of a ground action in `pddlgym_sl.envs.actions.action_table`.
        action_arities: the number of parameters of each action schema.
    """

    domain_name: str
    predicates: tuple[str, ...]
    arities: tuple[int, ...]
    type_predicates: dict[str, str]
    type_closure: dict[str, tuple[str, ...]]
    n_constants: int = 0
    actions: tuple[str, ...] = ()
    action_arities: tuple[int, ...] = ()

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_domain(cls, domain: Domain) -> Schema:
        """Build from a validated `Domain` (as returned by `pddlgym_sl.pddl.parse_domain`)."""
        names = list(domain.predicates)
        arities = [len(args) for args in domain.predicates.values()]
        declared = dict(zip(names, arities, strict=True))
        parent: dict[str, str | None] = {"object": None, **domain.types}
        type_predicates: dict[str, str] = {}
        for t in domain.types:  # declaration order
            pred = t if declared.get(t, 1) == 1 else f"type-{t}"
            type_predicates[t] = pred
            if pred not in declared:
                declared[pred] = 1
                names.append(pred)
                arities.append(1)
        closure: dict[str, tuple[str, ...]] = {}
        for t in parent:
            chain, seen, cur = [], set(), t
            while cur is not None and cur not in seen:
                seen.add(cur)
                if cur in type_predicates:
                    chain.append(type_predicates[cur])
                cur = parent.get(cur)
            closure[t] = tuple(chain)
        return cls(
            domain_name=domain.name,
            predicates=tuple(names),
            arities=tuple(arities),
            type_predicates=type_predicates,
            type_closure=closure,
            n_constants=len(domain.constants),
            actions=tuple(domain.actions),
            action_arities=tuple(len(params) for params in domain.actions.values()),
        )

    @classmethod
    def from_domain_file(cls, path: str | Path) -> Schema:
        """Parse a domain file and build its schema."""
        from pddlgym_sl.pddl import parse_domain

        return cls.from_domain(parse_domain(path))

    @classmethod
    def from_task(cls, task: CompiledTask) -> Schema:
        """The schema of the task's domain: parsed from ``task.domain_file`` when the task was loaded
        from disk; otherwise rebuilt from ``task.predicates`` and the object types of this task
        (a flat type hierarchy, so prefer `from_domain_file` for typed domains; the action schemas
        are then those that have ground actions, sorted by name)."""
        if task.domain_file is not None:
            return cls.from_domain_file(task.domain_file)
        names = list(task.predicates)
        arities = list(task.predicates.values())
        type_predicates: dict[str, str] = {}
        for t in sorted(set(task.object_types.values()) - {"object"}):
            pred = t if task.predicates.get(t, 1) == 1 else f"type-{t}"
            type_predicates[t] = pred
            if pred not in task.predicates:
                names.append(pred)
                arities.append(1)
        closure = {t: (p,) for t, p in type_predicates.items()}
        signatures = dict(parse_atom(a) for a in sorted(task.actions))  # name -> args of one action
        return cls(
            task.domain_name,
            tuple(names),
            tuple(arities),
            type_predicates,
            closure,
            actions=tuple(signatures),
            action_arities=tuple(len(args) for args in signatures.values()),
        )

    # ----------------------------------------------------------------- derived
    @property
    def n_predicates(self) -> int:
        return len(self.predicates)

    @property
    def max_arity(self) -> int:
        return max(self.arities, default=0)

    @property
    def max_action_arity(self) -> int:
        return max(self.action_arities, default=0)

    @cached_property
    def action_index(self) -> dict[str, int]:
        """Action schema name -> schema id."""
        return {a: i for i, a in enumerate(self.actions)}

    @cached_property
    def index(self) -> dict[str, int]:
        """Predicate name -> predicate index."""
        return {p: i for i, p in enumerate(self.predicates)}

    @cached_property
    def by_arity(self) -> dict[int, tuple[int, ...]]:
        """Arity -> predicate indices of that arity (ascending), for the arities present only."""
        out: dict[int, list[int]] = {}
        for i, k in enumerate(self.arities):
            out.setdefault(k, []).append(i)
        return {k: tuple(v) for k, v in sorted(out.items())}

    @cached_property
    def position_in_arity(self) -> np.ndarray:
        """Per predicate, its position among the predicates of the same arity."""
        pos = np.zeros(self.n_predicates, dtype=np.int64)
        for preds in self.by_arity.values():
            pos[list(preds)] = np.arange(len(preds))
        return pos

    def atom_table(self, task: CompiledTask) -> AtomTable:
        """Ground this vocabulary on `task` (see `AtomTable`)."""
        return AtomTable.build(self, task)


@dataclass(frozen=True, eq=False)
class AtomTable:
    """Every atom an observation of one task may contain, as index arrays.

    Static atoms are listed in ``task.static_atoms`` order followed by the type atoms (one per
    object and non-root type of its type closure, by type predicate, then object); facts are in
    ``task.facts`` (fact index) order. Argument rows are padded with -1 beyond the atom's arity.

    Attributes:
        objects: the task's objects (``task.objects``), whose positions the argument arrays use.
        static_names: names of the static atoms, e.g. ``"(not-eq l0 l1)"`` / ``"(place loc-x0-y0)"``.
        static_pred, static_args: predicate index (n_static,) and arguments (n_static, max_arity).
        fact_pred, fact_args: the same for the task's facts (n_facts,), (n_facts, max_arity).
    """

    objects: tuple[str, ...]
    static_names: tuple[str, ...]
    static_pred: np.ndarray
    static_args: np.ndarray
    fact_pred: np.ndarray
    fact_args: np.ndarray

    @classmethod
    def build(cls, schema: Schema, task: CompiledTask) -> AtomTable:
        obj_index = {o: i for i, o in enumerate(task.objects)}
        width = max(schema.max_arity, 1)

        def rows(atoms: list[tuple[str, tuple[str, ...]]], what: str) -> tuple[np.ndarray, np.ndarray]:
            pred = np.empty(len(atoms), dtype=np.int64)
            args = np.full((len(atoms), width), -1, dtype=np.int64)
            for i, (p, a) in enumerate(atoms):
                try:
                    pred[i] = schema.index[p]
                    args[i, : len(a)] = [obj_index[o] for o in a]
                except KeyError as exc:
                    from pddlgym_sl.errors import PDDLError

                    raise PDDLError(
                        f"{what} ({p} {' '.join(a)}) of task {task.name!r} uses {exc.args[0]!r}, which is "
                        f"not a predicate of domain {schema.domain_name!r} or an object of the task",
                        file=task.problem_file,
                    ) from None
            return pred, args

        static = [parse_atom(a) for a in task.static_atoms]
        seen = set(task.static_atoms)
        for tpred in dict.fromkeys(schema.type_predicates.values()):
            for o in task.objects:
                if tpred in schema.type_closure.get(task.object_types.get(o, "object"), ()):
                    name = f"({tpred} {o})"
                    if name not in seen:
                        seen.add(name)
                        static.append((tpred, (o,)))
        static_pred, static_args = rows(static, "static atom")
        fact_pred, fact_args = rows(list(task.fact_atoms), "fact")
        names = tuple(f"({p}{''.join(' ' + o for o in a)})" for p, a in static)
        return cls(task.objects, names, static_pred, static_args, fact_pred, fact_args)

    @property
    def n_static(self) -> int:
        return len(self.static_pred)

    @property
    def n_facts(self) -> int:
        return len(self.fact_pred)
