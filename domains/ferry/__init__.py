"""The ferry domain: ``domain.pddl``, its problem ``generator`` and its `SPEC`."""

from __future__ import annotations

from domains.ferry import generator
from domains.spec import SplitGrid, bundled, grid

TABLE3 = {
    "train": SplitGrid(range(1, 17), grid(locations=range(2, 7), cars=range(2, 7))),
    "val": SplitGrid(range(1, 5), grid(locations=range(2, 7), cars=range(2, 7))),
    "test": SplitGrid(range(1, 17), grid(locations=(10, 15, 20, 25, 30), cars=(10, 15, 20, 25, 30))),
}
"""The paper's splits (appendix C, Table 3): seeds × parameter settings."""
REDUCED_TEST = SplitGrid(range(1, 5), grid(locations=(7, 8, 9), cars=(7, 8, 9)))
"""The ``test-reduced`` preset: larger than training, solved by A* + LM-cut in minutes."""
PLAN_DEFAULTS = {"locations": 5, "cars": 5}
"""The generator parameters of ``python -m pddlgym_sl.plan ferry``."""

SPEC = bundled("ferry", generator, TABLE3, reduced_test=REDUCED_TEST, plan_defaults=PLAN_DEFAULTS)
