"""Benchmark (a check at scale): lifted successor generation against the grounded task, on every state
a 1,000-evaluation grounded GBFS + hFF evaluates, on every easy test task of the ten IPC 2023 LT domains.

    python benchmarks/lifted_successors.py [--evaluations 1000] [--domains blocksworld ferry ...]
                                           [--set testing-easy]

For each state: the names of the applicable ground actions and each successor restricted to the
grounded facts must be the grounded task's (`pddlgym_sl.lifted.check.compare_state`, which says
what the translator's pruning allows to differ). Prints per domain the tasks, the states compared,
the states that differ (0 expected) and the seconds; exits 1 when any state differs.
``tests/test_lifted.py`` runs the same comparison on one task per domain.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pddlgym_sl import load_task
from pddlgym_sl.lifted import Expander, load_lifted_task
from pddlgym_sl.lifted.check import StateMapper, compare_state, reached_states

IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"
DOMAINS = (
    "blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban", "spanner",
    "transport",
)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--evaluations", type=int, default=1000)
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    parser.add_argument("--set", default="testing-easy")
    parser.add_argument("--ipc", type=Path, default=IPC)
    args = parser.parse_args()
    if not args.ipc.is_dir():
        sys.exit(f"the IPC 2023 LT tasks are not at {args.ipc}")
    print("| domain | tasks | states compared | states that differ | seconds |\n|---|--:|--:|--:|--:|")
    bad_total = 0
    for domain in args.domains:
        start = time.perf_counter()
        tasks = states = bad = 0
        for problem in sorted((args.ipc / domain / args.set).glob("*.pddl")):
            files = (args.ipc / domain / "domain.pddl", problem)
            grounded, lifted = load_task(*files), load_lifted_task(*files)
            mapper, expander = StateMapper(grounded, lifted), Expander(lifted)
            for words in reached_states(grounded, args.evaluations):
                mismatch = compare_state(mapper, expander, words)
                states += 1
                if mismatch is not None:
                    bad += 1
                    if bad <= 3:
                        print(f"  {problem.name}: {mismatch}", file=sys.stderr)
            tasks += 1
        bad_total += bad
        print(f"| {domain} | {tasks} | {states:,} | {bad} | {time.perf_counter() - start:.0f} |", flush=True)
    return 1 if bad_total else 0


if __name__ == "__main__":
    sys.exit(main())
