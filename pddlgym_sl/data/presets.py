"""Named problem sets beyond the paper's Table 3 splits.

``small``: the default dataset of the training quick start — ferry, 40 training and 12 validation
problems sampled from the paper's train/val splits (2..6 locations and cars) and 12 test problems
that are larger than any training problem (8 or 9 locations and cars). Fast Downward solves all
of them in well under two minutes on two cores.
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
    )


PRESETS = {"small": small}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]()
    except KeyError:
        raise ConfigError(f"unknown preset {name!r}; expected one of {', '.join(PRESETS)}") from None
