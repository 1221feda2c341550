"""Conjunctive queries over atom codes: the schemas, the queries and their join plans.

The atom codes are `task.LiftedTask`'s: with N objects and A the largest predicate arity, the atom
``p(a_0 .. a_k-1)`` has the code ``p N^A + sum_i a_i N^(A-1-i)`` (`atom_codes`), so codes sort
like (predicate, arguments) and the atoms whose first m arguments are fixed form one range of a
sorted code array.

**Join plans.** Each schema's positive preconditions become *steps* in a greedy order: fully
bound literals first, then literals sharing a bound variable (no cross products), then (for a
query with a head, `Query`) literals binding a head variable, then the fewest expected matches
given the variables already bound. A static literal is looked up in a copy of its relation
sorted with its bound arguments first, so that every bound argument narrows the binary search;
a fluent literal by its bound prefix in the state, or in a *view* of the state (its atoms of the
predicate with the arguments permuted, bound ones first, built once per state) when its bound
arguments are not a prefix; a parameter in no positive precondition is enumerated over its
type. Negative preconditions, equalities and inequalities are *constraints*, each checked right
after the step that binds its last variable. Parameters are type-checked as they are bound.
The plan is a few int64 tables (`JoinPlan`), run by the kernels of `join`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from pddlgym_sl.errors import PDDLError

__all__ = [
    "JoinPlan",
    "JoinStats",
    "LiftedError",
    "Literal",
    "Query",
    "Schema",
    "atom_codes",
    "build_plan",
]

# step kinds, constraint kinds, term modes (`JoinPlan`)
FLUENT, STATIC, DOMAIN, VIEW, DELTA = 0, 1, 2, 3, 4
NEG_FLUENT, NEG_STATIC, EQUAL, NOT_EQUAL = 0, 1, 2, 3
COMPARE, BIND = 0, 1
# columns of JoinPlan.steps: kind, predicate, arity, bound prefix, relation (static), view
# (fluent, by a permutation) or type mask (domain), the constraints to check after the step,
# then per position its term, its mode and (for a bound variable) its place in the binding order
S_KIND, S_PRED, S_ARITY, S_PREFIX, S_REL, S_CON0, S_CON1, S_TERMS = range(8)
# columns of JoinPlan.queries: variables, steps, constraints checked before the first step, offset
# of the query's variables in var_mask / bind_order, last step binding a head variable (-1: emit
# every binding, -2: stop at the first), the schema the query belongs to
Q_VARS, Q_STEP0, Q_STEP1, Q_CON0, Q_CON1, Q_VAR0, Q_HEAD, Q_SCHEMA = range(8)
EMIT_ALL, EMIT_FIRST = -1, -2
MAX_CODE = 1 << 62


class LiftedError(PDDLError):
    """A task the lifted planner cannot represent (atom codes beyond 64 bits), or a lifted planning
    failure on valid input."""


@dataclass(frozen=True)
class Literal:
    """An atom of a schema or goal: predicate index and terms (a variable index >= 0, or an object
    as ``-(object + 1)``)."""

    pred: int
    terms: tuple[int, ...]


@dataclass(frozen=True)
class Schema:
    """An action schema with its terms numbered (see `Literal`).

    Attributes:
        name: the action name; params: the variable names; types: per parameter, the index of
            its type mask (`LiftedTask.type_masks`).
        pre, neg: positive and negative preconditions; equal, not_equal: (term, term) pairs.
        add, delete: the effects (PDDL semantics: deletes first, then adds).
    """

    name: str
    params: tuple[str, ...]
    types: tuple[int, ...]
    pre: tuple[Literal, ...]
    neg: tuple[Literal, ...]
    equal: tuple[tuple[int, int], ...]
    not_equal: tuple[tuple[int, int], ...]
    add: tuple[Literal, ...]
    delete: tuple[Literal, ...]


@dataclass(frozen=True)
class Query:
    """A conjunctive query run by `join.enumerate_bindings`: variables with their type masks,
    positive literals, constraints (negative literals, (in)equalities), the variables whose
    bindings matter (`head`: None for all; the rest are existential), the schema it belongs to,
    and `delta`: the index of a positive literal matched against the *new* atoms only (semi-naive
    evaluation, `reachability`; the literal then comes first), or -1."""

    types: tuple[int, ...]
    pre: tuple[Literal, ...]
    neg: tuple[Literal, ...] = ()
    equal: tuple[tuple[int, int], ...] = ()
    not_equal: tuple[tuple[int, int], ...] = ()
    head: tuple[int, ...] | None = None
    schema: int = 0
    delta: int = -1


class JoinPlan(NamedTuple):
    """Queries as int64 tables for the kernels of `join` (see the module docstring).

    ``queries`` (n_queries, 8), ``steps`` (n_steps, 8 + 3 A), ``cons`` (n_cons, 3 + A): rows as
    the ``Q_*``, ``S_*`` columns say. ``var_mask`` / ``bind_order``: per query (from its
    ``Q_VAR0``) each variable's type mask and the variables in the order the steps bind them.
    ``masks`` uint8 (n_masks, N): type membership; ``dom_ptr`` / ``dom_obj``: each mask's objects.
    ``rel_ptr`` / ``rel_codes``: the static relations, each sorted in its argument permutation;
    ``static_codes``: every static atom's code, sorted. ``views`` (n_views, 2 + A): predicate,
    arity and argument permutation of each fluent *view*: a state's atoms of the predicate with
    their arguments permuted and sorted again (`join.build_views`, once per state), for the
    fluent literals whose bound arguments are not a prefix. ``pw``: N^0 .. N^A."""

    queries: np.ndarray
    steps: np.ndarray
    cons: np.ndarray
    var_mask: np.ndarray
    bind_order: np.ndarray
    masks: np.ndarray
    dom_ptr: np.ndarray
    dom_obj: np.ndarray
    rel_ptr: np.ndarray
    rel_codes: np.ndarray
    static_codes: np.ndarray
    views: np.ndarray
    pw: np.ndarray


class JoinStats:
    """Sizes the join order is chosen by: per predicate its atoms and distinct values per position
    (static relations exactly; fluent ones as in the initial state, for states, or as their
    argument types allow (`widen`), for the reachability analysis, whose relations grow far beyond
    the initial state's: sokoban's robot is at one cell, but reaches thousands)."""

    def __init__(self, atoms: dict[int, np.ndarray], n_preds: int) -> None:
        self.size = np.ones(n_preds)
        self.distinct: dict[int, list[int]] = {}
        for p, args in atoms.items():
            self.size[p] = max(len(args), 1)
            self.distinct[p] = [max(len(np.unique(args[:, i])), 1) for i in range(args.shape[1])]

    def widen(self, fluent: dict[int, list[int]]) -> JoinStats:
        """These statistics with each fluent predicate (id -> its argument types' sizes) as large as
        its types allow."""
        out = JoinStats({}, len(self.size))
        out.size, out.distinct = self.size.copy(), dict(self.distinct)
        for p, sizes in fluent.items():
            out.size[p] = max(float(np.prod(sizes)), 1.0)
            out.distinct[p] = [max(k, 1) for k in sizes]
        return out

    def estimate(self, lit: Literal, bound: set[int]) -> float:
        """Expected candidates of `lit` given the `bound` variables (each bound position narrows the
        search: static relations and fluent views put them first)."""
        distinct = self.distinct.get(lit.pred, [1] * len(lit.terms))
        est = float(self.size[lit.pred])
        for i, t in enumerate(lit.terms):
            if t < 0 or t in bound:
                est /= distinct[i]
        return est


def atom_codes(pred: int, args: np.ndarray, pw: np.ndarray) -> np.ndarray:
    """int64 codes of the atoms ``pred(row)`` of an (n, k) array of object ids (``pw`` = N^0..N^A)."""
    a_max = len(pw) - 1
    out = np.full(len(args), pred * pw[a_max], dtype=np.int64)
    for i in range(args.shape[1]):
        out += args[:, i].astype(np.int64) * pw[a_max - 1 - i]
    return out


def _fixed(t: int, bound: set[int]) -> bool:
    return t < 0 or t in bound


def build_plan(
    queries: list[Query],
    *,
    static_preds: frozenset[int],
    static_atoms: dict[int, np.ndarray],
    stats: JoinStats,
    n_objects: int,
    arity: int,
    masks: np.ndarray,
) -> JoinPlan:
    """Compile `queries` into a `JoinPlan` (the module docstring) over a task's static predicates,
    their atoms (predicate -> (n, arity) object ids), the statistics the join order is chosen by,
    its number of objects, largest predicate arity and type masks (uint8 (n_masks, n_objects))."""
    n, a_max = max(n_objects, 1), arity
    pw = np.array([n**k for k in range(a_max + 1)], dtype=np.int64)
    width = S_TERMS + 3 * a_max
    rel_index: dict[tuple[int, tuple[int, ...]], int] = {}
    rel_parts: list[np.ndarray] = []

    def relation(pred: int, perm: tuple[int, ...]) -> int:
        key = (pred, perm)
        if key not in rel_index:
            args = static_atoms.get(pred, np.zeros((0, len(perm)), dtype=np.int64))
            rel_index[key] = len(rel_parts)
            rel_parts.append(np.sort(atom_codes(pred, args[:, list(perm)], pw)))
        return rel_index[key]

    view_index: dict[tuple[int, tuple[int, ...]], int] = {}

    def view(pred: int, perm: tuple[int, ...]) -> int:
        return view_index.setdefault((pred, perm), len(view_index))

    q_rows, step_rows, con_rows, var_mask, bind_order = [], [], [], [], []

    def con_row(kind: int, pred: int, terms: tuple[int, ...]) -> list[int]:
        row = [kind, pred, len(terms), *terms]
        return row + [0] * (3 + a_max - len(row))

    for q in queries:
        n_vars = len(q.types)
        head = set(range(n_vars)) if q.head is None else set(q.head)
        pending = list(q.pre)
        bound: set[int] = set()
        order: list[int] = []
        steps: list[tuple[int, Literal | int]] = []
        if q.delta >= 0:
            lit = pending.pop(q.delta)
            steps.append((DELTA, lit))
            for t in lit.terms:
                if t >= 0 and t not in bound:
                    bound.add(t)
                    order.append(t)
        while pending:
            best = min(
                range(len(pending)),
                key=lambda k: (
                    not all(_fixed(t, bound) for t in pending[k].terms),
                    # no cross products: a literal sharing a bound variable first (any, at first)
                    bool(bound) and not bound & set(pending[k].terms),
                    # then a head's variables: the rest is existential (one binding)
                    q.head is not None and bool(head - bound) and not (head - bound) & set(pending[k].terms),
                    stats.estimate(pending[k], bound),
                    pending[k].pred not in static_preds,
                ),
            )
            lit = pending.pop(best)
            steps.append((STATIC if lit.pred in static_preds else FLUENT, lit))
            for t in lit.terms:
                if t >= 0 and t not in bound:
                    bound.add(t)
                    order.append(t)
        free = sorted((v for v in range(n_vars) if v not in bound), key=lambda v: masks[q.types[v]].sum())
        for v in free:
            steps.append((DOMAIN, v))
            bound.add(v)
            order.append(v)
        # constraints: checked after the step that binds their last variable (-1: before any step)
        constraints = [
            (NEG_STATIC if lit.pred in static_preds else NEG_FLUENT, lit.pred, lit.terms) for lit in q.neg
        ]
        constraints += [(EQUAL, -1, pair) for pair in q.equal]
        constraints += [(NOT_EQUAL, -1, pair) for pair in q.not_equal]
        place = {v: k for k, v in enumerate(order)}
        step_of_var: dict[int, int] = {}
        seen: set[int] = set()
        for k, (_, item) in enumerate(steps):
            for t in item.terms if isinstance(item, Literal) else (item,):
                if t >= 0 and t not in seen:
                    seen.add(t)
                    step_of_var[t] = k
        by_step: dict[int, list[list[int]]] = {}
        for kind, pred, terms in constraints:
            at = max((step_of_var[t] for t in terms if t >= 0), default=-1)
            by_step.setdefault(at, []).append(con_row(kind, pred, terms))
        last_head = max((step_of_var[v] for v in head if v in step_of_var), default=-1)
        q_con0 = len(con_rows)
        con_rows.extend(by_step.get(-1, []))
        q_step0 = len(step_rows)
        known: set[int] = set()
        for k, (kind, item) in enumerate(steps):
            row = [0] * width
            row[S_KIND] = kind
            row[S_CON0] = len(con_rows)
            con_rows.extend(by_step.get(k, []))
            row[S_CON1] = len(con_rows)
            if kind == DOMAIN:
                assert isinstance(item, int)
                row[S_PRED], row[S_ARITY], row[S_REL] = -1, 1, q.types[item]
                row[S_TERMS], row[S_TERMS + a_max], row[S_TERMS + 2 * a_max] = item, BIND, place[item]
                known.add(item)
                step_rows.append(row)
                continue
            assert isinstance(item, Literal)
            positions = list(range(len(item.terms)))
            # bound positions first, so that all of them narrow the search: a static relation
            # sorted so once, a fluent literal through a view when its bound positions are not
            # already a prefix
            moved = sorted(positions, key=lambda i: not _fixed(item.terms[i], known))
            if kind == DELTA:
                pass  # first: nothing bound but constants, filtered as it is scanned
            elif kind == STATIC:
                positions = moved
                row[S_REL] = relation(item.pred, tuple(positions))
            elif moved != positions:
                positions = moved
                kind = VIEW
                row[S_KIND], row[S_REL] = VIEW, view(item.pred, tuple(positions))
            prefix = 0
            for i in positions:
                if not _fixed(item.terms[i], known):
                    break
                prefix += 1
            row[S_PRED], row[S_ARITY], row[S_PREFIX] = item.pred, len(item.terms), prefix
            for slot, i in enumerate(positions):
                t = item.terms[i]
                row[S_TERMS + slot] = t
                if t >= 0 and t not in known:
                    row[S_TERMS + a_max + slot] = BIND
                    row[S_TERMS + 2 * a_max + slot] = place[t]
                    known.add(t)
                else:
                    row[S_TERMS + a_max + slot] = COMPARE
            step_rows.append(row)
        head_step = EMIT_ALL if q.head is None else (EMIT_FIRST if not head else last_head)
        q_rows.append(
            [
                n_vars,
                q_step0,
                len(step_rows),
                q_con0,
                q_con0 + len(by_step.get(-1, [])),
                len(var_mask),
                head_step,
                q.schema,
            ]
        )
        var_mask.extend(q.types)
        bind_order.extend(order)
    statics = [atom_codes(p, args, pw) for p, args in static_atoms.items()]
    static_codes = np.sort(np.concatenate(statics)) if statics else np.zeros(0, dtype=np.int64)
    dom_lists = [np.flatnonzero(m) for m in masks]
    dom_ptr = np.zeros(len(masks) + 1, dtype=np.int64)
    dom_ptr[1:] = np.cumsum([len(x) for x in dom_lists])
    rel_ptr = np.zeros(len(rel_parts) + 1, dtype=np.int64)
    rel_ptr[1:] = np.cumsum([len(x) for x in rel_parts])

    def table(rows: list[list[int]], cols: int) -> np.ndarray:
        return np.array(rows, dtype=np.int64).reshape(len(rows), cols)

    return JoinPlan(
        queries=table(q_rows, 8),
        steps=table(step_rows, width),
        cons=table(con_rows, 3 + a_max),
        var_mask=np.array(var_mask, dtype=np.int64),
        bind_order=np.array(bind_order, dtype=np.int64),
        masks=np.ascontiguousarray(masks, dtype=np.uint8),
        dom_ptr=dom_ptr,
        dom_obj=np.concatenate(dom_lists).astype(np.int64) if dom_lists else np.zeros(0, dtype=np.int64),
        rel_ptr=rel_ptr,
        rel_codes=np.concatenate(rel_parts) if rel_parts else np.zeros(0, dtype=np.int64),
        static_codes=static_codes,
        views=np.array(
            [[p, len(perm), *perm] + [0] * (a_max - len(perm)) for (p, perm) in view_index], dtype=np.int64
        ).reshape(len(view_index), 2 + a_max),
        pw=pw,
    )
