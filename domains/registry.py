"""The registry of domains: one line per domain, in display order.

To add a domain: a package ``domains/<name>/`` with ``domain.pddl``, a ``generator.py`` and an
``__init__.py`` defining ``SPEC = DomainSpec(...)`` (`domains.spec`), and one line below.
"""

from __future__ import annotations

from domains import blocksworld, ferry, gripper, visitall
from domains.spec import DomainSpec

__all__ = ["DOMAINS"]

DOMAINS: dict[str, DomainSpec] = {
    "blocksworld": blocksworld.SPEC,
    "ferry": ferry.SPEC,
    "gripper": gripper.SPEC,
    "visitall": visitall.SPEC,
}
"""The registered domains by name; the order is the display order."""
