"""The problem sets of the paper (appendix C, Table 3) as lists of `ProblemSpec`.

Each split is a parameter grid times a seed range, declared by the domain's spec
(`domains.spec.DomainSpec.splits`):

============  ==============================  ==================================  ========
domain        train / val                     test                                sizes
============  ==============================  ==================================  ========
blocksworld   seeds 1..38 / 1..11,            seeds 1..11, blocks 11..22          456/132/132
              blocks 5..16
ferry         seeds 1..16 / 1..4,             seeds 1..16, locations and cars in  400/100/400
              locations 2..6, cars 2..6       {10, 15, 20, 25, 30}
gripper       seeds 1..80 / 1..20,            seeds 1..20, balls                  400/100/100
              balls {2, 4, 6, 8, 10}          {20, 40, 60, 80, 100}
visitall      seeds 1..70 / 1..17,            seeds 1..17, x = y in 5..7,         420/102/102
              x = y in 3..5, ratio {.5, 1}    ratio {0.5, 1.0}
============  ==============================  ==================================  ========

``plan`` is the planning benchmark: `PLAN_SIZE` test problems sampled without replacement with a
fixed seed and sorted. Its specs *are* test specs (``split == "test"``), so a plan problem is
byte-identical to, and has the same file name as, the test problem it was drawn from.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from domains.generation import problem_stem
from domains.registry import DOMAINS

__all__ = ["PLAN_SEED", "PLAN_SIZE", "SPLIT_NAMES", "ProblemSpec", "specs_for"]

SPLIT_NAMES = ("train", "val", "test", "plan")
PLAN_SIZE = 100
PLAN_SEED = 0
"""Seed of the ``plan`` sample (combined with the domain name in a string seed)."""

Params = tuple[tuple[str, int | float], ...]


@dataclass(frozen=True, order=True)
class ProblemSpec:
    """One problem of a split: which generator, which parameters, which seed.

    Specs sort by domain, split, parameters, then seed. ``params`` is a tuple of ``(name, value)``
    pairs in the generator's parameter order (hashable); `kwargs` gives it as a dict.
    """

    domain: str
    split: str
    params: Params
    seed: int

    @property
    def kwargs(self) -> dict[str, int | float]:
        """The generator parameters as keyword arguments."""
        return dict(self.params)

    @property
    def stem(self) -> str:
        """File stem naming domain, parameters and seed, e.g. ``visitall-x5-y5-r0.5-s7``."""
        return problem_stem(self.domain, DOMAINS[self.domain].parameters, self.kwargs, self.seed)

    @property
    def filename(self) -> str:
        """``<stem>.pddl``, e.g. ``ferry-l10-c15-s3.pddl``."""
        return f"{self.stem}.pddl"


def _specs(domain: str, split: str) -> list[ProblemSpec]:
    spec = DOMAINS[domain]
    problems = spec.splits[split]
    specs = [
        ProblemSpec(domain, split, tuple((name, params[name]) for name in spec.parameters), seed)
        for params in problems.params
        for seed in problems.seeds
    ]
    return sorted(specs)


def specs_for(domain: str, split: str) -> list[ProblemSpec]:
    """All specs of one split, sorted; ``plan`` is a fixed sorted sample of ``test``.

    Raises KeyError for an unknown domain or split (the registry turns it into a ConfigError).
    """
    if split == "plan":
        test = _specs(domain, "test")
        rng = random.Random(f"{domain}|plan|seed={PLAN_SEED}")
        return sorted(rng.sample(test, min(PLAN_SIZE, len(test))))
    return _specs(domain, split)
