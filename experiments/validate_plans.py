"""Every stored plan of an experiment checked by an independent validator (Unified Planning).

    python -m experiments.validate_plans [--runs runs/ipc-ecai25] [--configs C ...]

`agents.evaluate` replays each plan in the task it searched before recording it; this script checks
the recorded plans again with Unified Planning's `SequentialPlanValidator`
(`pddlgym_sl.independent_validation`), which reads the PDDL files itself. For every evaluation
under ``--runs`` (default: the IPC experiment's tracked store, ``experiments/results/ipc-ecai25``;
``<domain>-<config>/eval/<set>/problems/*.json``, and the baselines'), each solved
record's plan is validated against ``../shared/ipc23-lt/<domain>/<set>/<problem>``; the script
prints, per configuration, how many plans it checked and how many were valid, lists every invalid
one, and exits with status 1 if there was one.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from experiments import results_store
from pddlgym_sl.independent_validation import validate_plan_files

ROOT = Path(__file__).resolve().parents[1]
IPC = ROOT.parent / "shared" / "ipc23-lt"
STORE = ROOT / "experiments" / "results" / "ipc-ecai25"


def stored_plans(runs: Path, configs: list[str] | None):
    """(domain, configuration and evaluation, task file, record) of every solved record."""
    for record_file in sorted(runs.glob("*/eval/*/problems/*.json")):
        run, evaluation = record_file.parents[3].name, record_file.parents[1].name
        domain, _, config = run.partition("-")
        if configs is not None and config not in configs:
            continue
        record = json.loads(record_file.read_text())
        if record.get("solved"):
            test_set = evaluation.split("-bound-")[0]
            yield domain, f"{config} {evaluation}", IPC / domain / test_set / record["problem"], record


def build_parser() -> argparse.ArgumentParser:
    """The command line (what ``--help`` shows; the docs' commands are checked against it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=Path, help="the experiment's runs (default: its tracked store's)")
    parser.add_argument("--configs", nargs="+", help="only these configurations (default: all)")
    return parser


def main() -> int:
    parser = build_parser()
    args = parser.parse_args()
    checked, valid, invalid = Counter(), Counter(), []
    if args.runs is None:  # the store's packs, extracted for the reading
        with results_store.extracted(STORE, ("runs",)) as root:
            plans = list(stored_plans(root / "runs", args.configs))
    else:
        plans = list(stored_plans(args.runs, args.configs))
    for domain, evaluation, task, record in tqdm(plans, desc="plans", unit="plan"):
        config = evaluation.split()[0]
        verdict = validate_plan_files(IPC / domain / "domain.pddl", task, record["plan"])
        checked[config] += 1
        valid[config] += verdict.valid
        if not verdict.valid:
            invalid.append(f"{domain} {evaluation} {task.name}: {verdict.reason}")
    for config in sorted(checked):
        print(f"{config}: {valid[config]} of {checked[config]} plans valid")
    for line in invalid:
        print("INVALID", line)
    print(f"all: {sum(valid.values())} of {sum(checked.values())} plans valid (Unified Planning)")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
