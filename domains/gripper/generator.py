"""Random gripper problems: balls, their goals and the robot spread uniformly over the two rooms.

Semantics follow AI-Planning/pddl-generators ``gripper/gripper.py --randomize``, which is the
modification the paper describes ("select the initial states randomly from the entire state space,
unlike traditional instances whose initial state specifies that all balls are in the left room"):
rooms ``rooma`` / ``roomb``, grippers ``left`` / ``right`` (both free); each ball's initial room,
then the robot's room, then each ball's goal room are drawn uniformly. Only ball positions are
goals. A draw in which every ball already is in its goal room is trivial and is redrawn.
"""

from __future__ import annotations

import random

from domains.generation import check_int, draw_nontrivial, render_problem

DOMAIN = "gripper"
"""The ``:domain`` name of ``domains/gripper/domain.pddl``."""

ABBREVIATIONS = {"balls": "b"}

ROOMS = ("rooma", "roomb")
GRIPPERS = ("left", "right")


def generate(balls: int, seed: int, *, split: str | None = None) -> str:
    """PDDL problem text for ``balls`` balls."""
    n = check_int("balls", balls, 1)
    params = {"balls": n}

    def draw(rng: random.Random) -> tuple[list[str], str, list[str]]:
        starts = [rng.choice(ROOMS) for _ in range(n)]
        robot = rng.choice(ROOMS)
        return starts, robot, [rng.choice(ROOMS) for _ in range(n)]

    def is_trivial(draw_: tuple[list[str], str, list[str]]) -> bool:
        return draw_[0] == draw_[2]

    starts, robot, goals = draw_nontrivial("gripper", split, params, seed, draw, is_trivial)
    names = [f"ball{i}" for i in range(n)]
    init = [f"(room {r})" for r in ROOMS] + [f"(gripper {g})" for g in GRIPPERS]
    init += [f"(ball {b})" for b in names]
    init += [f"(free {g})" for g in GRIPPERS]
    init += [f"(at {b} {r})" for b, r in zip(names, starts, strict=True)]
    init.append(f"(at-robby {robot})")
    return render_problem(
        key="gripper",
        domain=DOMAIN,
        abbreviations=ABBREVIATIONS,
        params=params,
        seed=seed,
        split=split,
        objects=[*ROOMS, *GRIPPERS, *names],
        init=init,
        goal=[f"(at {b} {r})" for b, r in zip(names, goals, strict=True)],
    )
