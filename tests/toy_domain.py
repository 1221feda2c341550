"""A new domain in one module, for tests/test_extending.py: its generator and its `SPEC`.

A robot stands on a line of ``cells`` cells and has to visit two of them (a one-dimensional
visitall). The PDDL domain is ``tests/data/toy/line.pddl``.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from domains.generation import check_int, draw_nontrivial, render_problem
from domains.spec import DomainSpec, SplitGrid, grid

PARAMETERS = {"cells": "n"}


def generate(cells: int, seed: int, *, split: str | None = None) -> str:
    """PDDL problem text: ``cells`` cells in a row, a random start, two random cells to visit."""
    n = check_int("cells", cells, 2)

    def draw(rng: random.Random) -> tuple[int, list[int]]:
        return rng.randrange(n), rng.sample(range(n), 2)

    start, goals = draw_nontrivial("line", split, {"cells": n}, seed, draw, lambda _: False)
    names = [f"c{i}" for i in range(n)]
    pairs = list(itertools.pairwise(names))
    adjacent = [f"(adjacent {a} {b})" for a, b in pairs] + [f"(adjacent {b} {a})" for a, b in pairs]
    return render_problem(
        key="line",
        domain="line",
        abbreviations=PARAMETERS,
        params={"cells": n},
        seed=seed,
        split=split,
        objects=names,
        init=[f"(at {names[start]})", *adjacent],
        goal=[f"(visited {names[g]})" for g in goals],
    )


SPLITS = {
    "train": SplitGrid(range(1, 5), grid(cells=(3, 4))),
    "val": SplitGrid(range(1, 3), grid(cells=(4,))),
    "test": SplitGrid(range(1, 3), grid(cells=(5,))),
}
DOMAIN_FILE = Path(__file__).resolve().parent / "data" / "toy" / "line.pddl"
SPEC = DomainSpec("line", DOMAIN_FILE, generate, PARAMETERS, SPLITS, plan_defaults={"cells": 4})
