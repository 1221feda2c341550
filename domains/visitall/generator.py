"""Random visitall problems: a grid, a random robot start, a random subset of cells to visit.

Semantics follow AI-Planning/pddl-generators ``visitall/grid.c`` (the version with a seed and a
random start; no unavailable cells): cells ``loc-x<row>-y<col>`` typed ``place``, ``connected``
both ways between 4-neighbours; the robot starts on a uniformly random cell, which is ``visited``
initially. Each cell, in row-major order, joins the goal when a roll ``randrange(x*y)`` is below
``ratio * x * y`` (so ``ratio=1.0`` asks for every cell), and the start cell is always in the goal
(already achieved). A draw whose goal is the start cell alone is trivial and is redrawn.

grid.c only makes square grids (``-n``); the paper's splits use ``x = y`` (Table 3 says "x = y"
for train/val and "x, y in 5..7" for test, which we read as square 5x5, 6x6, 7x7 as the reference
generator can only produce). The function accepts any ``x`` by ``y`` for ad-hoc use.
"""

from __future__ import annotations

import random

from domains.generation import check_int, draw_nontrivial, render_problem

DOMAIN = "visit-all"
"""The ``:domain`` name of ``domains/visitall/domain.pddl``."""

ABBREVIATIONS = {"x": "x", "y": "y", "ratio": "r"}


def _cell(i: int, j: int) -> str:
    return f"loc-x{i}-y{j}"


def generate(x: int, y: int, ratio: float, seed: int, *, split: str | None = None) -> str:
    """PDDL problem text for an ``x`` (rows) by ``y`` (columns) grid with goal ratio ``ratio``."""
    rows = check_int("x", x, 1)
    cols = check_int("y", y, 1)
    if rows * cols < 2:
        raise ValueError(f"a visitall grid needs at least 2 cells, got {rows}x{cols}")
    if isinstance(ratio, bool) or not 0.0 < float(ratio) <= 1.0:
        raise ValueError(f"ratio must be in (0, 1], got {ratio!r}")
    params = {"x": rows, "y": cols, "ratio": float(ratio)}
    area = rows * cols
    threshold = float(ratio) * area

    def draw(rng: random.Random) -> tuple[tuple[int, int], list[tuple[int, int]]]:
        start = (rng.randrange(rows), rng.randrange(cols))
        goal = []
        for i in range(rows):
            for j in range(cols):
                if rng.randrange(area) < threshold or (i, j) == start:
                    goal.append((i, j))
        return start, goal

    def is_trivial(draw_: tuple[tuple[int, int], list[tuple[int, int]]]) -> bool:
        return draw_[1] == [draw_[0]]

    start, goal = draw_nontrivial("visitall", split, params, seed, draw, is_trivial)
    init = [f"(at-robot {_cell(*start)})", f"(visited {_cell(*start)})"]
    for i in range(rows):
        for j in range(cols):
            for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                if 0 <= i + di < rows and 0 <= j + dj < cols:
                    init.append(f"(connected {_cell(i, j)} {_cell(i + di, j + dj)})")
    return render_problem(
        key="visitall",
        domain=DOMAIN,
        abbreviations=ABBREVIATIONS,
        params=params,
        seed=seed,
        split=split,
        objects=[_cell(i, j) for i in range(rows) for j in range(cols)],
        object_type="place",
        init=init,
        goal=[f"(visited {_cell(i, j)})" for i, j in goal],
    )
