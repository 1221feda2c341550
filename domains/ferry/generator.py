"""Random ferry problems: cars with random start and goal locations, ferry at a random location.

Semantics follow AI-Planning/pddl-generators ``ferry/ferry.c``: every car's start and goal location
and the ferry's start are drawn independently and uniformly (a car's goal may equal its start, as
in ferry.c); the static facts are ``(location l)``, ``(car c)`` and ``(not-eq x y)`` for every
ordered pair of distinct locations; the ferry starts empty. Only car positions are goals. A draw in
which every car already stands at its goal is trivial and is redrawn.
"""

from __future__ import annotations

import random

from domains.generation import check_int, draw_nontrivial, render_problem

DOMAIN = "ferry"
"""The ``:domain`` name of ``domains/ferry/domain.pddl``."""

ABBREVIATIONS = {"locations": "l", "cars": "c"}


def generate(locations: int, cars: int, seed: int, *, split: str | None = None) -> str:
    """PDDL problem text for ``locations`` locations and ``cars`` cars."""
    n_loc = check_int("locations", locations, 2)
    n_car = check_int("cars", cars, 1)
    params = {"locations": n_loc, "cars": n_car}

    def draw(rng: random.Random) -> tuple[list[int], list[int], int]:
        origins = [rng.randrange(n_loc) for _ in range(n_car)]
        destinations = [rng.randrange(n_loc) for _ in range(n_car)]
        return origins, destinations, rng.randrange(n_loc)

    def is_trivial(draw_: tuple[list[int], list[int], int]) -> bool:
        return draw_[0] == draw_[1]

    origins, destinations, ferry = draw_nontrivial("ferry", split, params, seed, draw, is_trivial)
    locs = [f"l{i}" for i in range(n_loc)]
    car_names = [f"c{i}" for i in range(n_car)]
    init = [f"(location {loc})" for loc in locs]
    init += [f"(car {c})" for c in car_names]
    init += [f"(not-eq {a} {b})" for a in locs for b in locs if a != b]
    init.append("(empty-ferry)")
    init += [f"(at {c} {locs[o]})" for c, o in zip(car_names, origins, strict=True)]
    init.append(f"(at-ferry {locs[ferry]})")
    return render_problem(
        key="ferry",
        domain=DOMAIN,
        abbreviations=ABBREVIATIONS,
        params=params,
        seed=seed,
        split=split,
        objects=locs + car_names,
        init=init,
        goal=[f"(at {c} {locs[d]})" for c, d in zip(car_names, destinations, strict=True)],
    )
