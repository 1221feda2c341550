"""The blocksworld domain (4 operators): ``domain.pddl``, its problem ``generator`` and its `SPEC`."""

from __future__ import annotations

from pathlib import Path

from domains.blocksworld import generator
from domains.spec import DomainSpec, SplitGrid, grid

__all__ = ["SPEC"]

SPEC = DomainSpec(
    name="blocksworld",
    domain_file=Path(__file__).resolve().parent / "domain.pddl",
    generate=generator.generate,
    parameters=generator.ABBREVIATIONS,
    splits={
        "train": SplitGrid(range(1, 39), grid(blocks=range(5, 17))),
        "val": SplitGrid(range(1, 12), grid(blocks=range(5, 17))),
        "test": SplitGrid(range(1, 12), grid(blocks=range(11, 23))),
    },
    reduced_test=SplitGrid(range(1, 12), grid(blocks=(11, 12, 13))),
    plan_defaults={"blocks": 6},
)
"""Table 3 of the paper (train / val / test), the test-reduced preset and the plan CLI's default."""
