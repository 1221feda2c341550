"""`LiftedTask`: a PDDL task kept lifted, its action schemas compiled into join plans over atom codes.

Grounding a task builds every action instance whose static preconditions hold (Fast Downward's
translator, `pddlgym_sl.translate`): on the IPC 2023 LT hard tasks that is millions of actions and
tens of GB (`pddlgym_sl.ground_size`). A lifted task only numbers what is small: the objects, the
predicates, and the fluent atoms that the delete relaxation can reach (`reachability`), computed
from the schemas without instantiating them. Successors are found per state by evaluating each
schema's precondition as a conjunctive query over the state's atoms (`join`).

**Atom codes.** With N objects (sorted by name, as `CompiledTask.objects`) and A the largest
predicate arity, the atom ``p(a_0 .. a_k-1)`` has the code ``p N^A + sum_i a_i N^(A-1-i)``: codes
sort like (predicate, arguments), so the atoms of a predicate whose first m arguments are fixed
form one contiguous range of a sorted code array, found by binary search. A state is the sorted
array of its fluent atoms' *fact ids* (the rank of their code among the reachable fluent atoms,
`LiftedTask.fact_code`), so ids sort like codes too; static atoms (of predicates no action
changes) are in no state, they are the fixed relation `JoinPlan.static_codes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from pddlgym_sl.errors import PDDLError, PlanError
from pddlgym_sl.lifted.join import apply_action, is_goal
from pddlgym_sl.lifted.query import (
    MAX_CODE,
    JoinPlan,
    JoinStats,
    LiftedError,
    Literal,
    Query,
    Schema,
    atom_codes,
    build_plan,
)
from pddlgym_sl.lifted.reachability import reachable_atoms
from pddlgym_sl.pddl import Domain, Problem, parse_domain, parse_problem

__all__ = ["LiftedTask", "lifted_task", "load_lifted_task"]


@dataclass(frozen=True, eq=False)
class LiftedTask:
    """A task kept lifted (see the module docstring); built by `lifted_task` / `load_lifted_task`.

    The attribute names the WL graph and the atom tables read are those of `CompiledTask`
    (``name``, ``objects``, ``object_types``, ``facts``, ``fact_atoms``, ``static_atoms``,
    ``goal``, ``goal_neg``, ``n_facts``, ``domain_file``, ``problem_file``), so code that only
    needs the atoms of states works on both.

    Attributes:
        objects: object names, sorted; object_types: object -> type; constants: the domain's.
        predicates: predicate -> arity (declaration order; the index is the predicate's id).
        static_preds: ids of the predicates no action changes; static_args: their initial atoms
            (predicate id -> (n, arity) object ids); static_atoms: their names, sorted.
        schemas: the action schemas; type_masks: uint8 (n_masks, n_objects) type membership.
        fact_code: int64 codes of the reachable fluent atoms, sorted (fact id = position);
            `facts`: their names.
        init: uint32 sorted fact ids of the initial state; goal, goal_neg: int32 sorted fact
            ids that must hold / not hold (goals on static atoms are decided when building).
        solvable: False when a positive goal atom is unreachable or a static goal fails.
        plan: the schemas' join plans (one query per schema, in schema order).
        effects: int64 rows (is_add, predicate, arity, terms...) of every schema's effects, the
            schema's rows from ``effect_ptr[s]``.
    """

    name: str
    domain_name: str
    objects: tuple[str, ...]
    object_types: dict[str, str]
    constants: frozenset[str]
    predicates: dict[str, int]
    pred_names: tuple[str, ...]
    max_arity: int
    static_preds: frozenset[int]
    static_args: dict[int, np.ndarray]
    static_atoms: tuple[str, ...]
    schemas: tuple[Schema, ...]
    type_masks: np.ndarray
    fact_code: np.ndarray
    init: np.ndarray
    goal: np.ndarray
    goal_neg: np.ndarray
    solvable: bool
    plan: JoinPlan = field(repr=False)
    effects: np.ndarray = field(repr=False)
    effect_ptr: np.ndarray = field(repr=False)
    stats: JoinStats = field(repr=False)
    domain_file: str | None = None
    problem_file: str | None = None

    @property
    def n_facts(self) -> int:
        return len(self.facts)

    @property
    def n_words(self) -> int:
        """uint64 words of a fact bit set (what the WL kernels take)."""
        return max(1, (self.n_facts + 63) // 64)

    @cached_property
    def fact_atoms(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each fact as (predicate, arguments)."""
        return tuple(self.decode(int(c)) for c in self.fact_code)

    @cached_property
    def facts(self) -> tuple[str, ...]:
        """Each fact's name, ``"(at c0 l1)"`` (made on first use: sokoban's hard tasks have 600k)."""
        return tuple("(" + " ".join([p, *args]) + ")" for p, args in self.fact_atoms)

    @cached_property
    def max_params(self) -> int:
        return max((len(s.params) for s in self.schemas), default=0)

    def decode(self, code: int) -> tuple[str, tuple[str, ...]]:
        """(predicate, arguments) of an atom code."""
        n, a_max = max(len(self.objects), 1), self.max_arity
        pred, rest = divmod(code, n**a_max)
        name = self.pred_names[pred]
        k = self.predicates[name]
        args = tuple(self.objects[(rest // n ** (a_max - 1 - i)) % n] for i in range(k))
        return name, args

    def encode(self, pred: str, args: tuple[str, ...]) -> int:
        """The code of atom ``pred(args)`` (names)."""
        n, a_max = max(len(self.objects), 1), self.max_arity
        index = {o: i for i, o in enumerate(self.objects)} if len(args) else {}
        code = self.pred_names.index(pred) * n**a_max
        for i, a in enumerate(args):
            code += index[a] * n ** (a_max - 1 - i)
        return code

    def fact_index(self, atom: str) -> int:
        """Fact id of a ground atom ``"(at c0 l1)"``; `PDDLError` if it is not a reachable fluent atom."""
        parts = atom.strip().strip("()").split()
        try:
            code = self.encode(parts[0], tuple(parts[1:]))
        except (ValueError, KeyError, IndexError):
            code = -1
        i = int(np.searchsorted(self.fact_code, code))
        if code < 0 or i >= len(self.fact_code) or self.fact_code[i] != code:
            raise PDDLError(f"{atom!r} is not a reachable fluent atom of task {self.name!r}")
        return i

    def true_facts(self, state: np.ndarray) -> list[str]:
        """Names of the facts of a state (its sorted fact ids)."""
        return [self.facts[int(i)] for i in state]

    def is_goal(self, state: np.ndarray) -> bool:
        """Whether a state (sorted fact ids) satisfies the goal."""
        state = np.ascontiguousarray(state, dtype=np.uint32)
        return self.solvable and bool(is_goal(state, len(state), self.goal, self.goal_neg))

    def is_applicable(self, state: np.ndarray, action: np.ndarray) -> bool:
        """Whether the ground action row `action` is applicable in `state`: its parameters of their
        types, its preconditions (positive, negative, equalities) holding. Checked literal by
        literal, not by enumerating the applicable actions (39 million in childsnack's largest
        initial state)."""
        schema = self.schemas[int(action[0])]
        objects = [int(o) for o in action[1 : 1 + len(schema.params)]]
        if any(not self.type_masks[m, o] for m, o in zip(schema.types, objects, strict=True)):
            return False
        codes = self.fact_code[np.asarray(state, dtype=np.int64)]

        def value(term: int) -> int:
            return objects[term] if term >= 0 else -term - 1

        def holds(lit: Literal) -> bool:
            args = np.array([[value(x) for x in lit.terms]], dtype=np.int64).reshape(1, -1)
            code = int(atom_codes(lit.pred, args, self.plan.pw)[0])
            pool = self.plan.static_codes if lit.pred in self.static_preds else codes
            i = int(np.searchsorted(pool, code))
            return i < len(pool) and int(pool[i]) == code

        return (
            all(holds(lit) for lit in schema.pre)
            and not any(holds(lit) for lit in schema.neg)
            and all(value(a) == value(b) for a, b in schema.equal)
            and all(value(a) != value(b) for a, b in schema.not_equal)
        )

    def successor(self, state: np.ndarray, action: np.ndarray) -> np.ndarray:
        """The state after the ground action row `action` (not checked for applicability)."""
        state = np.ascontiguousarray(state, dtype=np.uint32)
        row = np.ascontiguousarray(action, dtype=np.int64)
        n_eff = int(np.diff(self.effect_ptr).max(initial=0)) + 1
        out = np.zeros(len(state) + n_eff, dtype=np.uint32)
        adds, dels = np.zeros(n_eff, dtype=np.int64), np.zeros(n_eff, dtype=np.int64)
        m = apply_action(
            self.effects,
            self.effect_ptr,
            self.plan.pw,
            self.fact_code,
            row,
            state,
            len(state),
            out,
            adds,
            dels,
        )
        if m < 0:
            raise LiftedError(f"{self.action_name(row)} adds an atom the reachability analysis missed")
        return out[:m]

    def action_row(self, name: str) -> np.ndarray:
        """The row of a ground action written ``"(name a b)"`` (not checked for applicability)."""
        parts = name.strip().strip("()").lower().split()
        index = {s.name: k for k, s in enumerate(self.schemas)}
        if not parts or parts[0] not in index:
            raise PlanError(f"{name!r} is not an action of task {self.name!r}")
        schema = self.schemas[index[parts[0]]]
        objects = {o: i for i, o in enumerate(self.objects)}
        if len(parts) - 1 != len(schema.params) or any(o not in objects for o in parts[1:]):
            raise PlanError(
                f"{name!r}: {schema.name} takes {len(schema.params)} objects of task {self.name!r}"
            )
        row = np.zeros(1 + self.max_params, dtype=np.int64)
        row[0] = index[parts[0]]
        row[1 : 1 + len(schema.params)] = [objects[o] for o in parts[1:]]
        return row

    def validate_plan(self, plan: Sequence[str], start: np.ndarray | None = None) -> list[np.ndarray]:
        """Replay `plan` (action names) from `start` (default: the initial state), each step checked
        applicable (as `CompiledTask.validate_plan`); return the visited states. `PlanError` names
        the failing step, or the end state when it is not a goal state."""
        state = self.init if start is None else start
        states = [state]
        for step, name in enumerate(plan, 1):
            row = self.action_row(name)
            if not self.is_applicable(state, row):
                raise PlanError(f"plan step {step}: action {name} is not applicable", file=self.problem_file)
            state = self.successor(state, row)
            states.append(state)
        if not self.is_goal(state):
            raise PlanError(f"plan of {len(plan)} steps ends in a non-goal state", file=self.problem_file)
        return states

    def action_name(self, row: np.ndarray) -> str:
        """``"(name a b)"`` of a ground action row (schema, parameter objects...)."""
        schema = self.schemas[int(row[0])]
        args = "".join(" " + self.objects[int(o)] for o in row[1 : 1 + len(schema.params)])
        return f"({schema.name}{args})"

    def __repr__(self) -> str:
        return (
            f"LiftedTask({self.domain_name}/{self.name}: {len(self.objects)} objects, {len(self.schemas)} "
            f"schemas, {self.n_facts} reachable fluent atoms)"
        )


def _conjuncts(formula: list) -> list:
    if not formula:
        return []
    if formula[0] == "and":
        return list(formula[1:])
    return [formula]


def _field(action: list, name: str) -> list:
    for k in range(2, len(action) - 1):
        if action[k] == name:
            return action[k + 1]
    return []


def lifted_task(
    domain: Domain,
    problem: Problem,
    domain_file: str | Path | None = None,
    problem_file: str | Path | None = None,
) -> LiftedTask:
    """Build the `LiftedTask` of a validated domain and problem (`pddlgym_sl.pddl`): number the
    objects, predicates and schemas, compile the join plans, and find the reachable fluent atoms
    (`reachability.reachable_atoms`)."""
    source = problem.source if problem_file is None else str(problem_file)
    objects = tuple(sorted(problem.objects))
    obj_id = {o: i for i, o in enumerate(objects)}
    n = max(len(objects), 1)
    pred_names = tuple(domain.predicates)
    pred_id = {p: i for i, p in enumerate(pred_names)}
    a_max = max([len(a) for a in domain.predicates.values()] + [1])
    if len(pred_names) * float(n) ** a_max >= MAX_CODE:
        raise LiftedError(
            f"{len(objects)} objects and predicates of arity {a_max}: atom codes would not fit in 64 bits",
            file=source,
        )

    masks: list[np.ndarray] = []
    mask_id: dict[tuple[str, ...], int] = {}

    def type_mask(types: tuple[str, ...]) -> int:
        key = tuple(sorted(types))
        if key not in mask_id:
            mask_id[key] = len(masks)
            masks.append(
                np.array(
                    [any(domain.is_subtype(problem.objects[o], t) for t in key) for o in objects],
                    dtype=np.uint8,
                )
            )
        return mask_id[key]

    actions = [x for x in domain.tree if isinstance(x, list) and x and x[0] == ":action"]
    effect_preds = {
        (lit[1] if lit[0] == "not" else lit)[0] for a in actions for lit in _conjuncts(_field(a, ":effect"))
    }
    static_preds = frozenset(pred_id[p] for p in pred_names if p not in effect_preds)

    schemas = []
    for action in actions:
        name = str(action[1])
        params = domain.actions[name]
        var = {v: i for i, (v, _) in enumerate(params)}

        def term(x: str, var: dict[str, int] = var) -> int:
            return var[x] if x in var else -(obj_id[str(x)] + 1)

        def literal(atom: list, term=term) -> Literal:
            return Literal(pred_id[str(atom[0])], tuple(term(str(x)) for x in atom[1:]))

        pre, neg, equal, not_equal, add, delete = [], [], [], [], [], []
        for lit in _conjuncts(_field(action, ":precondition")):
            if lit[0] == "not":
                inner = lit[1]
                if inner[0] == "=":
                    not_equal.append((term(str(inner[1])), term(str(inner[2]))))
                else:
                    neg.append(literal(inner))
            elif lit[0] == "=":
                equal.append((term(str(lit[1])), term(str(lit[2]))))
            else:
                pre.append(literal(lit))
        for lit in _conjuncts(_field(action, ":effect")):
            if lit[0] == "not":
                delete.append(literal(lit[1]))
            else:
                add.append(literal(lit))
        schemas.append(
            Schema(
                name=name,
                params=tuple(v for v, _ in params),
                types=tuple(type_mask(tuple(ts)) for _, ts in params),
                pre=tuple(dict.fromkeys(pre)),
                neg=tuple(dict.fromkeys(neg)),
                equal=tuple(equal),
                not_equal=tuple(not_equal),
                add=tuple(dict.fromkeys(add)),
                delete=tuple(dict.fromkeys(delete)),
            )
        )
    if not masks:
        type_mask(("object",))

    # the initial atoms by predicate
    by_pred: dict[int, list[tuple[int, ...]]] = {}
    for atom in problem.init:
        parts = atom[1:-1].split(" ")
        by_pred.setdefault(pred_id[parts[0]], []).append(tuple(obj_id[o] for o in parts[1:]))
    init_args = {
        p: np.array(rows, dtype=np.int64).reshape(len(rows), len(domain.predicates[pred_names[p]]))
        for p, rows in by_pred.items()
    }
    static_args = {p: args for p, args in init_args.items() if p in static_preds}
    stats = JoinStats(init_args, len(pred_names))
    mask_array = np.array(masks, dtype=np.uint8).reshape(len(masks), len(objects))
    pw = np.array([n**k for k in range(a_max + 1)], dtype=np.int64)

    def codes_of(p: int, args: np.ndarray) -> np.ndarray:
        return atom_codes(p, args, pw)

    init_fluent = [codes_of(p, args) for p, args in init_args.items() if p not in static_preds]
    init_codes = np.unique(np.concatenate(init_fluent)) if init_fluent else np.zeros(0, dtype=np.int64)
    static_set = {(p, tuple(row)) for p, args in static_args.items() for row in args.tolist()}

    parts = dict(static_preds=static_preds, static_atoms=static_args, stats=stats, n_objects=len(objects))
    parts |= dict(arity=a_max, masks=mask_array)
    type_sizes = {
        p: [int(masks[type_mask(tuple(ts))].sum()) for ts in domain.predicates[name]]
        for p, name in enumerate(pred_names)
        if p not in static_preds
    }
    wide = parts | {"stats": stats.widen(type_sizes)}
    fact_code = reachable_atoms(schemas, init_codes, pw, a_max, len(objects), wide)

    # goals: static ones are decided now; fluent ones become fact ids
    solvable = True
    goal_pos: list[int] = []
    goal_neg: list[int] = []
    for lit in _conjuncts(problem.tree[-1][1]):
        negated = lit[0] == "not"
        atom = lit[1] if negated else lit
        if atom[0] == "=":
            holds = atom[1] == atom[2]
            solvable &= holds != negated
            continue
        p, args = pred_id[str(atom[0])], tuple(obj_id[str(o)] for o in atom[1:])
        if p in static_preds:
            solvable &= ((p, args) in static_set) != negated
            continue
        code = int(codes_of(p, np.array([args], dtype=np.int64).reshape(1, len(args)))[0])
        i = int(np.searchsorted(fact_code, code))
        reachable = i < len(fact_code) and fact_code[i] == code
        if negated:
            if reachable:
                goal_neg.append(i)
        elif reachable:
            goal_pos.append(i)
        else:
            solvable = False

    effects, effect_ptr = [], [0]
    for s in schemas:
        for is_add, lits in ((1, s.add), (0, s.delete)):
            for lit in lits:
                effects.append(
                    [is_add, lit.pred, len(lit.terms), *lit.terms] + [0] * (a_max - len(lit.terms))
                )
        effect_ptr.append(len(effects))
    plan = build_plan(
        [Query(s.types, s.pre, s.neg, s.equal, s.not_equal, schema=k) for k, s in enumerate(schemas)], **parts
    )
    static_names = tuple(
        sorted(
            "(" + " ".join([pred_names[p], *(objects[o] for o in row)]) + ")"
            for p, args in static_args.items()
            for row in args.tolist()
        )
    )
    return LiftedTask(
        name=problem.name,
        domain_name=domain.name,
        objects=objects,
        object_types=dict(sorted(problem.objects.items())),
        constants=frozenset(domain.constants),
        predicates={p: len(a) for p, a in domain.predicates.items()},
        pred_names=pred_names,
        max_arity=a_max,
        static_preds=static_preds,
        static_args=static_args,
        static_atoms=static_names,
        schemas=tuple(schemas),
        type_masks=mask_array,
        fact_code=fact_code,
        init=np.searchsorted(fact_code, init_codes).astype(np.uint32),
        goal=np.array(sorted(set(goal_pos)), dtype=np.int32),
        goal_neg=np.array(sorted(set(goal_neg)), dtype=np.int32),
        solvable=solvable,
        plan=plan,
        effects=np.array(effects, dtype=np.int64).reshape(len(effects), 3 + a_max),
        effect_ptr=np.array(effect_ptr, dtype=np.int64),
        stats=stats,
        domain_file=None if domain_file is None else str(domain_file),
        problem_file=source,
    )


def load_lifted_task(domain_file: str | Path, problem_file: str | Path) -> LiftedTask:
    """Parse and validate a domain/problem file pair (`pddlgym_sl.pddl`) and build its `LiftedTask`."""
    domain = parse_domain(domain_file)
    problem = parse_problem(problem_file, domain)
    return lifted_task(domain, problem, domain_file=domain_file, problem_file=problem_file)
