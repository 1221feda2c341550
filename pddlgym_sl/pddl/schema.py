"""What validation produces: `DomainSchema` (the vocabulary problems are checked against), and the
validated `Domain` and `Problem`, which also carry the canonical trees handed to the grounder.

The grounder (`pddlgym_sl.translate`) and the encoders only need these small records, so nothing
downstream depends on how the text was parsed.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class DomainSchema:
    """What a problem is checked against: the domain's name, types, constants and predicates.

    Attributes:
        name: domain name.
        types: declared type -> parent type, in declaration order (``object`` is the implicit root
            and not a key).
        constants: constant -> type.
        predicates: predicate -> for each argument, the tuple of types it accepts (more than one
            for ``(either ...)``), in declaration order.
    """

    name: str
    types: dict[str, str]
    constants: dict[str, str]
    predicates: dict[str, tuple[tuple[str, ...], ...]]

    @property
    def typed(self) -> bool:
        """Whether the domain declares any type besides ``object``."""
        return bool(self.types)

    def is_subtype(self, sub: str, sup: str) -> bool:
        """Whether `sub` is `sup` or a descendant of it (every type descends from ``object``)."""
        seen: set[str] = set()
        while sub not in seen:
            if sub == sup or sup == "object":
                return True
            seen.add(sub)
            sub = self.types.get(sub, "object")
        return False


@dataclass(frozen=True, eq=False)
class Domain(DomainSchema):
    """A validated domain file.

    Attributes (besides the `DomainSchema` ones):
        requirements: the declared requirements (a subset of the supported ones).
        actions: action name -> its parameters as (variable, accepted types) pairs.
        tree: the canonical ``(define (domain ...) ...)`` tree (nested lists of strings).
        source: the file name (or the name given to `parse_domain_string`).
    """

    requirements: frozenset[str] = frozenset()
    actions: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = field(default_factory=dict)
    tree: list = field(default_factory=list, repr=False)
    source: str | None = None


@dataclass(frozen=True, eq=False)
class Problem:
    """A validated problem file.

    Attributes:
        name, domain_name: the problem's and its domain's names.
        requirements: the problem's own declared requirements.
        objects: object -> type, the domain's constants first, then the problem's objects.
        init: the initial atoms as ``"(pred a b)"`` names (lower case, single spaces).
        tree: the canonical ``(define (problem ...) ...)`` tree.
        source: the file name (or the name given to `parse_problem_string`).
    """

    name: str
    domain_name: str
    requirements: frozenset[str]
    objects: dict[str, str]
    init: tuple[str, ...]
    tree: list = field(repr=False)
    source: str | None = None
