"""The fluent atoms the delete relaxation can reach, computed on the schemas without grounding them.

Fast Downward's translator finds the reachable atoms by grounding every action instance of its
Datalog program; on the IPC 2023 LT hard tasks those are tens of millions. The atoms themselves
are few (a childsnack task with 39M ground actions has 6,195 fluent atoms), and an atom only needs
*one* binding of the variables of the effect that adds it. So each schema's positive precondition
is split into the connected components of its variables (two literals are connected when they
share a variable): a component only has to be satisfiable (one binding: `task.EMIT_FIRST`), and
for each add effect, each component holding some of the effect's variables is enumerated up to
the bindings of those (the others existential: `task.Q_HEAD`, the join binding the effect's
variables first where it can); the effect's atoms are the product of its components' distinct
bindings. Childsnack's ``make_sandwich(s, b, c)`` adds atoms of ``s`` only: 410 bindings instead of
31 million; transport's ``drop`` adds ``at(p, l)`` and ``capacity(v, s2)``, each enumerated apart.

The fixpoint is semi-naive: after the first round, a query is re-run only through each of its
fluent literals in turn matched against the atoms new in the last round (`task.Query.delta`),
so a binding is found about when its last atom appears, not again in every later round
(sokoban's boxes reach one more cell per round, over a hundred rounds). Negative fluent
preconditions are ignored, as the translator ignores them; static ones, equalities and
inequalities within a component are kept. The result over-approximates the reachable atoms,
which is all its users need: the lifted states' fact ids and the WL graph's potential nodes.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pddlgym_sl.lifted.join import OVERFLOW, enumerate_bindings
from pddlgym_sl.lifted.query import Literal, Query, Schema, atom_codes, build_plan

__all__ = ["reachable_atoms"]

_FIRST_ROWS = 1 << 14


class _Component:
    """One connected component of a schema's positive precondition: its parameters (``local``:
    schema parameter -> the query's variable) and literals."""

    def __init__(self, schema: Schema, index: int, params: list[int], lits: list[Literal]) -> None:
        self.schema, self.index, self.params, self.lits = schema, index, params, lits
        self.local = {v: i for i, v in enumerate(params)}

    def query(self, head: list[int]) -> Query:
        """The component as a query whose head is the schema parameters `head` (its own)."""

        def term(t: int) -> int:
            return self.local[t] if t >= 0 else t

        def inside(terms: tuple[int, ...]) -> bool:
            return all(t < 0 or t in self.local for t in terms)

        schema = self.schema
        return Query(
            types=tuple(schema.types[v] for v in self.params),
            pre=tuple(Literal(lit.pred, tuple(term(t) for t in lit.terms)) for lit in self.lits),
            neg=tuple(
                Literal(lit.pred, tuple(term(t) for t in lit.terms))
                for lit in schema.neg
                if inside(lit.terms)
            ),
            equal=tuple((term(a), term(b)) for a, b in schema.equal if inside((a, b))),
            not_equal=tuple((term(a), term(b)) for a, b in schema.not_equal if inside((a, b))),
            head=tuple(self.local[v] for v in head),
            schema=self.index,
        )


def _components(schema: Schema, index: int) -> list[_Component]:
    """The components of `schema`'s positive precondition; a parameter in no positive literal is a
    component of its own (its type), and the variable-free literals form one component."""
    parent = list(range(len(schema.params)))

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for lit in schema.pre:
        vs = [t for t in lit.terms if t >= 0]
        for v in vs[1:]:
            parent[find(v)] = find(vs[0])
    groups: dict[int, list[int]] = {}
    for v in range(len(schema.params)):
        groups.setdefault(find(v), []).append(v)
    out = []
    for params in groups.values():
        lits = [lit for lit in schema.pre if any(t >= 0 and find(t) == find(params[0]) for t in lit.terms)]
        out.append(_Component(schema, index, params, lits))
    ground = [lit for lit in schema.pre if all(t < 0 for t in lit.terms)]
    if ground:
        out.append(_Component(schema, index, [], ground))
    return out


class _Part:
    """A query of the fixpoint: a component with the head it is enumerated up to (empty: is it
    satisfiable?), its full query and its semi-naive variants (predicate, query index)."""

    def __init__(self, component: _Component, head: list[int], n: int) -> None:
        self.component, self.head = component, head
        self.found = _Bindings(len(head), n)
        self.satisfied = False
        self.full = -1
        self.deltas: list[tuple[int, int]] = []
        self.fresh = np.zeros((0, len(head)), dtype=np.int64)


