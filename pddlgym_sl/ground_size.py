"""An upper bound on the ground actions of a task, checked before grounding.

Fast Downward's translator grounds every action instance whose static preconditions hold (its
Datalog program), keeping them all in memory: a 300-byte domain with a seven-parameter action over
40 objects asks for 40^7 instances and grows without bound. This module bounds the instance count
of each action schema from the parsed domain and problem alone, in time linear in their size, and
`check_ground_size` refuses a task whose bound exceeds a limit with an `InputLimitError` naming the
schema, the bound and how to raise the limit.

The bound of a schema: parameters are covered greedily by its positive static preconditions
(predicates that no action changes), rarest predicate first. A precondition atom admits at most as
many bindings of its not-yet-covered parameters as the initial state has atoms of its predicate
agreeing on the already covered positions (the largest such group), and at most the product of
their type sizes; every uncovered parameter multiplies by the number of objects of its type. Each
factor bounds the extensions of the bindings before it, so the product bounds the instances whose
static preconditions hold, which is what the translator grounds.
"""

from __future__ import annotations

from collections import Counter
from math import prod

from pddlgym_sl.errors import InputLimitError
from pddlgym_sl.limits import limit_from_env
from pddlgym_sl.pddl.schema import Domain, Problem

MAX_GROUND_ACTIONS_VAR = "PDDLGYM_SL_MAX_GROUND_ACTIONS"
DEFAULT_MAX_GROUND_ACTIONS = 20_000_000
"""Largest bound accepted per action schema: 20 times the largest bound among the IPC 2023 LT
tasks (rovers testing-medium p28: about 1,000,000 for ``take_image``, of which 330,000 are
grounded). ``$PDDLGYM_SL_MAX_GROUND_ACTIONS`` changes it."""


def max_ground_actions() -> int:
    """The limit in force (`DEFAULT_MAX_GROUND_ACTIONS` unless the environment sets one)."""
    return limit_from_env(MAX_GROUND_ACTIONS_VAR, DEFAULT_MAX_GROUND_ACTIONS)


def _actions(domain: Domain) -> list[list]:
    return [x for x in domain.tree if isinstance(x, list) and x and x[0] == ":action"]


def _field(action: list, name: str):
    for k in range(2, len(action) - 1):
        if action[k] == name:
            return action[k + 1]
    return None


def _atoms(formula, negated: bool = False):
    """(predicate, arguments, negated) of every atom in a formula tree."""
    if not isinstance(formula, list) or not formula:
        return
    head = formula[0]
    if head == "and":
        for part in formula[1:]:
            yield from _atoms(part, negated)
    elif head == "not":
        for part in formula[1:]:
            yield from _atoms(part, not negated)
    elif isinstance(head, str):
        yield head, [a for a in formula[1:] if isinstance(a, str)], negated


def _static_predicates(domain: Domain) -> set[str]:
    changed = {pred for action in _actions(domain) for pred, _, _ in _atoms(_field(action, ":effect"))}
    return set(domain.predicates) - changed


def schema_bounds(domain: Domain, problem: Problem) -> dict[str, int]:
    """Upper bound on the ground instances of each action schema (see the module docstring)."""
    static = _static_predicates(domain)
    init_args: dict[str, list[tuple[str, ...]]] = {}
    for atom in problem.init:
        pred, *args = atom[1:-1].split(" ")
        init_args.setdefault(pred, []).append(tuple(args))
    type_sizes: dict[tuple[str, ...], int] = {}
    fan_outs: dict[tuple[str, tuple[int, ...]], int] = {}

    def size(types: tuple[str, ...]) -> int:
        if types not in type_sizes:
            type_sizes[types] = sum(
                1 for t in problem.objects.values() if any(domain.is_subtype(t, ty) for ty in types)
            )
        return type_sizes[types]

    def fan_out(pred: str, fixed: tuple[int, ...]) -> int:
        """Most atoms of `pred` in the initial state agreeing on the positions `fixed`."""
        key = (pred, fixed)
        if key not in fan_outs:
            groups = Counter(
                tuple(args[i] for i in fixed if i < len(args)) for args in init_args.get(pred, [])
            )
            fan_outs[key] = max(groups.values(), default=0)
        return fan_outs[key]

    bounds = {}
    for action in _actions(domain):
        name = action[1]
        params = dict(domain.actions[name])
        atoms = [
            (pred, args)
            for pred, args, negated in _atoms(_field(action, ":precondition"))
            if not negated and pred in static
        ]
        covered: set[str] = set()
        bound = 1
        for pred, args in sorted(atoms, key=lambda x: len(init_args.get(x[0], ()))):
            new = [v for v in dict.fromkeys(args) if v in params and v not in covered]
            if new:
                fixed = tuple(i for i, a in enumerate(args) if a in covered or a not in params)
                bound *= min(fan_out(pred, fixed), prod(size(params[v]) for v in new))
                covered.update(new)
        bound *= prod(size(types) for v, types in params.items() if v not in covered)
        bounds[name] = bound
    return bounds


def check_ground_size(domain: Domain, problem: Problem, limit: int | None = None) -> None:
    """Raise `InputLimitError` when an action schema may have more than `limit` ground instances
    (default: `max_ground_actions`)."""
    limit = max_ground_actions() if limit is None else limit
    for name, bound in schema_bounds(domain, problem).items():
        if bound > limit:
            raise InputLimitError(
                f"action {name!r} may have up to {bound:,} ground instances, more than the limit of "
                f"{limit:,} (set ${MAX_GROUND_ACTIONS_VAR} to raise it)",
                file=problem.source,
            )
