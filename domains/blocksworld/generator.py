"""Random blocksworld-4ops problems: initial and goal states drawn uniformly over all BW states.

Semantics follow AI-Planning/pddl-generators (``bwstates`` + ``4ops/2pddl``): both states are
uniform over the blocksworld states of ``blocks`` blocks (every block on the table or on exactly
one block, no cycles, arm empty). The initial state lists ``on`` / ``on-table`` / ``clear`` facts
and ``(arm-empty)``; the goal lists only the ``on`` atoms of the goal state, as 2pddl does (a block
on the table in the goal state contributes nothing).

Sampler (exact, not bwstates' float recursion): a state is a set of towers, i.e. an unordered set
of non-empty ordered lists, so there are L(n, k) states with k towers (Lah numbers,
L(n, k) = C(n-1, k-1) n!/k!). Pick k with probability L(n, k) / sum_k L(n, k), shuffle the blocks
and cut the permutation at k-1 of its n-1 gaps chosen uniformly: each k-tower state then comes out
of exactly k! (permutation, cuts) pairs, hence with probability 1/L(n, k) given k: uniform overall.

A draw whose goal ``on`` atoms all hold initially (including the empty goal of an all-on-table goal
state) is trivial and is redrawn.
"""

from __future__ import annotations

import itertools
import math
import random

from domains.generation import check_int, draw_nontrivial, render_problem

DOMAIN = "blocksworld-4ops"
"""The ``:domain`` name of ``domains/blocksworld/domain.pddl``."""

ABBREVIATIONS = {"blocks": "n"}

TABLE = -1
"""``below[i] == TABLE`` means block i stands on the table."""


def lah(n: int, k: int) -> int:
    """Unsigned Lah number L(n, k): ways to split n labelled items into k non-empty ordered lists."""
    if n == k == 0:
        return 1
    if k < 1 or k > n:
        return 0
    return math.comb(n - 1, k - 1) * math.factorial(n) // math.factorial(k)


def count_states(n: int) -> int:
    """Number of blocksworld states with n blocks (OEIS A000262: 1, 1, 3, 13, 73, 501, ...)."""
    return sum(lah(n, k) for k in range(n + 1))


def sample_state(n: int, rng: random.Random) -> tuple[int, ...]:
    """A uniformly random blocksworld state as ``below[i]`` (block index under block i, or TABLE)."""
    weights = [lah(n, k) for k in range(1, n + 1)]
    r = rng.randrange(sum(weights))
    k = 1
    for w in weights:
        if r < w:
            break
        r -= w
        k += 1
    order = list(range(n))
    rng.shuffle(order)
    cuts = sorted(rng.sample(range(1, n), k - 1))
    below = [TABLE] * n
    for start, stop in zip([0, *cuts], [*cuts, n], strict=True):
        tower = order[start:stop]  # bottom to top
        for lower, upper in itertools.pairwise(tower):
            below[upper] = lower
    return tuple(below)


def _block(i: int) -> str:
    return f"b{i + 1}"


def _on_atoms(below: tuple[int, ...]) -> set[str]:
    return {f"(on {_block(i)} {_block(b)})" for i, b in enumerate(below) if b != TABLE}


def generate(blocks: int, seed: int, *, split: str | None = None) -> str:
    """PDDL problem text for ``blocks`` blocks; ``split`` (train/val/test) selects the stream."""
    n = check_int("blocks", blocks, 2)
    params = {"blocks": n}

    def draw(rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return sample_state(n, rng), sample_state(n, rng)

    def is_trivial(states: tuple[tuple[int, ...], tuple[int, ...]]) -> bool:
        init, goal = states
        return _on_atoms(goal) <= _on_atoms(init)

    init, goal = draw_nontrivial("blocksworld", split, params, seed, draw, is_trivial)
    covered = {b for b in init if b != TABLE}
    facts = ["(arm-empty)"]
    for i, b in enumerate(init):
        facts.append(f"(on-table {_block(i)})" if b == TABLE else f"(on {_block(i)} {_block(b)})")
    facts += [f"(clear {_block(i)})" for i in range(n) if i not in covered]
    goal_facts = [f"(on {_block(i)} {_block(b)})" for i, b in enumerate(goal) if b != TABLE]
    return render_problem(
        key="blocksworld",
        domain=DOMAIN,
        abbreviations=ABBREVIATIONS,
        params=params,
        seed=seed,
        split=split,
        objects=[_block(i) for i in range(n)],
        init=facts,
        goal=goal_facts,
    )