class _Bindings:
    """The distinct bindings of a component's head variables found so far (rows of object ids),
    kept as int64 keys where N^k fits (k head variables), as a set of tuples otherwise."""

    def __init__(self, width: int, n: int) -> None:
        self.width, self.n = width, n
        self.packed = width == 0 or float(n) ** width < 2.0**62
        self.keys = np.zeros(0, dtype=np.int64)
        self.rows = np.zeros((0, width), dtype=np.int64)
        self._set: set[tuple[int, ...]] = set()

    def _key(self, rows: np.ndarray) -> np.ndarray:
        key = np.zeros(len(rows), dtype=np.int64)
        for j in range(self.width):
            key = key * self.n + rows[:, j]
        return key

    def add(self, rows: np.ndarray) -> np.ndarray:
        """Record `rows`; return those not seen before (distinct)."""
        if self.packed:
            keys, first = np.unique(self._key(rows), return_index=True)
            new = ~_sorted_contains(self.keys, keys)
            if not new.any():
                return np.zeros((0, self.width), dtype=np.int64)
            self.keys = _merge(self.keys, keys[new])
            fresh = rows[first[new]]
        else:
            fresh_list = []
            for row in map(tuple, rows.tolist()):
                if row not in self._set:
                    self._set.add(row)
                    fresh_list.append(row)
            fresh = np.array(fresh_list, dtype=np.int64).reshape(len(fresh_list), self.width)
        self.rows = np.concatenate([self.rows, fresh])
        return fresh


