"""`DomainSchema`: the part of a parsed domain that problems are checked against.

The problem validator needs only the domain's name, type hierarchy, constants and predicate
signatures. `schema_of` reads them off any pyperplan ``Domain``, so `parse_problem` works with
domains however they were parsed, and nothing extra has to be attached to pyperplan's objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DomainSchema:
    """What a problem is checked against: the domain's name, types, constants and predicates.

    Attributes:
        name: domain name.
        types: declared type -> parent type (``object`` is the implicit root and not a key).
        constants: constant -> type.
        predicates: predicate -> for each argument, the tuple of types it accepts.
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


def schema_of(domain: Any) -> DomainSchema:
    """The `DomainSchema` of a pyperplan ``Domain`` (as returned by `parse_domain`)."""
    types = {}
    for name, t in domain.types.items():
        if name != "object":
            parent = t.parent
            types[name] = parent if isinstance(parent, str) else getattr(parent, "name", "object")
    return DomainSchema(
        name=domain.name,
        types=types,
        constants={c: t.name for c, t in domain.constants.items()},
        predicates={
            n: tuple(tuple(t.name for t in ts) for _, ts in p.signature) for n, p in domain.predicates.items()
        },
    )
