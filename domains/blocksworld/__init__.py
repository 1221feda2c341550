"""The blocksworld domain (4 operators): ``domain.pddl``, its problem ``generator`` and its `SPEC`."""

from __future__ import annotations

from domains.blocksworld import generator
from domains.spec import SplitGrid, bundled, grid

TABLE3 = {
    "train": SplitGrid(range(1, 39), grid(blocks=range(5, 17))),
    "val": SplitGrid(range(1, 12), grid(blocks=range(5, 17))),
    "test": SplitGrid(range(1, 12), grid(blocks=range(11, 23))),
}
"""The paper's splits (appendix C, Table 3): seeds × parameter settings."""
REDUCED_TEST = SplitGrid(range(1, 12), grid(blocks=(11, 12, 13)))
"""The ``test-reduced`` preset: larger than training, solved by A* + LM-cut in minutes."""
PLAN_DEFAULTS = {"blocks": 6}
"""The generator parameters of ``python -m pddlgym_sl.plan blocksworld``."""

SPEC = bundled("blocksworld", generator, TABLE3, reduced_test=REDUCED_TEST, plan_defaults=PLAN_DEFAULTS)
