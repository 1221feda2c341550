"""The gripper domain: ``domain.pddl`` (package data), its problem ``generator`` and its `SPEC`."""

from __future__ import annotations

from pathlib import Path

from domains.gripper import generator
from domains.spec import DomainSpec, SplitGrid, grid

__all__ = ["SPEC"]

SPEC = DomainSpec(
    name="gripper",
    domain_file=Path(__file__).resolve().parent / "domain.pddl",
    generate=generator.generate,
    parameters=generator.ABBREVIATIONS,
    splits={
        "train": SplitGrid(range(1, 81), grid(balls=(2, 4, 6, 8, 10))),
        "val": SplitGrid(range(1, 21), grid(balls=(2, 4, 6, 8, 10))),
        "test": SplitGrid(range(1, 21), grid(balls=(20, 40, 60, 80, 100))),
    },
    reduced_test=SplitGrid(range(1, 13), grid(balls=(12, 14, 16))),
    plan_defaults={"balls": 6},
)
"""Table 3 of the paper (train / val / test), the test-reduced preset and the plan CLI's default."""
