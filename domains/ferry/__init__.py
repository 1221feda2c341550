"""The ferry domain: ``domain.pddl`` (package data), its problem ``generator`` and its `SPEC`."""

from __future__ import annotations

from pathlib import Path

from domains.ferry import generator
from domains.spec import DomainSpec, SplitGrid, grid

__all__ = ["SPEC"]

SPEC = DomainSpec(
    name="ferry",
    domain_file=Path(__file__).resolve().parent / "domain.pddl",
    generate=generator.generate,
    parameters=generator.ABBREVIATIONS,
    splits={
        "train": SplitGrid(range(1, 17), grid(locations=range(2, 7), cars=range(2, 7))),
        "val": SplitGrid(range(1, 5), grid(locations=range(2, 7), cars=range(2, 7))),
        "test": SplitGrid(range(1, 17), grid(locations=(10, 15, 20, 25, 30), cars=(10, 15, 20, 25, 30))),
    },
    reduced_test=SplitGrid(range(1, 5), grid(locations=(7, 8, 9), cars=(7, 8, 9))),
    plan_defaults={"locations": 5, "cars": 5},
)
"""Table 3 of the paper (train / val / test), the test-reduced preset and the plan CLI's default."""
