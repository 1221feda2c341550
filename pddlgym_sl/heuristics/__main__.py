"""Print every heuristic's value on the initial state of a PDDL problem.

    python -m pddlgym_sl.heuristics DOMAIN PROBLEM [--json]

Without ``--json``: a readable table. With ``--json``: one JSON object whose keys are exactly the
names of `HEURISTICS` (``blind``, ``goal_count``, ``hmax``, ``hadd``, ``hff``, ``lmcut``). Finite
values are JSON numbers (integers when integral); a dead end (``inf``) is the JSON string
``"inf"``, which ``float()`` parses back, so the output stays standard JSON.

Unreadable or invalid PDDL prints the error (``file:line: cause``) on stderr and exits with
status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from pddlgym_sl.cli import ArgumentParser, Command, argparse_parse


def _json_value(value: float) -> float | int | str:
    if math.isinf(value):
        return "inf"
    return int(value) if float(value).is_integer() else value


def build_parser(prog: str) -> ArgumentParser:
    parser = ArgumentParser(
        prog=prog, description="Every heuristic's value on the initial state of a PDDL problem."
    )
    parser.add_argument("domain", help="PDDL domain file")
    parser.add_argument("problem", help="PDDL problem file")
    parser.add_argument("--json", action="store_true", help='print a JSON object (dead ends as "inf")')
    return parser


def run(args: argparse.Namespace) -> int:
    """Load the task and print every heuristic's value on its initial state."""
    # Imported here so that `--help` does not load numba.
    from pddlgym_sl.heuristics import HEURISTICS, make_heuristic
    from pddlgym_sl.task import load_task

    task = load_task(args.domain, args.problem)
    values = {name: make_heuristic(name, task)(task.init) for name in HEURISTICS}

    if args.json:
        print(json.dumps({name: _json_value(v) for name, v in values.items()}))
    else:
        print(f"{task.domain_name}/{task.name}: {task.n_facts} facts, {task.n_actions} actions")
        width = max(len(name) for name in values)
        for name, value in values.items():
            shown = "inf (dead end)" if math.isinf(value) else f"{_json_value(value)}"
            print(f"  {name:<{width}}  {shown}")
    return 0


COMMAND = Command("python -m pddlgym_sl.heuristics", argparse_parse(build_parser), run)


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
