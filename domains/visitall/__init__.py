"""The visitall domain: ``domain.pddl``, its problem ``generator`` and its `SPEC`."""

from __future__ import annotations

from domains.spec import SplitGrid, bundled
from domains.visitall import generator


def _square(sizes: tuple[int, ...]) -> list[dict[str, int | float]]:
    """Square grids of the given sizes, each with half and full goal coverage."""
    return [{"x": s, "y": s, "ratio": r} for s in sizes for r in (0.5, 1.0)]


TABLE3 = {
    "train": SplitGrid(range(1, 71), _square((3, 4, 5))),
    "val": SplitGrid(range(1, 18), _square((3, 4, 5))),
    "test": SplitGrid(range(1, 18), _square((5, 6, 7))),
}
"""The paper's splits (appendix C, Table 3): seeds × parameter settings."""
REDUCED_TEST = SplitGrid(range(1, 18), _square((5, 6, 7)))
"""The ``test-reduced`` preset: larger than training, solved by A* + LM-cut in minutes."""
PLAN_DEFAULTS = {"x": 4, "y": 4, "ratio": 1.0}
"""The generator parameters of ``python -m pddlgym_sl.plan visitall``."""

SPEC = bundled("visitall", generator, TABLE3, reduced_test=REDUCED_TEST, plan_defaults=PLAN_DEFAULTS)
