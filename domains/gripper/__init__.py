"""The gripper domain: ``domain.pddl``, its problem ``generator`` and its `SPEC`."""

from __future__ import annotations

from domains.gripper import generator
from domains.spec import SplitGrid, bundled, grid

TABLE3 = {
    "train": SplitGrid(range(1, 81), grid(balls=(2, 4, 6, 8, 10))),
    "val": SplitGrid(range(1, 21), grid(balls=(2, 4, 6, 8, 10))),
    "test": SplitGrid(range(1, 21), grid(balls=(20, 40, 60, 80, 100))),
}
"""The paper's splits (appendix C, Table 3): seeds × parameter settings."""
REDUCED_TEST = SplitGrid(range(1, 13), grid(balls=(12, 14, 16)))
"""The ``test-reduced`` preset: larger than training, solved by A* + LM-cut in minutes."""
PLAN_DEFAULTS = {"balls": 6}
"""The generator parameters of ``python -m pddlgym_sl.plan gripper``."""

SPEC = bundled("gripper", generator, TABLE3, reduced_test=REDUCED_TEST, plan_defaults=PLAN_DEFAULTS)
