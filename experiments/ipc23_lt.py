"""The IPC 2023 Learning Track experiment of docs/ipc23.md: train, plan, tabulate (resumable).

    python experiments/ipc23_lt.py [--domains ferry miconic ...] [--configs hff wl-n wl-tn wl-rank]
                                   [--time-limit 600] [--steps 3000] [--table-only]

Per domain, with the labels of ``python -m pddlgym_sl.data.generate --problems
../shared/ipc23-lt/<domain>/training --split train --val-every 5 --out data/ipc ...`` (docs/ipc23.md):

1. trains each learned configuration of `CONFIGS` with ``python -m agents.supervised`` into
   ``runs/ipc/<domain>-<config>`` (the val split stands in for a test split; a finished run is
   kept, an interrupted one resumed);
2. plans with each configuration and GBFS + hFF on ``testing-easy`` and ``testing-medium`` with
   ``python -m agents.evaluate --tasks ... --limit 10000 --time-limit T`` (resumable);
3. prints the coverage table (solved of the tasks, per test set; ``t`` marks how many searches the
   time limit stopped; a column's total when every domain has its result) and the training table
   (training tasks labelled, states, wall seconds of each training run, data loading, WL fitting
   and the final metrics included).

Every command runs as a subprocess, so what it does is what those commands do. Ctrl-C or SIGTERM
stops the running command at once with one line, and no command outlives the script.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from pddlgym_sl.parallel import interrupted, run_command, stop_on_signals

ROOT = Path(__file__).resolve().parents[1]
IPC = ROOT.parent / "shared" / "ipc23-lt"
DOMAINS = ("blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban",
           "spanner", "transport")  # fmt: skip
TEST_SETS = ("testing-easy", "testing-medium")


def _flags(**values: str) -> list[str]:
    return [item for key, value in values.items() for item in (f"--{key}", value)]


CONFIGS: dict[str, list[str] | None] = {
    "hff": None,  # GBFS + hFF, no training
    "wl-n": _flags(model="wl", dist="n", sigma="fixed", residual="none", bound="hmax"),
    "wl-tn": _flags(model="wl", dist="tn", sigma="learn", residual="none", bound="lmcut"),
    "wl-tn-fixed": _flags(model="wl", dist="tn", sigma="fixed", residual="none", bound="lmcut"),
    "wl-rank": _flags(model="wl", loss="rank", dist="n", sigma="fixed", residual="none", bound="hmax"),
    "nlm-tn": _flags(model="nlm", dist="tn", sigma="learn", residual="hff", bound="lmcut"),
}
"""Learned configurations: the WL model as a Gaussian with MSE (N, fixed σ), as the paper's TN
(LM-cut bound; σ learned, or fixed as the paper's "fixed/none" TN) and with the ranking loss, all
without a residual as WL-GOOSE; the NLM
with the paper's proposed TN setting. N and rank use hmax as their bound, which they need only to
recognise dead ends (as hFF does), at a fraction of LM-cut's cost per state."""
LABELS = {
    "hff": "hFF",
    "wl-n": "WL N",
    "wl-tn": "WL TN",
    "wl-tn-fixed": "WL TN fixed σ",
    "wl-rank": "WL rank",
    "nlm-tn": "NLM TN",
}


def run(cmd: list[str]) -> None:
    """One command, dying with this script (`pddlgym_sl.parallel.run_command`)."""
    print("+", " ".join(cmd), flush=True)
    status = run_command([sys.executable, "-m", *cmd], cwd=ROOT, env=os.environ)
    if status != 0:
        raise subprocess.CalledProcessError(status, cmd)


def train(domain: str, config: str, args) -> Path | None:
    """The finished run directory of `config` on `domain` (trained now if needed); None without data."""
    if not (args.data / domain / "train" / "labels.npz").is_file():
        print(f"{domain}: no labels in {args.data / domain / 'train'}; skipped", flush=True)
        return None
    run_dir = args.runs / f"{domain}-{config}"
    if (run_dir / "metrics.json").is_file():
        return run_dir
    steps = args.nlm_steps if config.startswith("nlm") else args.steps
    if (run_dir / "args.json").is_file():
        run(["agents.supervised", "--resume", str(run_dir), "--quiet"])
    else:
        flags = [*CONFIGS[config], "--data", str(args.data), "--domain", domain, "--test-split", "val"]
        flags += ["--steps", str(steps), "--runs", str(args.runs), "--name", run_dir.name, "--quiet"]
        run(["agents.supervised", *flags])
    return run_dir


def out_dir(domain: str, config: str, test_set: str, args) -> Path:
    return args.runs / f"{domain}-{config}" / "eval" / test_set


def evaluate(domain: str, config: str, test_set: str, args) -> None:
    tasks = args.ipc / domain / test_set
    common = ["--tasks", str(tasks), "--limit", str(args.limit), "--time-limit", str(args.time_limit)]
    common += ["--out", str(out_dir(domain, config, test_set, args)), "--quiet"]
    if CONFIGS[config] is None:
        run(["agents.evaluate", "--heuristic", config, *common])
    else:
        run_dir = train(domain, config, args)
        if run_dir is not None:
            run(["agents.evaluate", "--run", str(run_dir), *common])


def coverage(domain: str, config: str, test_set: str, args) -> tuple[int, int, int] | None:
    """(solved, tasks, searches stopped by the time limit) of a finished evaluation, else None."""
    path = out_dir(domain, config, test_set, args) / "summary.json"
    if not path.is_file():
        return None
    results = [json.loads(p.read_text()) for p in sorted(path.parent.glob("problems/*.json"))]
    timed_out = sum(r["status"] == "time_limit" for r in results)
    return sum(r["solved"] for r in results), len(results), timed_out


def _cell(result: tuple[int, int, int] | None) -> str:
    if result is None:
        return "–"
    solved, tasks, timed_out = result
    return f"{solved}/{tasks}" + (f" ({timed_out}t)" if timed_out else "")


def tables(args) -> str:
    configs = args.configs
    columns = [(s, c) for s in args.test_sets for c in configs]
    head = " | ".join(f"{s.removeprefix('testing-')}: {LABELS[c]}" for s, c in columns)
    lines = [f"| domain | {head} |", "|---|" + "--:|" * len(columns)]
    results = {d: [coverage(d, c, s, args) for s, c in columns] for d in args.domains}
    for d in args.domains:
        lines.append(f"| {d} | " + " | ".join(_cell(r) for r in results[d]) + " |")
    totals = []  # a column's total only when every domain has its result
    for i in range(len(columns)):
        column = [results[d][i] for d in args.domains]
        totals.append("–" if None in column else _cell(tuple(map(sum, zip(*column, strict=True)))))
    if len(args.domains) > 1:
        lines.append("| **total** | " + " | ".join(totals) + " |")
    learned = [c for c in configs if CONFIGS[c] is not None]
    lines += ["", "| domain | training tasks labelled (val) | states (val) | "
              + " | ".join(f"{LABELS[c]} s" for c in learned) + " |",
              "|---|--:|--:|" + "--:|" * len(learned)]  # fmt: skip
    for d in args.domains:
        manifests = [args.data / d / s / "manifest.json" for s in ("train", "val")]
        if not all(m.is_file() for m in manifests):
            continue
        train_m, val_m = (json.loads(m.read_text())["summary"] for m in manifests)
        seconds = []
        for c in learned:
            m = args.runs / f"{d}-{c}" / "metrics.json"
            wall = json.loads(m.read_text()).get("wall_seconds") if m.is_file() else None
            seconds.append(f"{wall:.0f}" if wall is not None else "–")  # None: not recorded
        lines.append(
            f"| {d} | {train_m['solved']}/{train_m['slots']} ({val_m['solved']}/{val_m['slots']}) | "
            f"{train_m['states']} ({val_m['states']}) | " + " | ".join(seconds) + " |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    parser.add_argument("--configs", nargs="+", default=["hff", "wl-n", "wl-tn", "wl-rank"], choices=CONFIGS)
    parser.add_argument("--test-sets", nargs="+", default=list(TEST_SETS), choices=TEST_SETS)
    parser.add_argument("--time-limit", type=float, default=600.0, help="wall-clock seconds per search")
    parser.add_argument("--limit", type=int, default=10_000, help="node evaluations per search")
    parser.add_argument("--steps", type=int, default=3000, help="training steps of the WL models")
    parser.add_argument("--nlm-steps", type=int, default=1000, help="training steps of the NLM")
    parser.add_argument("--data", type=Path, default=Path("data/ipc"))
    parser.add_argument("--runs", type=Path, default=Path("runs/ipc"))
    parser.add_argument("--ipc", type=Path, default=IPC)
    parser.add_argument("--table-only", action="store_true", help="print the tables of what is done")
    args = parser.parse_args()
    args.data, args.runs = (ROOT / p if not p.is_absolute() else p for p in (args.data, args.runs))
    if not args.table_only:
        if not args.ipc.is_dir():
            sys.exit(f"the IPC 2023 LT tasks are not at {args.ipc}")
        try:
            with stop_on_signals():
                for test_set in args.test_sets:  # every domain's easy tasks before any medium one
                    for domain in args.domains:
                        for config in args.configs:
                            evaluate(domain, config, test_set, args)
        except KeyboardInterrupt as exc:  # the running command is stopped already
            interrupted(exc, f"finished trainings and evaluations are kept under {args.runs}", now=True)
    print(tables(args))


if __name__ == "__main__":
    main()
