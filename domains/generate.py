"""Write the paper's problem sets to disk.

    python -m domains.generate --domain ferry --split train --out data/problems [--limit N]
    python -m domains.generate --domain all --split all --out data/problems

Files go to ``OUT/<domain>/<split>/<stem>.pddl`` (see `domains.ProblemSpec.filename`). Output is
deterministic: two runs produce byte-identical trees, and a rerun rewrites nothing. One summary
line is printed per (domain, split).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import domains
from domains import SPLIT_NAMES, split_specs, write_specs
from pddlgym_sl.cli import ArgumentParser, Command, UsageError


def build_parser(prog: str) -> ArgumentParser:
    """The command line (``--domain``, ``--split``, ``--out``, ``--limit``)."""
    parser = ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument(
        "--domain", required=True, choices=[*domains.DOMAIN_NAMES, "all"], help="domain or 'all'"
    )
    parser.add_argument("--split", required=True, choices=[*SPLIT_NAMES, "all"], help="split or 'all'")
    parser.add_argument("--out", required=True, type=Path, help="root directory of the problem tree")
    parser.add_argument("--limit", type=int, default=None, help="write only the first N problems per split")
    return parser


def parse_args(prog: str, argv: list[str]) -> argparse.Namespace:
    args = build_parser(prog).parse_args(argv)
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be >= 0")
    return args


def run(args: argparse.Namespace) -> int:
    """Write the requested splits and print one summary line each."""
    names = domains.DOMAIN_NAMES if args.domain == "all" else (args.domain,)
    splits = SPLIT_NAMES if args.split == "all" else (args.split,)
    for name in names:
        for split in splits:
            out_dir = args.out / name / split
            paths, written = write_specs(split_specs(name, split)[: args.limit], out_dir)
            print(f"{name}/{split}: {len(paths)} problems in {out_dir} ({written} written)")
    return 0


COMMAND = Command("python -m domains.generate", parse_args, run)


def main(argv: Sequence[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
