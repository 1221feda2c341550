"""Command line: generate a split's problems, solve them optimally and label every plan state.

    python -m pddlgym_sl.data.generate --domain ferry --split train [--jobs N] [--out DIR]
    python -m pddlgym_sl.data.generate --domain ferry --split all      # train, val and test
    python -m pddlgym_sl.data.generate --preset small            # the training quick start's data
    python -m pddlgym_sl.data.generate --domain-file D.pddl --problems DIR --split mine
    python -m pddlgym_sl.data.generate --domain ferry --split train --upper  # also u (data.upper)

Writes ``<out>/<domain>/<split>/`` (see `pddlgym_sl.data.build`); re-running resumes. Fast Downward
(A* + LM-cut) solves each problem under a time/memory limit — 5 min / 8 GB for train and val,
30 min / 8 GB for test and plan, as in the paper — regenerating a failed problem with another
seed up to 20 times.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import tyro

import domains
from pddlgym_sl.data.build import build_split
from pddlgym_sl.data.presets import get_preset
from pddlgym_sl.data.solve import SolveConfig
from pddlgym_sl.errors import ConfigError, PDDLError
from pddlgym_sl.arguments import check_ranges

DEFAULT_TIME_LIMITS = {"train": 300.0, "val": 300.0, "test": 1800.0, "plan": 1800.0, "test-reduced": 300.0}
LABELLED_SPLITS = ("train", "val", "test")
"""``--split all``: the splits training and Table 1 need (the plan split is only searched, not labelled)."""


@dataclass
class Args:
    """Generate, solve and label problem sets (see the module docstring)."""

    domain: str | None = None
    """bundled domain (blocksworld, ferry, gripper, visitall)"""
    split: str | None = None
    """split of Table 3 (train, val, test, plan), all (= train, val, test), or a name for --problems"""
    preset: Literal["small", "test-reduced"] | None = None
    """a named problem set instead of --split (see pddlgym_sl.data.presets; test-reduced needs --domain)"""
    out: Path | None = None
    """root directory (default: data; data/small for --preset small)"""
    jobs: int = max(1, os.cpu_count() or 1)
    """parallel solver processes"""
    limit: int | None = None
    """only the first N problems of the split"""
    time_limit: float | None = None
    """solver time limit per problem in seconds (default: 300 train/val, 1800 test/plan)"""
    memory_limit: int = 8192
    """solver memory limit per problem in MiB"""
    retries: int = 20
    """attempts per problem (regenerated with another seed after a failure)"""
    problems: Path | None = None
    """label the user's own problem files in this directory instead of generating"""
    domain_file: Path | None = None
    """domain file for --problems (default: the bundled domain of --domain)"""
    quiet: bool = False
    """no progress bar"""
    rebuild: bool = False
    """delete and rebuild a split labelled by an older core version (instead of refusing it)"""
    upper: bool = False
    """also give every labelled state an upper bound u: the cost of a GBFS + hFF plan from it
    (pddlgym_sl.data.upper; a finished split only gains the column)"""

    def __post_init__(self) -> None:
        check_ranges(self, positive=("jobs", "limit", "time_limit", "memory_limit", "retries"))


def run(args: Args) -> list[dict]:
    """Build the requested split(s); return their manifests."""

    def config(split: str) -> SolveConfig:
        return SolveConfig(
            time_limit=args.time_limit or DEFAULT_TIME_LIMITS.get(split, 300.0),
            memory_limit_mb=args.memory_limit,
            retries=args.retries,
        )

    if args.preset is not None:
        preset = get_preset(args.preset, args.domain)
        root = args.out or Path(preset.root)
        return [
            build_split(
                preset.domain,
                domains.domain_file(preset.domain),
                split,
                specs[: args.limit],
                root / preset.domain / split,
                config(split),
                jobs=args.jobs,
                progress=not args.quiet,
                rebuild=args.rebuild,
                upper=args.upper,
            )
            for split, specs in preset.splits.items()
        ]
    if args.split is None or (args.domain is None and args.domain_file is None):
        raise ConfigError("give --preset, or --domain and --split (or --domain-file, --problems and --split)")
    root = args.out or Path("data")
    if args.problems is not None:
        domain_file = args.domain_file or domains.domain_file(args.domain)
        files = sorted(args.problems.glob("*.pddl"))
        if not files:
            raise ConfigError(f"no .pddl problem files in {args.problems}")
        name = args.domain or domain_file.parent.name
        slots = files[: args.limit]
        plan = {args.split: slots}
    else:
        domain_file = domains.domain_file(args.domain)
        name = args.domain
        splits = LABELLED_SPLITS if args.split == "all" else (args.split,)
        plan = {split: domains.split_specs(args.domain, split)[: args.limit] for split in splits}
    return [
        build_split(
            name,
            domain_file,
            split,
            slots,
            root / name / split,
            config(split),
            jobs=args.jobs,
            progress=not args.quiet,
            rebuild=args.rebuild,
            upper=args.upper,
        )
        for split, slots in plan.items()
    ]


def main(argv: list[str] | None = None) -> int:
    args = tyro.cli(Args, args=argv, description=__doc__)
    try:
        manifests = run(args)
    except PDDLError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for m in manifests:
        s = m["summary"]
        print(
            f"{m['domain']}/{m['split']}: {s['solved']}/{s['slots']} solved, {s['failed']} failed, "
            f"{s['states']} labelled states, {s['retries']} regenerations; "
            f"solver {s['solver_seconds']:.1f}s, labelling {s['label_seconds']:.1f}s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
