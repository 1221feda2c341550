"""The paper's Tables 1-2 at scale (docs/paper.md): labels, the main cells' trainings and plans, report.

    python -m experiments.paper_tables [--domains ...] [--models linear nlm hgn] [--jobs 2]
        [--backend local|ray] [--address ADDR] [--labels-only] [--dry-run]
    python -m experiments.paper_tables --table-only            # the store's cells as CSV, trains nothing

Three stages, each a sequence of our own commands (so what it does is what they do), each
resuming where it stopped; a rerun of this script skips what is finished:

1. **labels** per domain: ``python -m pddlgym_sl.data.generate --domain D --split train``, then
   ``--split val``, then ``--preset test-reduced`` (Table 1's test set here: the paper's test split
   gives A* + LM-cut 30 minutes per problem and regenerates a failure up to 20 times, hundreds of
   hours on 2 cores; test-reduced holds problems larger than training that it solves in minutes).
2. **cells** (`CELLS`, the paper's main ones; an N run is also planned with ``--clip``), one
   ``python -m agents.sweep`` per seed, model and cell over all domains, seeds outermost so that
   seed 0 of every cell finishes before any seed 1; training steps and seeds per model from
   `BUDGETS`; each run plans on all 100 ``plan`` problems (10,000 evaluations each), beside the
   hFF baseline on the same problems.
3. **report**: ``python -m agents.report OUT --out OUT/report --nll`` (Tables 1 and 2 as markdown
   and CSV, with the test NLL), then ``python -m experiments.paper_compare OUT/report --out
   OUT/report/beside_paper.md`` (ours beside the paper's published numbers, cell by cell).

What is finished is also kept in ``--store`` (default ``experiments/results/paper-v2``, tracked by
git; `experiments.results_store`): copied there after every step, and copied back into ``--data``
and ``--out`` before the first, so that a fresh checkout of a commit that holds the store resumes
the experiment instead of starting it again. ``--no-store`` leaves it alone.

``--table-only`` (``--csv`` says the same) reads the store's runs (its packs ``<store>/runs/*.jsonl``)
and prints one CSV row per model,
domain, σ, residual, distribution and clip: the seeds and training steps, and the means (and
sample standard deviations over the seeds) of coverage and evaluations on the ``plan`` problems
(unsolved counted at the 10,000-evaluation limit), of the test MSE and the test NLL.

A step that fails does not stop the others; the failed ones are listed at the end (exit status 1).
Ctrl-C or SIGTERM stops the running command at once (its own handler says what it kept), and
nothing outlives the script.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

from experiments import results_store
from pddlgym_sl.parallel import child_env, interrupted, run_command, stop_on_signals

ROOT = Path(__file__).resolve().parents[1]

DOMAINS = ("ferry", "gripper", "visitall", "blocksworld")
BUDGETS = {"linear": (10_000, 3), "nlm": (10_000, 3), "hgn": (3_000, 2)}
"""Model -> (training steps, seeds): what two shared cores allow, against the paper's 40,000 x 5."""
CELLS = {
    "learn/hFF TN": ("learn", "hff", "tn"),
    "fixed/hFF N": ("fixed", "hff", "n"),
    "fixed/none N": ("fixed", "none", "n"),
    "fixed/none TN": ("fixed", "none", "tn"),
}
"""The paper's main cells as (σ, residual, distribution); N runs are also planned with ``--clip``."""
LABEL_STAGES = (["--split", "train"], ["--split", "val"], ["--preset", "test-reduced"])
LABEL_LIMITS = {("blocksworld", "train"): 9 * 38, ("blocksworld", "val"): 9 * 11}
"""Splits labelled only in part: (domain, split) -> its first N problems (`--limit`). Blocksworld's
Table 3 splits hold 5-16 blocks (38 training and 11 validation problems per size). A* + LM-cut's
time per size grows about 3.3-fold per block (12 blocks: 17 minutes of solver for the 38 training
problems; 13 blocks: 35 minutes, plus 4 problems that ran into the 5-minute limit and were
regenerated), so 14-16 blocks would take about 45 core-hours. We label 5-13 blocks (342 training,
99 validation problems; the paper subsamples 400 for training)."""


def run(cmd: list[str], dry_run: bool) -> int:
    """One of our commands, dying with this script (`pddlgym_sl.parallel.run_command`); its status."""
    print("+ python -m", " ".join(cmd), flush=True)
    if dry_run:
        return 0
    return run_command([sys.executable, "-m", *cmd], cwd=ROOT, env=child_env())


def parallel_flags(args: argparse.Namespace) -> list[str]:
    if args.backend == "ray":
        return ["--backend", "ray"] + (["--address", args.address] if args.address else [])
    return ["--jobs", str(args.jobs)]


def label_commands(args: argparse.Namespace) -> list[list[str]]:
    """Per domain its train, val and test-reduced labels (`pddlgym_sl.data.generate` resumes),
    `LABEL_LIMITS` in part."""
    common = ["--out", str(args.data), *parallel_flags(args), "--quiet"]
    commands = []
    for domain in args.domains:
        for stage in LABEL_STAGES:
            limit = LABEL_LIMITS.get((domain, stage[1]))
            cmd = ["pddlgym_sl.data.generate", "--domain", domain, *stage, *common]
            commands.append(cmd + (["--limit", str(limit)] if limit else []))
    return commands