def _sorted_contains(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Which of `needles` are in the sorted array `haystack` (binary search: the haystack grows to
    millions of keys, the needles of a round are few)."""
    if not len(haystack):
        return np.zeros(len(needles), dtype=bool)
    i = np.minimum(np.searchsorted(haystack, needles), len(haystack) - 1)
    return haystack[i] == needles


def _merge(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted union of the sorted arrays `a` and `b` (disjoint), in linear time."""
    return np.insert(a, np.searchsorted(a, b), b)


def _view_codes(codes: np.ndarray, view: np.ndarray, pw: np.ndarray) -> np.ndarray:
    """The sorted codes of `codes`' atoms of the view's predicate with its argument permutation
    (`task.JoinPlan.views`; what `join.build_views` computes for a state)."""
    a_max = len(pw) - 1
    pred, arity = int(view[0]), int(view[1])
    mine = codes[(codes // pw[a_max]) == pred]
    out = np.full(len(mine), pred * pw[a_max], dtype=np.int64)
    for i in range(arity):
        out += ((mine // pw[a_max - 1 - int(view[2 + i])]) % pw[1]) * pw[a_max - 1 - i]
    return np.sort(out)


def reachable_atoms(
    schemas: list[Schema], init_codes: np.ndarray, pw: np.ndarray, a_max: int, n_objects: int, parts: dict
) -> np.ndarray:
    """Sorted int64 codes of the fluent atoms reachable in the delete relaxation from the initial
    fluent atoms `init_codes` (the module docstring); `parts`: `task.build_plan`'s keyword
    arguments."""
    static_preds = parts["static_preds"]
    n = max(n_objects, 1)
    # per schema: one satisfiability part per component, and per add effect one part per component
    # holding some of its variables
    layout: list[tuple[list[_Part], list[tuple[Literal, list[_Part]]]]] = []
    every: list[_Part] = []
    for k, schema in enumerate(schemas):
        comps = _components(schema, k)
        sat = [_Part(c, [], n) for c in comps]
        effects = []
        for lit in schema.add:
            variables = {t for t in lit.terms if t >= 0}
            effects.append(
                (
                    lit,
                    [
                        _Part(c, [v for v in c.params if v in variables], n)
                        for c in comps
                        if variables & set(c.params)
                    ],
                )
            )
        layout.append((sat, effects))
        every += sat + [p for _, ps in effects for p in ps]
    queries: list[Query] = []
    for part in every:
        q = part.component.query(part.head)
        part.full = len(queries)
        queries.append(q)
        for i, lit in enumerate(q.pre):
            if lit.pred not in static_preds:
                part.deltas.append((lit.pred, len(queries)))
                queries.append(replace(q, delta=i))
    plan = build_plan(queries, **parts)
    width = 1 + max((len(p.component.params) for p in every), default=0)
    n_steps = max(len(plan.steps), 1)
    binding = np.zeros(max(width, 1), dtype=np.int64)
    pos = np.zeros(n_steps, dtype=np.int64)
    end = np.zeros(n_steps, dtype=np.int64)
    no_class = np.full(n, -1, dtype=np.int64)
    out = np.zeros((_FIRST_ROWS, width), dtype=np.int64)
    view_ptr = np.zeros(len(plan.views) + 1, dtype=np.int64)
    reached = np.unique(init_codes)
    views = [np.zeros(0, dtype=np.int64) for _ in plan.views]
    delta = reached
    first = True

    def run(q: int, view_codes: np.ndarray) -> np.ndarray:
        nonlocal out
        while True:
            k = enumerate_bindings(
                plan, q, q + 1, reached, len(reached), view_codes, view_ptr, binding, pos, end, no_class,
                no_class, False, True, out, 0,
            )  # fmt: skip
            if k != OVERFLOW:
                return out[:k, 1:].copy()
            out = np.zeros((2 * len(out), width), dtype=np.int64)

    while True:
        # the views of the reached atoms, grown by the last round's, then those atoms (`join._start`)
        views = [_merge(v, _view_codes(delta, row, pw)) for v, row in zip(views, plan.views, strict=True)]
        view_ptr[1:] = np.cumsum([len(v) for v in views])
        view_codes = np.concatenate([*views, delta])
        delta_preds = set((delta // pw[a_max]).tolist())
        new_atoms = []
        for sat, effects in layout:
            was_open = all(p.satisfied for p in sat)
            for part in sat + [p for _, ps in effects for p in ps]:
                if part.satisfied and not part.head:
                    continue
                runs = [part.full] if first else [q for pred, q in part.deltas if pred in delta_preds]
                rows = [run(q, view_codes) for q in runs]
                if not part.head:
                    part.satisfied = any(len(r) for r in rows)
                    continue
                cols = [part.component.local[v] for v in part.head]
                got = np.concatenate(rows)[:, cols] if rows else np.zeros((0, len(cols)), dtype=np.int64)
                part.fresh = part.found.add(got)
            if not all(p.satisfied for p in sat):
                continue
            opened = not was_open
            for lit, ps in effects:
                if opened or any(len(p.fresh) for p in ps):
                    new_atoms.append(_effect_codes(lit, ps, opened, pw))
        first = False
        found = np.unique(np.concatenate(new_atoms)) if new_atoms else reached[:0]
        delta = found[~np.isin(found, reached, assume_unique=True)]
        if not len(delta):
            return reached
        reached = _merge(reached, delta)


def _effect_codes(lit: Literal, ps: list[_Part], everything: bool, pw: np.ndarray) -> np.ndarray:
    """Codes of the new atoms of add effect `lit` over the product of its parts' bindings: those
    with at least one factor new this round, or all when `everything`."""
    if not ps:
        args = np.array([[-t - 1 for t in lit.terms]], dtype=np.int64).reshape(1, len(lit.terms))
        return atom_codes(lit.pred, args, pw)
    pieces = []
    for i, p in enumerate(ps):
        if everything:
            pieces.append(_product_codes(lit, [(q.head, q.found.rows) for q in ps], pw))
            break
        if len(p.fresh):
            factors = [(q.head, q.fresh if j == i else q.found.rows) for j, q in enumerate(ps)]
            pieces.append(_product_codes(lit, factors, pw))
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)


def _product_codes(lit: Literal, factors: list[tuple[list[int], np.ndarray]], pw: np.ndarray) -> np.ndarray:
    """Codes of ``lit`` over the product of the factors' rows (each factor: its variables and rows)."""
    sizes = [len(vals) for _, vals in factors]
    index = np.indices(sizes).reshape(len(sizes), -1)
    column: dict[int, np.ndarray] = {}
    for k, (mine, vals) in enumerate(factors):
        for j, v in enumerate(mine):
            column[v] = vals[index[k], j]
    count = index.shape[1]
    args = np.zeros((count, len(lit.terms)), dtype=np.int64)
    for i, t in enumerate(lit.terms):
        args[:, i] = column[t] if t >= 0 else -t - 1
    return atom_codes(lit.pred, args, pw)
