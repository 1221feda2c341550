"""What a dataset root holds, from its manifests: ``python -m pddlgym_sl.data.summary [ROOT]``.

    python -m pddlgym_sl.data.summary data          # markdown table of every <domain>/<split>

One row per split directory with a ``manifest.json`` (see `pddlgym_sl.data.build`): problems
solved out of the split's slots, failures, regenerations (another seed after a failure), labelled
states, the solver's time limit, and the wall time of all generation runs together (a resumed
split adds its runs). The dataset table of docs/paper.md is this command's output.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pddlgym_sl.cli import ArgumentParser, Command, argparse_parse
from pddlgym_sl.errors import ConfigError

__all__ = ["markdown", "summarize"]

COLUMNS = ("domain", "split", "solved", "failed", "regenerations", "states", "time limit (s)", "wall (s)")


def summarize(root: str | Path) -> list[dict[str, Any]]:
    """One row per ``<root>/<domain>/<split>/manifest.json``, sorted by domain and split."""
    rows = []
    for path in sorted(Path(root).glob("*/*/manifest.json")):
        manifest = json.loads(path.read_text())
        s = manifest["summary"]
        rows.append(
            {
                "domain": manifest["domain"],
                "split": manifest["split"],
                "solved": f"{s['solved']}/{s['slots']}",
                "failed": s["failed"],
                "regenerations": s["retries"],
                "states": s["states"],
                "time limit (s)": manifest["solver"]["time_limit_s"],
                "wall (s)": round(sum(r["seconds"] for r in manifest["runs"]), 1),
            }
        )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as a markdown table."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(row[c]) for c in COLUMNS) + " |" for row in rows]
    return "\n".join(lines)


def build_parser(prog: str) -> ArgumentParser:
    parser = ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("root", nargs="?", type=Path, default=Path("data"), help="dataset root (data)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Print the table of the dataset root."""
    rows = summarize(args.root)
    if not rows:
        raise ConfigError(f"no <domain>/<split>/manifest.json under {args.root}")
    print(markdown(rows))
    return 0


COMMAND = Command("python -m pddlgym_sl.data.summary", argparse_parse(build_parser), run)


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
