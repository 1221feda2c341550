"""Check a PDDL tree against the fragment we compile before the grounder sees it.

The fragment: STRIPS with typing (hierarchies, constants, ``(either ...)``), negative conditions
and equality. Grounders accept many broken inputs silently (unknown predicates in ``:init``,
wrong arities, undefined objects, problems for another domain, requirements they ignore) and
report the rest without a line number. These checks run on the line-numbered tree from
`reader.read` and raise

* `ParseError` for a wrong shape (sections, fields, typed lists, formulas),
* `UnsupportedRequirementError` for a declared requirement outside the fragment, for any *use*
  of a construct outside it (``or``, ``forall``, ``exists``, ``when``, numeric expressions,
  action costs, derived predicates, ...), and for a construct of the fragment whose requirement
  is not declared (``not`` in a condition without ``:negative-preconditions``, ``=`` without
  ``:equality``),
* `SemanticError` for unknown or duplicate names, wrong arities and type mismatches,
* `GroundingError` for a problem written for another domain,

each with the file and line. On success they return a `Domain` / `Problem` holding the same
content as a canonical tree (sections in the standard order, flat ``(and ...)`` conditions and
effects, a regenerated ``:types`` list) for the grounder.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pddlgym_sl.errors import GroundingError, InputLimitError
from pddlgym_sl.pddl.checks import (
    CONDITION_CONSTRUCTS,
    RESERVED,
    Checker,
    FormulaChecker,
    Scope,
    define_header,
)
from pddlgym_sl.pddl.reader import SList, Symbol, head_of
from pddlgym_sl.pddl.schema import Domain, DomainSchema, Problem

_DOMAIN_SECTIONS = (":requirements", ":types", ":constants", ":predicates")
_PROBLEM_SECTIONS = (":domain", ":requirements", ":objects", ":init", ":goal")
_ACTION_FIELDS = (":parameters", ":precondition", ":effect")


# --------------------------------------------------------------------------- domain
def check_domain(tree: SList, source: str | Path | None = None) -> Domain:
    """Validate a domain tree; return the `Domain` with its canonical tree."""
    ck = Checker(source)
    name = define_header(ck, tree, "domain", "problem")
    sections = ck.sections(tree, (*_DOMAIN_SECTIONS, ":action"), "domain")
    declared = ck.requirements(sections.get(":requirements"))

    types = _domain_types(ck, sections.get(":types"))
    constants: dict[str, str] = {}
    if ":constants" in sections:
        for c, (t,) in ck.typed_list(
            sections[":constants"][1:], variables=False, allow_either=False, what=":constants"
        ):
            ck.known_types((t,), types, ":constants")
            if c in constants:
                raise ck.semantic_error(f"constant {c!r} is declared twice", c)
            constants[c] = t

    predicates: dict[str, tuple[tuple[str, ...], ...]] = {}
    pred_lines: dict[str, int] = {}
    for decl in sections[":predicates"][1:] if ":predicates" in sections else ():
        if not isinstance(decl, SList) or not decl:
            raise ck.parse_error("expected a predicate declaration '(name ?x ...)' in :predicates", decl)
        pname = ck.name(decl[0], "a predicate name")
        if pname in RESERVED:
            raise ck.parse_error(f"{pname!r} is a reserved word and cannot name a predicate", pname)
        if pname in predicates:
            raise ck.semantic_error(
                f"predicate {pname!r} is declared twice (first on line {pred_lines[pname]})", pname
            )
        params = ck.typed_list(decl[1:], variables=True, allow_either=True, what=f"predicate {pname!r}")
        _unique_variables(ck, params, f"predicate {pname!r}")
        for _, ts in params:
            ck.known_types(ts, types, f"predicate {pname!r}")
        predicates[pname] = tuple(tuple(ts) for _, ts in params)
        pred_lines[pname] = pname.line

    schema = DomainSchema(name=str(name), types=types, constants=constants, predicates=predicates)
    fc = FormulaChecker(source, schema)
    actions: list[list] = []
    signatures: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {}
    action_lines: dict[str, int] = {}
    for sec in tree[2:]:
        if sec[0] == ":action":
            action, params = _action(fc, sec, declared)
            aname = action[1]
            if aname in action_lines:
                raise ck.semantic_error(
                    f"action {aname!r} is defined twice (first on line {action_lines[aname]})", aname
                )
            action_lines[aname] = aname.line
            actions.append(action)
            signatures[str(aname)] = params

    canonical: list = ["define", ["domain", name]]
    if declared:
        canonical.append([":requirements", *sorted(declared)])
    if types:
        canonical.append([":types", *(x for t, p in types.items() for x in (t, "-", p))])
    if ":constants" in sections:
        canonical.append(sections[":constants"])
    canonical.append(sections.get(":predicates", [":predicates"]))
    canonical.extend(actions)
    return Domain(
        name=schema.name,
        types=schema.types,
        constants=schema.constants,
        predicates=schema.predicates,
        requirements=declared,
        actions=signatures,
        tree=canonical,
        source=None if source is None else str(source),
    )


MAX_TYPE_DEPTH = 256
"""Deepest type hierarchy accepted (the IPC 2023 LT domains have depth 3 at most)."""


def _domain_types(ck: Checker, sec: SList | None) -> dict[str, str]:
    """Declared types -> parent, checked for unknown parents, duplicates and cycles."""
    if sec is None:
        return {}
    types: dict[str, str] = {}
    parents: dict[str, Symbol] = {}
    for t, (parent,) in ck.typed_list(sec[1:], variables=False, allow_either=False, what=":types"):
        if t == "object":
            if parent != "object":
                raise ck.semantic_error("'object' is the root type and cannot have a parent", t)
            continue
        if t in types:
            raise ck.semantic_error(f"type {t!r} is declared twice", t)
        types[t] = str(parent)
        parents[t] = parent
    for t, parent in parents.items():
        if parent != "object" and parent not in types:
            raise ck.semantic_error(f"unknown type {parent!r} (parent of type {t!r}) in :types", parent)
    # depth of every type (object: 0), in one pass over the hierarchy: each type is walked once
    depth: dict[str, int] = {"object": 0}
    for start in types:
        path: list[str] = []
        on_path: set[str] = set()
        t = start
        while t not in depth:
            if t in on_path:
                raise ck.semantic_error(f"cyclic type hierarchy through type {start!r}", parents[start])
            path.append(t)
            on_path.add(t)
            t = types[t]
        for k, u in enumerate(reversed(path), 1):
            depth[u] = depth[t] + k
            if depth[u] > MAX_TYPE_DEPTH:
                raise InputLimitError(
                    f"type {u!r} is {depth[u]} levels below 'object', more than the limit of "
                    f"{MAX_TYPE_DEPTH} (every type test walks the hierarchy)",
                    file=ck.source,
                    line=parents[u].line,
                )
    return types


def _unique_variables(ck: Checker, params: list[tuple[Symbol, tuple[Symbol, ...]]], what: str) -> None:
    seen: set[str] = set()
    for v, _ in params:
        if v in seen:
            raise ck.semantic_error(f"variable {v} appears twice in {what}", v)
        seen.add(v)


def _action(
    fc: FormulaChecker, sec: SList, declared: frozenset[str]
) -> tuple[list, tuple[tuple[str, tuple[str, ...]], ...]]:
    """Check one ``(:action ...)``; return its canonical form and its parameters."""
    if len(sec) < 2:
        raise fc.parse_error("(:action ...) needs a name", sec)
    aname = fc.name(sec[1], "an action name")
    fields: dict[str, Any] = {}
    rest = sec[2:]
    for i in range(0, len(rest), 2):
        key = rest[i]
        if not isinstance(key, Symbol) or key not in _ACTION_FIELDS:
            shown = "a list" if isinstance(key, SList) else repr(key)
            raise fc.parse_error(
                f"expected one of {', '.join(_ACTION_FIELDS)} in action {aname!r}, found {shown}", key
            )
        if key in fields:
            raise fc.parse_error(f"{key} appears twice in action {aname!r}", key)
        if i + 1 >= len(rest):
            raise fc.parse_error(f"{key} of action {aname!r} has no value", key)
        fields[key] = rest[i + 1]

    params_node = fields.get(":parameters", SList(sec.line))
    if not isinstance(params_node, SList):
        raise fc.parse_error(f"the :parameters of action {aname!r} must be a list", params_node)
    what = f"the parameters of action {aname!r}"
    params = fc.typed_list(list(params_node), variables=True, allow_either=True, what=what)
    _unique_variables(fc, params, what)
    for _, ts in params:
        fc.known_types(ts, fc.schema.types, what)
    variables = {str(v): tuple(str(t) for t in ts) for v, ts in params}

    def scope(part: str) -> Scope:
        return Scope(
            where=f"the {part} of action {aname!r}",
            variables=variables,
            objects=fc.schema.constants,
            object_kind="constant",
            strict_types=False,
            declared=declared,
        )

    pre: list[SList] = []
    eff: list[SList] = []
    if ":precondition" in fields and fields[":precondition"] != []:
        fc.condition(fields[":precondition"], scope("precondition"), pre)
    if ":effect" in fields and fields[":effect"] != []:
        fc.effect(fields[":effect"], scope("effect"), eff)
    canonical = [
        ":action",
        aname,
        ":parameters",
        params_node,
        ":precondition",
        ["and", *pre],
        ":effect",
        ["and", *eff],
    ]
    return canonical, tuple((str(v), tuple(str(t) for t in ts)) for v, ts in params)


# --------------------------------------------------------------------------- problem
def check_problem(tree: SList, schema: Domain, source: str | Path | None = None) -> Problem:
    """Validate a problem tree against its `Domain`; return the `Problem` with its canonical tree."""
    fc = FormulaChecker(source, schema)
    name = define_header(fc, tree, "problem", "domain")
    sections = fc.sections(tree, _PROBLEM_SECTIONS, "problem")
    for required in (":domain", ":init", ":goal"):
        if required not in sections:
            raise fc.parse_error(f"problem {name!r} has no ({required} ...) section", tree)

    dom = sections[":domain"]
    if len(dom) != 2:
        raise fc.parse_error("expected (:domain NAME)", dom)
    dname = fc.name(dom[1], "a domain name")
    if dname != schema.name:
        raise GroundingError(
            f"problem is for domain {dname!r}, not {schema.name!r} (the domain it was loaded with)",
            file=source,
            line=dom.line,
        )
    requirements = fc.requirements(sections.get(":requirements"))
    in_force = schema.requirements | requirements  # the domain's and the problem's, built once

    objects = dict(schema.constants)
    if ":objects" in sections:
        object_names: set[str] = set()
        for o, (t,) in fc.typed_list(
            sections[":objects"][1:], variables=False, allow_either=False, what=":objects"
        ):
            fc.known_types((t,), schema.types, ":objects")
            if o in object_names:
                raise fc.semantic_error(f"object {o!r} is declared twice", o)
            if o in schema.constants and schema.constants[o] != t:
                raise fc.semantic_error(
                    f"object {o!r} is a domain constant of type {schema.constants[o]!r}, not {t!r}", o
                )
            object_names.add(o)
            objects[o] = str(t)

    init_scope = Scope(
        where=":init",
        variables=None,
        objects=objects,
        object_kind="object",
        strict_types=True,
        declared=in_force,
    )
    goal_scope = replace(init_scope, where=":goal")

    init = []
    for atom in sections[":init"][1:]:
        head = head_of(atom)
        if head == "not":
            raise fc.parse_error("negative literal (not ...) in :init: list only the true atoms", atom)
        if head == "=":
            raise fc.unsupported("assignment (= ...) in :init", ":numeric-fluents", atom)
        if head in CONDITION_CONSTRUCTS:
            raise fc.unsupported(f"({head} ...) in :init", CONDITION_CONSTRUCTS[head], atom)
        init.append(fc.atom(atom, init_scope))

    goal_sec = sections[":goal"]
    if len(goal_sec) != 2:
        raise fc.parse_error(
            "(:goal ...) must hold exactly one formula; join several with (and ...)", goal_sec
        )
    goal: list[SList] = []
    if goal_sec[1] != []:
        fc.condition(goal_sec[1], goal_scope, goal)

    canonical: list = ["define", ["problem", name], [":domain", dname]]
    if ":objects" in sections:
        canonical.append(sections[":objects"])
    canonical.append([":init", *init])
    canonical.append([":goal", ["and", *goal]])
    return Problem(
        name=str(name),
        domain_name=str(dname),
        requirements=requirements,
        objects=objects,
        init=tuple(dict.fromkeys(_atom_name(a) for a in init)),
        tree=canonical,
        source=None if source is None else str(source),
    )


def _atom_name(atom: list) -> str:
    return "(" + " ".join(atom) + ")"
