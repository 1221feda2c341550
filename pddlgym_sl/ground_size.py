"""An upper bound on what grounding a task costs, checked before grounding.

Fast Downward's translator grounds every action instance whose static preconditions hold (its
Datalog program), and every atom those instances can add, keeping them all in memory: a
288-byte domain with a seven-parameter action over 11 objects asks for 11^7 = 19.5 million
instances and ran for minutes up to 7.5 GB before failing. This module estimates, from the
parsed domain and problem alone and in time linear in their size, the memory that grounding
the whole task takes, and `check_ground_size` refuses a task whose estimate exceeds a limit
(`max_ground_bytes`, 64 GiB unless ``$PDDLGYM_SL_MAX_GROUND_BYTES`` says otherwise) with an
`InputLimitError` naming the largest action schemas, their instances and how to raise the limit.
What the estimate misses, or what the machine lacks, is caught while the translator runs: it may
add no more than the smaller of that limit and the memory available (`pddlgym_sl.memory_limit`).

**Instances of a schema** (`schema_bounds`): parameters are covered greedily by its positive
static preconditions (predicates that no action changes), rarest predicate first. A precondition
atom admits at most as many bindings of its not-yet-covered parameters as the initial state has
atoms of its predicate agreeing on the already covered positions (the largest such group), and at
most the product of their type sizes; every uncovered parameter multiplies by the number of
objects of its type. Each factor bounds the extensions of the bindings before it, so the product
bounds the instances whose static preconditions hold, which is what the translator grounds. A
fluent precondition counts as static when no add effect of any action can match it by the types
(or constants) of its arguments: only initial atoms satisfy it (spanner's ``(at ?s ?l)`` for a
spanner: ``walk`` adds ``at`` for men only).

**Atoms** (`fact_bounds`): a fluent predicate has at most its initial atoms plus, for each add
effect on it, as many atoms as the effect has bindings (at most the schema's instances, and at
most the product of its arguments' type sizes), and never more than its type sizes allow.

**Bytes** (`estimate`): each ground action costs `BYTES_PER_ACTION`, plus `BYTES_PER_ATOM` per
fluent atom of its precondition and effect and `BYTES_PER_PARAMETER` per parameter; each atom
`BYTES_PER_FACT`, each initial atom `BYTES_PER_INIT_ATOM`. The constants come from the peak
resident memory of `compile_task` (the translator, our arrays, in one process) on 20 IPC 2023 LT
tasks (two per domain, 8 MB to 1.7 GB) and 9 synthetic tasks (2 to 7 parameters, 1 to 6
preconditions and effects): they are the smallest round values that keep the estimate above
every measurement (by 8% on ferry, the costliest per action; by a median of 2x, up to 6x where
the static bound of the instances is loose: miconic, spanner). ``benchmarks/ground_memory.py``
prints the estimate beside the measured peak.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from math import prod

from pddlgym_sl.errors import ConfigError, InputLimitError
from pddlgym_sl.limits import bytes_from_env, format_bytes
from pddlgym_sl.pddl.schema import Domain, Problem

MAX_GROUND_BYTES_VAR = "PDDLGYM_SL_MAX_GROUND_BYTES"
DEFAULT_MAX_GROUND_BYTES = 64 << 30
"""Largest estimated grounding accepted: 64 GiB. Every IPC 2023 LT task of the training, easy and
medium sets is estimated at 5.6 GiB or less; 21 of the 258 hard ones are above (childsnack 13,
transport 8: 67 to 276 GiB), none of which any IPC 2023 planner solved (in 8 GB). A task below
the limit but beyond the machine is stopped while the translator runs (`pddlgym_sl.memory_limit`).
``$PDDLGYM_SL_MAX_GROUND_BYTES`` changes it (bytes, or with a K, M, G or T suffix)."""

RETIRED_VARS = {"PDDLGYM_SL_MAX_GROUND_ACTIONS": "a per-schema count of ground actions"}
"""Variables of earlier limits: set, they are refused (not silently ignored)."""

BYTES_PER_ACTION = 2000
BYTES_PER_ATOM = 500
BYTES_PER_PARAMETER = 200
BYTES_PER_FACT = 6500
BYTES_PER_INIT_ATOM = 500


def max_ground_bytes() -> int:
    """The limit in force (`DEFAULT_MAX_GROUND_BYTES` unless the environment sets one)."""
    for var, meaning in RETIRED_VARS.items():
        if var in os.environ:
            raise ConfigError(
                f"${var} ({meaning}) is no longer read: the whole task's grounding is bounded in "
                f"bytes by ${MAX_GROUND_BYTES_VAR} (default {format_bytes(DEFAULT_MAX_GROUND_BYTES)})"
            )
    return bytes_from_env(MAX_GROUND_BYTES_VAR, DEFAULT_MAX_GROUND_BYTES)


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


def _argument_types(domain: Domain, params: dict[str, tuple[str, ...]], arg: str) -> tuple[str, ...] | None:
    """The types an action argument may take: its parameter's, or its constant's; None if unknown."""
    if arg in params:
        return params[arg]
    if arg in domain.constants:
        return (domain.constants[arg],)
    return None


def _overlap(domain: Domain, a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> bool:
    """Whether two argument type sets can hold the same object (types form a tree: two types share
    objects only when one is the other's ancestor)."""
    if a is None or b is None:
        return True
    return any(domain.is_subtype(x, y) or domain.is_subtype(y, x) for x in a for y in b)


def _init_only(domain: Domain) -> set[tuple[str, int]]:
    """(action index, precondition index) of the positive fluent preconditions that no add effect
    of any action can match, by the types of their arguments (constants by name too): only atoms of
    the initial state satisfy them, so they bound the instances as static ones do (ferry's
    ``(at ?car ?loc)`` is added for cars only; spanner's ``(at ?s - spanner ?l)`` never)."""
    adds: dict[str, list[tuple[list[str], dict[str, tuple[str, ...]]]]] = {}
    actions = _actions(domain)
    for action in actions:
        params = dict(domain.actions[action[1]])
        for pred, args, negated in _atoms(_field(action, ":effect")):
            if not negated:
                adds.setdefault(pred, []).append((args, params))
    out = set()
    for k, action in enumerate(actions):
        params = dict(domain.actions[action[1]])
        for j, (pred, args, negated) in enumerate(_atoms(_field(action, ":precondition"))):
            if negated or pred not in adds:
                continue
            if not any(
                len(e_args) == len(args)
                and all(
                    (x == y if x in domain.constants and y in domain.constants else True)
                    and _overlap(
                        domain, _argument_types(domain, e_params, x), _argument_types(domain, params, y)
                    )
                    for x, y in zip(e_args, args, strict=True)
                )
                for e_args, e_params in adds[pred]
            ):
                out.add((k, j))
    return out


def schema_bounds(domain: Domain, problem: Problem) -> dict[str, int]:
    """Upper bound on the ground instances of each action schema (see the module docstring)."""
    static = _static_predicates(domain)
    init_only = _init_only(domain)
    init_args: dict[str, list[tuple[str, ...]]] = {}
    for atom in problem.init:
        pred, *args = atom[1:-1].split(" ")
        init_args.setdefault(pred, []).append(tuple(args))
    size = _type_size(domain, problem)
    fan_outs: dict[tuple[str, tuple[int, ...]], int] = {}

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
    for k, action in enumerate(_actions(domain)):
        name = action[1]
        params = dict(domain.actions[name])
        atoms = [
            (pred, args)
            for j, (pred, args, negated) in enumerate(_atoms(_field(action, ":precondition")))
            if not negated and (pred in static or (k, j) in init_only)
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


def _type_size(domain: Domain, problem: Problem):
    """Objects per type tuple (an ``either`` is the union), memoised."""
    sizes: dict[tuple[str, ...], int] = {}

    def size(types: tuple[str, ...]) -> int:
        if types not in sizes:
            sizes[types] = sum(
                1 for t in problem.objects.values() if any(domain.is_subtype(t, ty) for ty in types)
            )
        return sizes[types]

    return size


def fact_bounds(domain: Domain, problem: Problem, bounds: dict[str, int] | None = None) -> dict[str, int]:
    """Upper bound on the ground atoms of each fluent predicate (see the module docstring)."""
    bounds = schema_bounds(domain, problem) if bounds is None else bounds
    size = _type_size(domain, problem)
    initial = Counter(atom[1:-1].split(" ", 1)[0] for atom in problem.init)
    fluent = set(domain.predicates) - _static_predicates(domain)
    facts = {pred: initial[pred] for pred in fluent}
    for action in _actions(domain):
        params = dict(domain.actions[action[1]])
        for pred, args, negated in _atoms(_field(action, ":effect")):
            if not negated and pred in facts:
                bindings = prod(size(params[a]) for a in dict.fromkeys(args) if a in params)
                facts[pred] += min(bounds[action[1]], bindings)
    return {pred: min(n, prod(size(types) for types in domain.predicates[pred])) for pred, n in facts.items()}


@dataclass(frozen=True)
class GroundEstimate:
    """What grounding a task may cost: per schema its instances and bytes, the atoms and their
    bytes, and the total."""

    instances: dict[str, int]
    action_bytes: dict[str, int]
    facts: int
    fact_bytes: int

    @property
    def total_bytes(self) -> int:
        return sum(self.action_bytes.values()) + self.fact_bytes

    def largest(self, k: int = 3) -> list[str]:
        """The `k` costliest schemas, largest first, as names."""
        return sorted(self.action_bytes, key=lambda name: -self.action_bytes[name])[:k]


def estimate(domain: Domain, problem: Problem) -> GroundEstimate:
    """The grounding's estimated cost (see the module docstring)."""
    bounds = schema_bounds(domain, problem)
    static = _static_predicates(domain)
    action_bytes = {}
    for action in _actions(domain):
        name = action[1]
        atoms = sum(1 for pred, _, _ in _atoms(_field(action, ":precondition")) if pred not in static)
        atoms += sum(1 for _ in _atoms(_field(action, ":effect")))
        per = BYTES_PER_ACTION + BYTES_PER_ATOM * atoms + BYTES_PER_PARAMETER * len(domain.actions[name])
        action_bytes[name] = bounds[name] * per
    facts = fact_bounds(domain, problem, bounds)
    fact_bytes = BYTES_PER_FACT * sum(facts.values()) + BYTES_PER_INIT_ATOM * len(problem.init)
    return GroundEstimate(bounds, action_bytes, sum(facts.values()), fact_bytes)


def check_ground_size(domain: Domain, problem: Problem, limit: int | None = None) -> GroundEstimate:
    """Raise `InputLimitError` when grounding the task may take more than `limit` bytes (default:
    `max_ground_bytes`); return the estimate otherwise."""
    limit = max_ground_bytes() if limit is None else limit
    est = estimate(domain, problem)
    if est.total_bytes > limit:
        parts = ", ".join(
            f"{name!r} up to {est.instances[name]:,} instances ({format_bytes(est.action_bytes[name])})"
            for name in est.largest()
        )
        raise InputLimitError(
            f"grounding may take about {format_bytes(est.total_bytes)}, more than the limit of "
            f"{format_bytes(limit)} (largest action schemas: {parts}; up to {est.facts:,} atoms: "
            f"{format_bytes(est.fact_bytes)}); set ${MAX_GROUND_BYTES_VAR} to raise it",
            file=problem.source,
        )
    return est
