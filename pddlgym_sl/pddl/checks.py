"""Shape and formula checks shared by domain and problem validation (see `validate`).

`Checker` knows the source file and checks the small shapes of PDDL (names, variables, typed
lists, sections, requirements); `FormulaChecker` adds a `DomainSchema` and checks atoms,
conditions and effects, raising on every construct outside the fragment we compile: STRIPS with
typing, negative conditions (``:negative-preconditions``) and equality (``:equality``). A
construct of that fragment must still be declared: ``(not p)`` in a condition needs
``:negative-preconditions`` and ``(= ?x ?y)`` needs ``:equality`` (``(not (= ?x ?y))`` needs only
``:equality``, as most published domains write it). Every error carries the line of the
offending node.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pddlgym_sl.errors import ParseError, SemanticError, UnsupportedRequirementError
from pddlgym_sl.pddl.reader import SList, Symbol, head_of
from pddlgym_sl.pddl.schema import DomainSchema

SUPPORTED_REQUIREMENTS = (":strips", ":typing", ":negative-preconditions", ":equality")
_SUPPORTED_TEXT = ", ".join(SUPPORTED_REQUIREMENTS)

# Connectives and terms of conditions (preconditions, goals) outside STRIPS -> requirement.
CONDITION_CONSTRUCTS = {
    "not": ":negative-preconditions",
    "or": ":disjunctive-preconditions",
    "imply": ":disjunctive-preconditions",
    "exists": ":existential-preconditions",
    "forall": ":universal-preconditions",
    "=": ":equality",
    "<": ":numeric-fluents",
    "<=": ":numeric-fluents",
    ">": ":numeric-fluents",
    ">=": ":numeric-fluents",
    "preference": ":preferences",
}
# Effect constructs outside STRIPS -> requirement ("increase (total-cost)" is :action-costs).
EFFECT_CONSTRUCTS = {
    "when": ":conditional-effects",
    "forall": ":conditional-effects",
    "increase": ":numeric-fluents",
    "decrease": ":numeric-fluents",
    "assign": ":numeric-fluents",
    "scale-up": ":numeric-fluents",
    "scale-down": ":numeric-fluents",
    "=": ":equality",
    "or": ":disjunctive-preconditions",
    "exists": ":existential-preconditions",
}
RESERVED = frozenset({"and", "either", "define", "-", *CONDITION_CONSTRUCTS, *EFFECT_CONSTRUCTS})
UNSUPPORTED_SECTIONS = {
    ":functions": ":numeric-fluents",
    ":durative-action": ":durative-actions",
    ":derived": ":derived-predicates",
    ":constraints": ":constraints",
    ":metric": ":action-costs",
}


class Checker:
    """Holds the source name so that every helper can raise errors that point into the file."""

    def __init__(self, source: str | Path | None) -> None:
        self.source = source

    def parse_error(self, cause: str, node: Any) -> ParseError:
        return ParseError(cause, file=self.source, line=node.line)

    def semantic_error(self, cause: str, node: Any) -> SemanticError:
        return SemanticError(cause, file=self.source, line=node.line)

    def unsupported(self, what: str, requirement: str, node: Any) -> UnsupportedRequirementError:
        return UnsupportedRequirementError(
            f"{what} needs requirement {requirement}, which is not supported (supported: {_SUPPORTED_TEXT})",
            file=self.source,
            line=node.line,
        )

    def undeclared(self, what: str, requirement: str, node: Any) -> UnsupportedRequirementError:
        return UnsupportedRequirementError(
            f"{what} needs requirement {requirement}, which the file does not declare "
            f"(add it to (:requirements ...))",
            file=self.source,
            line=node.line,
        )

    # ----------------------------------------------------------------- small shapes
    def name(self, node: Any, what: str) -> Symbol:
        """A plain name (not a list, variable or keyword)."""
        if not isinstance(node, Symbol):
            raise self.parse_error(f"expected {what}, found a list", node)
        if node[0] in "?:" or node == "-":
            raise self.parse_error(f"expected {what}, found {node!r}", node)
        return node

    def variable(self, node: Any, what: str) -> Symbol:
        if not isinstance(node, Symbol):
            raise self.parse_error(f"expected {what}, found a list", node)
        if node[0] != "?" or len(node) == 1:
            raise self.parse_error(f"expected {what} (a '?variable'), found {node!r}", node)
        return node

    def sections(self, tree: SList, allowed: tuple[str, ...], kind: str) -> dict[str, SList]:
        """Map each section keyword of a define-form (from tree[2]) to its list; actions under
        the key ":action" are collected by the caller."""
        found: dict[str, SList] = {}
        for sec in tree[2:]:
            if not isinstance(sec, SList) or not sec:
                raise self.parse_error(f"expected a section '(:keyword ...)' in the {kind}", sec)
            head = sec[0]
            if not isinstance(head, Symbol) or not head.startswith(":"):
                raise self.parse_error(f"expected a section keyword like ':init', found {head!r}", sec)
            if head in UNSUPPORTED_SECTIONS:
                raise self.unsupported(f"section ({head} ...)", UNSUPPORTED_SECTIONS[head], sec)
            if head == ":action" and ":action" in allowed:
                continue
            if head not in allowed:
                raise self.parse_error(f"unknown {kind} section ({head} ...)", sec)
            if head in found:
                raise self.parse_error(
                    f"duplicate section ({head} ...); the first one is on line {found[head].line}", sec
                )
            found[head] = sec
        return found

    def requirements(self, sec: SList | None) -> frozenset[str]:
        """The declared requirements of a ``(:requirements ...)`` section (None: no section)."""
        declared = set()
        for req in sec[1:] if sec is not None else ():
            if not isinstance(req, Symbol) or not req.startswith(":"):
                raise self.parse_error(f"expected a requirement like ':strips', found {req!r}", req)
            if req not in SUPPORTED_REQUIREMENTS:
                raise UnsupportedRequirementError(
                    f"requirement {req} is not supported (supported: {_SUPPORTED_TEXT})",
                    file=self.source,
                    line=req.line,
                )
            declared.add(str(req))
        return frozenset(declared)

    def typed_list(
        self, items: list, *, variables: bool, allow_either: bool, what: str
    ) -> list[tuple[Symbol, tuple[Symbol, ...]]]:
        """Parse ``a b - t c - (either t u) d`` into [(name, types), ...]; untyped -> object."""
        out: list[tuple[Symbol, tuple[Symbol, ...]]] = []
        pending: list[Symbol] = []
        i = 0
        while i < len(items):
            item = items[i]
            if isinstance(item, Symbol) and item == "-":
                if not pending:
                    raise self.parse_error(f"'-' in {what} must follow the names it gives a type", item)
                if i + 1 >= len(items):
                    raise self.parse_error(f"'-' at the end of {what} must be followed by a type", item)
                types = self.type_spec(items[i + 1], allow_either, what)
                out.extend((n, types) for n in pending)
                pending = []
                i += 2
                continue
            if variables:
                pending.append(self.variable(item, f"a variable in {what}"))
            else:
                pending.append(self.name(item, f"a name in {what}"))
            i += 1
        out.extend((n, (Symbol("object", n.line),)) for n in pending)
        return out

    def type_spec(self, node: Any, allow_either: bool, what: str) -> tuple[Symbol, ...]:
        if isinstance(node, Symbol):
            return (self.name(node, f"a type name in {what}"),)
        if node and node[0] == "either":
            if not allow_either:
                raise self.parse_error(f"(either ...) is not allowed in {what}", node)
            if len(node) < 2:
                raise self.parse_error("(either ...) needs at least one type", node)
            return tuple(self.name(t, "a type name in (either ...)") for t in node[1:])
        raise self.parse_error(f"expected a type name or (either ...) in {what}", node)

    def known_types(self, types: tuple[Symbol, ...], schema_types: dict[str, str], what: str) -> None:
        for t in types:
            if t != "object" and t not in schema_types:
                raise self.semantic_error(f"unknown type {t!r} in {what}", t)


@dataclass
class Scope:
    """Where an atom occurs and which terms it may use."""

    where: str  # e.g. "the precondition of action 'pick'", ":init"
    variables: dict[str, tuple[str, ...]] | None  # None: variables are not allowed here
    objects: dict[str, str]  # usable object/constant -> type
    object_kind: str  # "constant" (in a domain) or "object" (in a problem)
    strict_types: bool  # problems: object type must be a subtype; actions: types must overlap
    declared: frozenset[str] = frozenset()  # requirements declared by the domain (and problem)


class FormulaChecker(Checker):
    """Checks atoms, conditions and effects against a schema."""

    def __init__(self, source: str | Path | None, schema: DomainSchema) -> None:
        super().__init__(source)
        self.schema = schema

    def atom(self, node: Any, scope: Scope) -> SList:
        if not isinstance(node, SList):
            raise self.parse_error(
                f"expected an atom '(predicate ...)' in {scope.where}, found {node!r}", node
            )
        if not node:
            raise self.parse_error(f"empty atom '()' in {scope.where}", node)
        pred = node[0]
        if not isinstance(pred, Symbol) or pred[0] in "?:":
            shown = "a list" if isinstance(pred, SList) else repr(pred)
            raise self.parse_error(f"expected a predicate name in {scope.where}, found {shown}", node)
        if pred not in self.schema.predicates:
            raise self.semantic_error(f"unknown predicate {pred!r} in {scope.where}", node)
        params = self.schema.predicates[pred]
        args = node[1:]
        if len(args) != len(params):
            raise self.semantic_error(
                f"predicate {pred!r} takes {len(params)} argument(s) "
                f"but is given {len(args)} in {scope.where}",
                node,
            )
        for pos, (arg, accepted) in enumerate(zip(args, params, strict=True), start=1):
            if not isinstance(arg, Symbol):
                raise self.parse_error(
                    f"argument {pos} of {pred!r} in {scope.where} must be a name, not a list", arg
                )
            arg_types = self.term_types(arg, scope)
            if self.schema.typed and not self.compatible(arg_types, accepted, scope.strict_types):
                raise self.semantic_error(
                    f"type mismatch in {scope.where}: argument {pos} of {pred!r} must be of type "
                    f"{' or '.join(accepted)}, but {arg} is of type {' or '.join(arg_types)}",
                    arg,
                )
        return node

    def term_types(self, arg: Symbol, scope: Scope) -> tuple[str, ...]:
        if arg[0] == "?":
            if scope.variables is None:
                raise self.semantic_error(f"variable {arg} in {scope.where}: only objects are allowed", arg)
            if arg not in scope.variables:
                raise self.semantic_error(f"variable {arg} in {scope.where} is not a parameter", arg)
            return scope.variables[arg]
        if arg not in scope.objects:
            if scope.object_kind == "constant":
                raise self.semantic_error(
                    f"unknown constant {arg!r} in {scope.where} (not declared in :constants)", arg
                )
            raise self.semantic_error(
                f"undefined object {arg!r} in {scope.where} (not in :objects or the domain's :constants)", arg
            )
        return (scope.objects[arg],)

    def compatible(self, arg_types: tuple[str, ...], accepted: tuple[str, ...], strict: bool) -> bool:
        sub = self.schema.is_subtype
        if strict:
            return any(sub(a, p) for a in arg_types for p in accepted)
        return any(sub(a, p) or sub(p, a) for a in arg_types for p in accepted)

    def head(self, node: Any, scope: Scope) -> Symbol | None:
        """The head of a formula list, or None when `node` is not a usable formula."""
        if not isinstance(node, SList):
            raise self.parse_error(f"expected a formula '(...)' in {scope.where}, found {node!r}", node)
        if not node:
            raise self.parse_error(f"empty formula '()' in {scope.where}", node)
        head = node[0]
        return head if isinstance(head, Symbol) else None

    def condition(self, node: Any, scope: Scope, out: list[SList]) -> None:
        """Append the literals of a conjunctive condition to `out` (nested ``and`` flattened): atoms,
        ``(not atom)``, ``(= t1 t2)`` and ``(not (= t1 t2))``."""
        head = self.head(node, scope)
        if head == "and":
            for child in node[1:]:
                self.condition(child, scope, out)
        elif head == "not":
            inner = node[1] if len(node) == 2 else None
            inner_head = head_of(inner)
            if inner_head == "=":
                out.append(SList(node.line, [head, self.equality(inner, scope)]))
                return
            if inner_head is None or inner_head in CONDITION_CONSTRUCTS or inner_head == "and":
                raise self.unsupported(
                    f"negative condition (not ...) around a formula in {scope.where}",
                    ":disjunctive-preconditions",
                    node,
                )
            if ":negative-preconditions" not in scope.declared:
                raise self.undeclared(
                    f"negative condition (not ...) in {scope.where}", ":negative-preconditions", node
                )
            out.append(SList(node.line, [head, self.atom(inner, scope)]))
        elif head == "=":
            out.append(self.equality(node, scope))
        elif head in CONDITION_CONSTRUCTS:
            raise self.unsupported(
                f"construct ({head} ...) in {scope.where}", CONDITION_CONSTRUCTS[head], node
            )
        else:
            out.append(self.atom(node, scope))

    def equality(self, node: SList, scope: Scope) -> SList:
        """Check ``(= t1 t2)`` (two variables or objects); needs ``:equality``."""
        if ":equality" not in scope.declared:
            raise self.undeclared(f"equality (= ...) in {scope.where}", ":equality", node)
        if len(node) != 3:
            raise self.parse_error(f"(= ...) in {scope.where} takes exactly two terms", node)
        for pos, arg in enumerate(node[1:], start=1):
            if not isinstance(arg, Symbol):
                raise self.parse_error(
                    f"term {pos} of (= ...) in {scope.where} must be a name, not a list", arg
                )
            self.term_types(arg, scope)
        return node

    def effect(self, node: Any, scope: Scope, out: list[SList]) -> None:
        """Append the literals of a conjunctive STRIPS effect to `out` (nested ``and`` flattened)."""
        head = self.head(node, scope)
        if head == "and":
            for child in node[1:]:
                self.effect(child, scope, out)
        elif head == "not":
            inner = node[1] if len(node) == 2 else None
            inner_head = head_of(inner)
            if inner_head is None or inner_head in ("and", "not") or inner_head in EFFECT_CONSTRUCTS:
                raise self.parse_error(f"(not ...) in {scope.where} must wrap exactly one atom", node)
            out.append(SList(node.line, [head, self.atom(inner, scope)]))
        elif head == "=":
            raise self.parse_error(f"equality (= ...) in {scope.where} cannot be an effect", node)
        elif head in EFFECT_CONSTRUCTS:
            req = EFFECT_CONSTRUCTS[head]
            if head == "increase" and len(node) > 1 and node[1] == ["total-cost"]:
                req = ":action-costs"
            raise self.unsupported(f"construct ({head} ...) in {scope.where}", req, node)
        else:
            out.append(self.atom(node, scope))


def define_header(ck: Checker, tree: SList, kind: str, other: str) -> Symbol:
    """Check ``(define (KIND NAME) ...)`` and return NAME; name the mix-up of domain/problem."""
    if len(tree) < 2 or not isinstance(tree[1], SList):
        raise ck.parse_error(f"expected (define ({kind} NAME) ...)", tree)
    header = tree[1]
    if header and header[0] == other:
        raise ck.parse_error(
            f"expected ({kind} NAME) but found ({other} ...): this is a {other} file, not a {kind} file",
            header,
        )
    if len(header) != 2 or header[0] != kind:
        raise ck.parse_error(f"expected ({kind} NAME) after 'define'", header)
    return ck.name(header[1], f"a {kind} name")
