"""Named problem sets beyond the paper's Table 3 splits.

``small``: the default dataset of the training quick start — ferry, 40 training and 12 validation
problems sampled from the paper's train/val splits (2..6 locations and cars) and 12 test problems
that are larger than any training problem (8 or 9 locations and cars). Fast Downward solves all
of them in well under two minutes on two cores. Written to ``data/small/ferry/{train,val,test}``.

``test-reduced`` (with a domain): a ``test-reduced`` split of problems larger than the training
ones but small enough for A* + LM-cut to solve in minutes on a laptop, for Table 1's accuracy
when the paper's test split (30 min per problem on a cluster) is out of reach:
blocksworld 11..13 blocks, ferry 7..9 locations and cars, gripper 12..16 balls, visitall the
paper's own test grid (5..7; most solve in seconds, but some 7x7 full-coverage problems exceed
5 minutes and are regenerated). Written to
``data/<domain>/test-reduced``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import domains
from domains import ProblemSpec
from pddlgym_sl.errors import ConfigError


@dataclass(frozen=True)
class Preset:
    """A dataset made of several splits of one domain, each a list of generator specs (parameters in
    the generator's order)."""

    domain: str
    splits: dict[str, list[ProblemSpec]]
    root: str = "data"


def _sample(domain: str, split: str, k: int, seed: int) -> list[ProblemSpec]:
    specs = domains.split_specs(domain, split)
    return sorted(random.Random(seed).sample(specs, k))


def _grid(domain: str, split: str, params: list[dict[str, int]], seeds: range) -> list[ProblemSpec]:
    return sorted(
        ProblemSpec(domain=domain, split=split, params=tuple(p.items()), seed=s)
        for p in params
        for s in seeds
    )


def small() -> Preset:
    sizes = [{"locations": n, "cars": m} for n in (8, 9) for m in (8, 9)]
    return Preset(
        domain="ferry",
        splits={
            "train": _sample("ferry", "train", 40, seed=0),
            "val": _sample("ferry", "val", 12, seed=0),
            "test": _grid("ferry", "test", sizes, range(1, 4)),
        },
        root="data/small",
    )


def reduced_test_grids() -> dict[str, tuple[list[dict[str, int | float]], range]]:
    """Per domain with a ``test-reduced`` preset (`DomainSpec.reduced_test`): its parameter grid
    and seeds."""
    grids = {name: spec.reduced_test for name, spec in domains.DOMAINS.items()}
    return {name: ([dict(p) for p in g.params], g.seeds) for name, g in grids.items() if g is not None}


REDUCED_TEST_GRIDS = reduced_test_grids()
"""`reduced_test_grids` of the domains registered when this module was imported."""


def test_reduced(domain: str | None) -> Preset:
    grids = reduced_test_grids()
    if domain not in grids:
        raise ConfigError(f"preset 'test-reduced' needs --domain, one of {', '.join(grids)}")
    params, seeds = grids[domain]
    return Preset(domain=domain, splits={"test-reduced": _grid(domain, "test", params, seeds)})


PRESETS = {"small": lambda domain: small(), "test-reduced": test_reduced}


def get_preset(name: str, domain: str | None = None) -> Preset:
    """The preset `name` (``test-reduced`` is per domain)."""
    try:
        make = PRESETS[name]
    except KeyError:
        raise ConfigError(f"unknown preset {name!r}; expected one of {', '.join(PRESETS)}") from None
    return make(domain)