def cell_commands(args: argparse.Namespace) -> list[list[str]]:
    """One `agents.sweep` per seed, model and cell, seeds outermost (it skips finished runs)."""
    commands = []
    for seed in range(max(BUDGETS[m][1] for m in args.models)):
        for model in args.models:
            steps, seeds = BUDGETS[model]
            if seed >= seeds:
                continue
            for sigma, residual, dist in CELLS.values():
                cmd = ["agents.sweep", "--domains", *args.domains, "--models", model, "--sigmas", sigma]
                cmd += ["--residuals", residual, "--dists", dist, "--seeds", str(seed), "--steps", str(steps)]
                cmd += ["--data", str(args.data), "--test-split", "test-reduced", "--split", "plan"]
                cmd += ["--out", str(args.out), *parallel_flags(args), "--no-report", "--quiet"]
                commands.append(cmd)
    return commands


def report_commands(args: argparse.Namespace) -> list[list[str]]:
    """Tables 1-2 of what has run (with the test NLL), then the same beside the paper's numbers."""
    report = args.out / "report"
    return [
        ["agents.report", str(args.out), "--out", str(report), "--nll"],
        ["experiments.paper_compare", str(report), "--out", str(report / "beside_paper.md")],
    ]


CSV_COLUMNS = (
    "model", "domain", "sigma", "residual", "dist", "clip", "seeds", "steps", "coverage", "coverage_std",
    "evaluations", "evaluations_std", "test_mse", "test_nll",
)  # fmt: skip


def _mean_std(values: list[float]) -> tuple[str, str]:
    if not values:
        return "", ""
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.4g}", f"{std:.4g}"


def cell_rows(runs: Path) -> list[dict[str, str]]:
    """One row per model, domain, cell and clip of the training runs under `runs` (`CSV_COLUMNS`),
    from their ``plan`` evaluations and test metrics (`agents.reporting.collect`)."""
    from agents.reporting.collect import collect

    found = collect([runs], split="plan")
    rows = []
    order = lambda kv: (kv[0].model, kv[0].domain, kv[0].config.sort_key(), kv[0].dist)  # noqa: E731
    for key, seeds in sorted(found.groups.items(), key=order):
        for clip in (False, True) if key.dist == "n" else (False,):
            summaries = [s for r in seeds if (s := r.summary("plan", clip)) is not None]
            coverage = _mean_std([s["coverage"] for s in summaries])
            evaluations = _mean_std([s["mean_evaluations"] for s in summaries])
            metrics = [r.metric("test_mse_clip" if clip else "test_mse") for r in seeds]
            nll = [r.metric("test_nll") for r in seeds]
            steps = "/".join(sorted({str(r.args.get("steps")) for r in seeds}))
            rows.append({
                "model": key.model, "domain": key.domain, "sigma": key.config.sigma,
                "residual": key.config.residual, "dist": key.dist, "clip": str(clip).lower(),
                "seeds": str(len(summaries)), "steps": steps,
                "coverage": coverage[0], "coverage_std": coverage[1],
                "evaluations": evaluations[0], "evaluations_std": evaluations[1],
                "test_mse": _mean_std([m for m in metrics if m is not None])[0],
                "test_nll": "" if clip else _mean_std([m for m in nll if m is not None])[0],
            })  # fmt: skip
    return rows


def build_parser() -> argparse.ArgumentParser:
    """The command line (what ``--help`` shows; the docs' commands are checked against it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    parser.add_argument("--models", nargs="+", default=list(BUDGETS), choices=list(BUDGETS))
    parser.add_argument("--jobs", type=int, default=2, help="local processes at once (one thread each)")
    parser.add_argument("--backend", default="local", choices=["local", "ray"])
    parser.add_argument("--address", help="--backend ray: the cluster's address")
    parser.add_argument("--data", type=Path, default=Path("data"))
    parser.add_argument("--out", type=Path, default=Path("runs/paper-v2"))
    parser.add_argument(
        "--store",
        type=Path,
        default=Path("experiments/results/paper-v2"),
        help="tracked folder that keeps what is finished (see the module docstring)",
    )
    parser.add_argument("--no-store", action="store_true", help="neither restore from nor save to --store")
    parser.add_argument("--labels-only", action="store_true", help="stop after the labels")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    parser.add_argument("--table-only", action="store_true", help="tabulate the store; train nothing")
    parser.add_argument(
        "--csv",
        action="store_true",
        help="--table-only prints CSV (the default; the markdown tables are agents.report's, in the store)",
    )
    return parser


def main() -> None:
    parser = build_parser()
    args = parser.parse_args()
    if args.table_only:
        writer = csv.DictWriter(sys.stdout, fieldnames=CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        with results_store.extracted(ROOT / args.store, ("runs",)) as root:
            writer.writerows(cell_rows(root / "runs"))
        return
    args.data, args.out, args.store = (ROOT / p for p in (args.data, args.out, args.store))  # absolute stay
    keep = not (args.no_store or args.dry_run)
    if keep:
        restored = results_store.restore(args.store, data=args.data, out=args.out)
        print(f"restored {restored} finished files from {args.store}", flush=True)
    commands = label_commands(args)
    if not args.labels_only:
        commands += cell_commands(args)
        commands += report_commands(args)
    failed = []
    try:
        with stop_on_signals():
            for cmd in commands:  # a failed step does not stop the others (its log says why)
                if run(cmd, args.dry_run) != 0:
                    failed.append(cmd)
                if keep:
                    results_store.save(args.store, data=args.data, out=args.out)
    except KeyboardInterrupt as exc:  # the running command is stopped already
        if keep:  # what it finished, and all of it even if the signal cut a step's save short
            results_store.save(args.store, data=args.data, out=args.out)
        kept = f"finished labels are kept under {args.data}, runs under {args.out}"
        interrupted(exc, kept + (f", and in {args.store}" if keep else ""), now=True)
    for cmd in failed:
        print("failed: python -m", " ".join(cmd), file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
