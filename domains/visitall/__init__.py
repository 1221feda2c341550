"""The visitall domain: ``domain.pddl`` (package data), its problem ``generator`` and its `SPEC`."""

from __future__ import annotations

from pathlib import Path

from domains.spec import DomainSpec, SplitGrid
from domains.visitall import generator

__all__ = ["SPEC"]


def _square(sizes: tuple[int, ...]) -> list[dict[str, int | float]]:
    """Square grids of the given sizes, each with half and full goal coverage."""
    return [{"x": s, "y": s, "ratio": r} for s in sizes for r in (0.5, 1.0)]


SPEC = DomainSpec(
    name="visitall",
    domain_file=Path(__file__).resolve().parent / "domain.pddl",
    generate=generator.generate,
    parameters=generator.ABBREVIATIONS,
    splits={
        "train": SplitGrid(range(1, 71), _square((3, 4, 5))),
        "val": SplitGrid(range(1, 18), _square((3, 4, 5))),
        "test": SplitGrid(range(1, 18), _square((5, 6, 7))),
    },
    reduced_test=SplitGrid(range(1, 18), _square((5, 6, 7))),
    plan_defaults={"x": 4, "y": 4, "ratio": 1.0},
)
"""Table 3 of the paper (train / val / test), the test-reduced preset and the plan CLI's default."""
