"""hmax, hadd and hFF on lifted states, over a relaxed program grounded with projections.

The delete relaxation of a task grounds every action (Mimir's lifted FF builds it: 0.9 to 1.7
million relaxed actions on the hard IPC 2023 LT tasks). Costs only need less: an add effect's
cost in hadd is 1 plus the sum of its precondition atoms' costs, minimised over the bindings of
the variables that are not the effect's, and a variable that occurs in a few literals only can
be minimised away inside them. So each schema's add effect becomes a *rule* over a Datalog
program in the style of Powerlifted's (Corrêa et al., ICAPS 2020): variables not in the effect
are eliminated one at a time (bucket elimination: the one whose literals mention the fewest other
variables first), the literals mentioning the variable replaced by an auxiliary atom over those
other variables, defined by a cost-0 rule whose body is those literals; static literals and
(in)equalities ride along as filters and cost nothing. Childsnack's ``serve_sandwich(s, c, t, p)``
adds ``served(c)``: its rule ``served(c) <- A3(c)`` sits on ``A3(c) <- A2(t), A1(t, c)``,
``A2(t) <- ontray(s, t), no_gluten_sandwich(s)`` and ``A1(t, c) <- at(t, p), waiting(c, p)``: a
few thousand ground rules where the action has 1.1 million instances.

The rules are grounded once per task over the reachable atoms (`reachability`), with the lifted
join (`join`), into Fast Downward's unary-operator arrays (`pddlgym_sl.heuristics.relaxed_task.
UnaryTask`: one operator per ground rule, base cost 1 for an effect's rule and 0 for an
auxiliary one), and every evaluated state runs Fast Downward's exploration on them (the grounded
kernel itself, `relaxation.explore_props`, from the state's fact ids; its adaptive queue) and, for hFF, its
relaxed-plan extraction (`pddlgym_sl.heuristics.relaxation.relaxed_plan`). hmax and hadd equal
those of the fully grounded relaxation (a minimum distributes over the sum, and the max, of
independent terms); hFF counts each ground effect rule of the relaxed plan once, so an action
supporting two atoms counts twice (as Powerlifted's FF counts achievers). Negative preconditions
and negative goals are ignored, as the relaxation ignores them.

A program of more than `MAX_RULES` ground rules is refused (`LiftedError`): its exploration would
cost tens of milliseconds a state.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from pddlgym_sl.heuristics.relaxation import RelaxationWork, explore_props, new_work, relaxed_plan
from pddlgym_sl.heuristics.relaxed_task import (
    BASE_COST,
    EFFECT,
    N_PRE,
    OPERATOR,
    UnaryTask,
    assemble_unary_task,
)
from pddlgym_sl.lifted.heuristics import lifted_value
from pddlgym_sl.lifted.join import OVERFLOW, build_views, enumerate_bindings
from pddlgym_sl.lifted.query import JoinStats, LiftedError, Literal, Query, atom_codes, build_plan
from pddlgym_sl.lifted.task import LiftedTask
from pddlgym_sl.numba_cache import CACHE

__all__ = ["MAX_RULES", "RelaxedArgs", "RelaxedProgram", "relaxed_args", "relaxed_program"]

MAX_RULES = 5_000_000
"""Most ground rules of a relaxed program (`LiftedError` beyond)."""

_JIT = {"cache": CACHE, "nogil": True}
_COST, _STATIC, _NEG_STATIC, _EQUAL, _NOT_EQUAL = range(5)
_KINDS = ("hmax", "hadd", "hff")


class RelaxedArgs(NamedTuple):
    """A relaxation heuristic on lifted states: its kind (0 hmax, 1 hadd, 2 hFF), the unary task and
    its work arrays."""

    kind: int
    ut: UnaryTask
    work: RelaxationWork


class _Rule:
    """A rule over schema variables: its head (predicate, terms), its variables, and its body as
    (kind, predicate, terms) literals; `aux` when it defines an auxiliary atom (cost 0)."""

    def __init__(
        self, schema: int, head: tuple[int, tuple[int, ...]], variables: list[int], body: list, aux: bool
    ) -> None:
        self.schema, self.head, self.variables, self.body, self.aux = schema, head, variables, body, aux


class RelaxedProgram(NamedTuple):
    """The ground program as a `UnaryTask` (propositions: the task's facts, then the auxiliary
    atoms) and its size."""

    ut: UnaryTask
    n_aux: int
    n_rules: int


def _rules(task: LiftedTask) -> list[_Rule]:
    """Every add effect's rule and the auxiliary rules it needs, in an order where each auxiliary
    atom is defined before it is used (module docstring)."""
    a_max = task.max_arity
    n_preds = len(task.pred_names)
    registry: dict[tuple, int] = {}
    out: list[_Rule] = []
    for k, schema in enumerate(task.schemas):
        base = [
            (_STATIC if lit.pred in task.static_preds else _COST, lit.pred, lit.terms) for lit in schema.pre
        ]
        base += [(_NEG_STATIC, lit.pred, lit.terms) for lit in schema.neg if lit.pred in task.static_preds]
        base += [(_EQUAL, -1, pair) for pair in schema.equal] + [
            (_NOT_EQUAL, -1, pair) for pair in schema.not_equal
        ]
        for effect in schema.add:
            head = {t for t in effect.terms if t >= 0}
            lits = list(base)
            free = [v for v in range(len(schema.params)) if v not in head]
            while free:
                best = None
                for x in free:
                    bucket = [lit for lit in lits if x in lit[2]]
                    others = sorted({t for lit in bucket for t in lit[2] if t >= 0 and t != x})
                    if len(others) > a_max:
                        continue
                    score = (len(others), sum(lit[0] == _COST for lit in bucket))
                    if best is None or score < best[0]:
                        best = (score, x, bucket, others)
                if best is None:
                    break
                _, x, bucket, others = best
                rename = {v: i for i, v in enumerate([*others, x])}
                key = (
                    tuple(
                        sorted((kind, p, tuple(rename.get(t, t) for t in terms)) for kind, p, terms in bucket)
                    ),
                    tuple(schema.types[v] for v in [*others, x]),
                )
                if key not in registry:
                    registry[key] = n_preds + len(registry)
                    out.append(_Rule(k, (registry[key], tuple(others)), [*others, x], bucket, aux=True))
                lits = [lit for lit in lits if x not in lit[2]] + [(_COST, registry[key], tuple(others))]
                free.remove(x)
            out.append(_Rule(k, (effect.pred, effect.terms), sorted(head | set(free)), lits, aux=False))
    return out


def relaxed_program(task: LiftedTask, max_rules: int = MAX_RULES) -> RelaxedProgram:
    """Ground the rules of `task` over its reachable atoms into a `UnaryTask` (module docstring)."""
    pw = task.plan.pw
    a_max = task.max_arity
    rules = _rules(task)
    codes = task.fact_code.copy()  # the reachable atoms, then the auxiliary atoms as they are grounded
    n_preds = len(task.pred_names)
    heads: list[np.ndarray] = []
    bodies: list[list[np.ndarray]] = []
    costs: list[int] = []
    aux_codes: list[np.ndarray] = []
    total = 0
    for rule in rules:
        local = {v: i for i, v in enumerate(rule.variables)}

        def term(t: int, local: dict[int, int] = local) -> int:
            return local[t] if t >= 0 else t

        schema = task.schemas[rule.schema]
        body = [
            Literal(p, tuple(term(t) for t in terms))
            for kind, p, terms in rule.body
            if kind in (_COST, _STATIC)
        ]
        pairs = {
            kind: tuple((term(ts[0]), term(ts[1])) for k, _, ts in rule.body if k == kind)
            for kind in (_EQUAL, _NOT_EQUAL)
        }
        query = Query(
            types=tuple(schema.types[v] for v in rule.variables),
            pre=tuple(body),
            neg=tuple(
                Literal(p, tuple(term(t) for t in terms))
                for kind, p, terms in rule.body
                if kind == _NEG_STATIC
            ),
            equal=pairs[_EQUAL],
            not_equal=pairs[_NOT_EQUAL],
        )
        rows = _bindings(task, query, codes, n_preds + len(aux_codes) + 1)
        total += len(rows)
        if total > max_rules:
            raise LiftedError(
                f"the relaxed program has more than {max_rules:,} ground rules (at {schema.name}'s): "
                "too large to explore per state",
                file=task.problem_file,
            )
        pred, terms = rule.head
        head_args = _args(rows, tuple(term(t) for t in terms))
        head_codes = atom_codes(pred, head_args, pw)
        if rule.aux:
            new = np.unique(head_codes)
            aux_codes.append(new)
            codes = np.sort(np.concatenate([codes, new]))
        heads.append(head_codes)
        bodies.append(
            [
                atom_codes(lit.pred, _args(rows, lit.terms), pw)
                for lit in body
                if lit.pred not in task.static_preds
            ]
        )
        costs.append(0 if rule.aux else 1)
    all_aux = np.unique(np.concatenate(aux_codes)) if aux_codes else np.zeros(0, dtype=np.int64)
    n_facts = task.n_facts

    def props(c: np.ndarray) -> np.ndarray:
        is_aux = (c // pw[a_max]) >= n_preds
        out = np.searchsorted(task.fact_code, c)
        out[is_aux] = n_facts + np.searchsorted(all_aux, c[is_aux])
        return out

    effect = np.concatenate([props(h) for h in heads]) if heads else np.zeros(0, dtype=np.int64)
    base_cost = (
        np.concatenate([np.full(len(h), c, dtype=np.int64) for h, c in zip(heads, costs, strict=True)])
        if heads
        else np.zeros(0, dtype=np.int64)
    )
    pre_lists = []
    for h, bs in zip(heads, bodies, strict=True):
        cols = [props(b) for b in bs]
        pre_lists.append(np.stack(cols, axis=1) if cols else np.zeros((len(h), 0), dtype=np.int64))
    ut = _unary_task(task, n_facts + len(all_aux), effect, base_cost, pre_lists)
    return RelaxedProgram(ut, len(all_aux), len(effect))


def _args(rows: np.ndarray, terms: tuple[int, ...]) -> np.ndarray:
    """The (k, len(terms)) objects of `terms` (local variables, or constants) in each binding row."""
    out = np.zeros((len(rows), len(terms)), dtype=np.int64)
    for i, t in enumerate(terms):
        out[:, i] = rows[:, t] if t >= 0 else -t - 1
    return out


def _bindings(task: LiftedTask, query: Query, codes: np.ndarray, n_preds: int) -> np.ndarray:
    """Every binding of `query` over the atoms `codes` (fluent and auxiliary, sorted)."""
    pw = task.plan.pw
    a_max = task.max_arity
    preds = codes // pw[a_max]
    atoms = {}
    for p in np.unique(preds).tolist():
        if p in task.static_preds:
            continue
        mine = codes[preds == p]
        arity = max((len(lit.terms) for lit in query.pre if lit.pred == p), default=a_max)
        args = np.zeros((len(mine), arity), dtype=np.int64)
        for i in range(arity):
            args[:, i] = (mine // pw[a_max - 1 - i]) % pw[1]
        atoms[p] = args
    stats = JoinStats({**task.static_args, **atoms}, n_preds)
    plan = build_plan(
        [query], static_preds=task.static_preds, static_atoms=task.static_args, stats=stats,
        n_objects=len(task.objects), arity=a_max, masks=task.type_masks,
    )  # fmt: skip
    view_ptr = np.zeros(len(plan.views) + 1, dtype=np.int64)
    view_codes = np.zeros(max(len(plan.views) * len(codes), 1), dtype=np.int64)
    build_views(plan, codes, len(codes), view_codes, view_ptr)
    width = 1 + len(query.types)
    out = np.zeros((1 << 12, width), dtype=np.int64)
    binding = np.zeros(max(width, 1), dtype=np.int64)
    pos = np.zeros(max(len(plan.steps), 1), dtype=np.int64)
    end = np.zeros(max(len(plan.steps), 1), dtype=np.int64)
    none = np.full(max(len(task.objects), 1), -1, dtype=np.int64)
    while True:
        k = enumerate_bindings(
            plan,
            0,
            1,
            codes,
            len(codes),
            view_codes,
            view_ptr,
            binding,
            pos,
            end,
            none,
            none,
            False,
            True,
            out,
            0,
        )
        if k != OVERFLOW:
            return out[:k, 1:].copy()
        if len(out) >= 2 * MAX_RULES:
            raise LiftedError(
                f"a rule of the relaxed program has more than {MAX_RULES:,} ground instances",
                file=task.problem_file,
            )
        out = np.zeros((2 * len(out), width), dtype=np.int64)


def _unary_task(
    task: LiftedTask, n_props: int, effect: np.ndarray, base_cost: np.ndarray, pre_lists: list[np.ndarray]
) -> UnaryTask:
    """The `UnaryTask` of the ground rules: one operator per rule, preconditions sorted and unique."""
    n_ops = len(effect)
    pre_rows: list[list[int]] = []
    for block in pre_lists:
        block = np.sort(block, axis=1)
        for row in block.tolist():  # sorted: drop repeats
            pre_rows.append([p for i, p in enumerate(row) if i == 0 or row[i - 1] != p])
    n_pre = np.array([len(r) for r in pre_rows], dtype=np.int64)
    pre_ptr = np.zeros(n_ops + 1, dtype=np.int64)
    pre_ptr[1:] = np.cumsum(n_pre)
    pre_idx = np.fromiter((p for r in pre_rows for p in r), dtype=np.int64, count=int(pre_ptr[-1]))
    owner = np.repeat(np.arange(n_ops), n_pre)
    order = np.argsort(pre_idx, kind="stable")
    pre_of_idx = owner[order]
    pre_of_ptr = np.zeros(n_props + 1, dtype=np.int64)
    pre_of_ptr[1:] = np.cumsum(np.bincount(pre_idx, minlength=n_props))
    columns = {EFFECT: effect, N_PRE: n_pre, BASE_COST: base_cost, OPERATOR: np.arange(n_ops)}
    return assemble_unary_task(
        n_props, task.goal, columns, (pre_ptr, pre_idx), (pre_of_ptr, pre_of_idx), base_cost
    )


@njit(**_JIT)
def relaxed_value(args, state, n):
    """hmax, hadd or hFF (``args.kind``) of the lifted state ``state[:n]``; inf for a dead end."""
    h = explore_props(state, n, args.ut, args.kind != 0, args.work)  # FD's exploration, step for step
    if h < 0:
        return np.inf
    if args.kind != 2:
        return float(h)
    k = relaxed_plan(args.ut, args.work)
    total = 0
    for i in range(k):
        total += args.ut.op_cost[args.work.plan[i]]
    return float(total)


@overload(lifted_value, jit_options=_JIT)
def _lifted_value(args, state, n):
    if getattr(args, "instance_class", None) is RelaxedArgs:
        return lambda args, state, n: relaxed_value(args, state, n)
    return None


def relaxed_args(task: LiftedTask, name: str, program: RelaxedProgram | None = None) -> RelaxedArgs:
    """The arguments of relaxation heuristic `name` (hmax, hadd or hff) on `task`."""
    program = relaxed_program(task) if program is None else program
    return RelaxedArgs(_KINDS.index(name), program.ut, new_work(program.ut))
