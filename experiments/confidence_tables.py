"""The confidence experiment of docs/confidence.md (Heller et al., SoCS 2022): train, plan, tabulate.

    python -m experiments.confidence_tables [--settings relational nfd] [--domains ferry gripper]
        [--dists cat tn] [--steps 800] [--batch-size 64] [--problems 18] [--jobs 2] [--table-only]

Two data settings, each on the paper domains of ``--domains``:

- ``relational``: the NLM across problems on the optimal labels of ``--data`` (``python -m
  pddlgym_sl.data.generate --domain D --split train|val|test-reduced``, docs/learning.md),
  planned on ``--problems`` of the ``test-reduced`` problems;
- ``nfd``: Neural Fast Downward's setting, one fixed task per domain (`NFD_TASKS`), labelled by
  ``python -m pddlgym_sl.data.sampling`` into ``--nfd-data``, an MLP on the fact vector, planned
  on the task's random-walk test instances.

Per setting, domain and head (``--dists``): five trainings with ``python -m agents.supervised``
(Standard, U50, U90, W50, W90: ``--ood uniform|weighted --ood-ratio 0.5|0.9``; Table 1 comes from
each run's ``confidence.json``); the W50 heuristic plans with every search configuration of the
paper's Table 2 (single queue Base, M5, M40, A5, A40; dual queue Base, M40, M80, A40, A80, P20,
P80), every heuristic with dual-queue A40 (Table 3), by ``python -m agents.evaluate`` (GBFS,
``--limit`` evaluations). Finally ``python -m agents.report RUNS --confidence --out OUT`` writes the
tables and the reliability diagram. Every command is a subprocess (``--jobs`` at a time, one
thread each), so what it does is what those commands do; finished steps are skipped on a rerun.
Ctrl-C or SIGTERM stops every command at once with one line, and none outlives the script.

What is finished is also kept in ``--store`` (default ``experiments/results/confidence``, tracked by
git; `experiments.results_store`), one part per setting (``<store>/<setting>``: its finished runs
with their evaluations, and the nfd setting's labels): saved after every step, restored into
``--runs`` and ``--nfd-data`` before the first, so that a fresh checkout resumes instead of training
again. ``--no-store`` leaves it alone. ``--table-only`` alone reports what the store holds (its
packs extracted to a temporary folder, the report written under it and its confidence tables
printed; with ``--out`` those tables and the reliability diagram are copied there:
``--table-only --out docs/figures/confidence`` writes the docs' figures from the store). With
``--runs DIR`` it reports DIR into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

from experiments import results_store
from pddlgym_sl.parallel import Backend, Unit, child_env, interrupted, run_command, run_units, stop_on_signals

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = {"Standard": None, "U50": ("uniform", "0.5"), "U90": ("uniform", "0.9"),
            "W50": ("weighted", "0.5"), "W90": ("weighted", "0.9")}  # fmt: skip
TABLE2 = [("gbfs", None, None, False), ("gbfs", "mean", 5, False), ("gbfs", "mean", 40, False),
          ("gbfs", "adaptive", 5, False), ("gbfs", "adaptive", 40, False),
          ("dual", None, None, False), ("dual", "mean", 40, False), ("dual", "mean", 80, False),
          ("dual", "adaptive", 40, False), ("dual", "adaptive", 80, False),
          ("dual", "adaptive", 20, True), ("dual", "adaptive", 80, True)]  # fmt: skip
"""(search, prune, threshold X, prioritize) of Table 2; P<X> prioritizes with the adaptive threshold."""
TABLE3 = ("dual", "adaptive", 40, False)
NFD_TASKS = {"ferry": {"locations": 12, "cars": 12}, "gripper": {"balls": 24}}
"""The fixed task of the nfd setting per domain (generator parameters, seed 1): larger than every
training problem of the relational setting, so that random-walk instances need a real search."""
MODELS = {"relational": "nlm", "nfd": "mlp"}


def run(cmd: list[str], log: IO | None = None) -> None:
    """One command, on one thread, dying with this script (`pddlgym_sl.parallel.run_command`);
    its output to `log` (default: ours)."""
    print("+", " ".join(cmd), flush=True)
    status = run_command([sys.executable, "-m", *cmd], cwd=ROOT, env=child_env(), log=log)
    if status != 0:
        raise subprocess.CalledProcessError(status, cmd)


def data_root(setting: str, args) -> Path:
    return args.nfd_data if setting == "nfd" else args.data


def test_split(setting: str) -> str:
    return "test" if setting == "nfd" else "test-reduced"


def sample_nfd(domain: str, args) -> None:
    """The nfd setting's data of `domain` (skipped when its test split is there)."""
    if (args.nfd_data / domain / "test" / "manifest.json").is_file():
        return
    import domains

    task = args.nfd_data / "tasks" / f"{domain}.pddl"
    task.parent.mkdir(parents=True, exist_ok=True)
    task.write_text(domains.generate_problem(domain, seed=1, **NFD_TASKS[domain]))
    run(["pddlgym_sl.data.sampling", "--domain", domain, "--problem", str(task), "--out", str(args.nfd_data),
         "--seeds", str(args.seeds), "--test-instances", str(args.test_instances), "--quiet"])  # fmt: skip


def run_dir(setting: str, domain: str, dist: str, variant: str, args) -> Path:
    return args.runs / setting / f"{domain}-{dist}-{variant}"


def train(setting: str, domain: str, dist: str, variant: str, args) -> None:
    """One training run (kept when finished, resumed when interrupted)."""
    path = run_dir(setting, domain, dist, variant, args)
    if (path / "metrics.json").is_file():
        return
    if (path / "args.json").is_file():
        run(["agents.supervised", "--resume", str(path), "--quiet"])
        return
    flags = ["--data", str(data_root(setting, args)), "--domain", domain, "--model", MODELS[setting]]
    flags += ["--dist", dist, "--sigma", "learn", "--residual", "none" if dist == "cat" else "hff"]
    flags += ["--steps", str(args.steps), "--batch-size", str(args.batch_size), "--val-every", "100"]
    flags += ["--test-split", test_split(setting), "--device", "cpu", "--seed", "0"]
    if VARIANTS[variant] is not None:
        flags += ["--ood", VARIANTS[variant][0], "--ood-ratio", VARIANTS[variant][1]]
    flags += ["--runs", str(path.parent), "--name", path.name, "--quiet"]
    run(["agents.supervised", *flags])


def evaluate(setting: str, domain: str, dist: str, variant: str, config: tuple, args) -> None:
    """One search configuration of one run (`agents.evaluate` keeps finished problems)."""
    search, prune, threshold, prioritize = config
    cmd = ["agents.evaluate", "--run", str(run_dir(setting, domain, dist, variant, args))]
    cmd += ["--split", test_split(setting), "--data", str(data_root(setting, args))]
    cmd += ["--limit", str(args.limit), "--search", search, "--device", "cpu", "--quiet"]
    if setting == "relational":
        cmd += ["--problems", str(args.problems)]
    if prune is not None:
        cmd += ["--prune", prune, "--threshold", str(threshold)] + (["--prioritize"] if prioritize else [])
    run(cmd)


def _call(job) -> subprocess.CalledProcessError | None:
    try:
        job()
    except subprocess.CalledProcessError as exc:  # the others go on, as each is independent
        return exc
    return None


def pool(jobs: list, workers: int) -> None:
    """Run `jobs` (closures running commands), `workers` at once; then raise the first failure."""
    failures = []
    units = [Unit(str(i), (job,)) for i, job in enumerate(jobs)]
    run_units(_call, units, Backend(jobs=workers), threads=True, on_result=lambda u, r: failures.append(r))
    if any(failures):
        raise next(f for f in failures if f)


def build_parser() -> argparse.ArgumentParser:
    """The command line (what ``--help`` shows; the docs' commands are checked against it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--settings", nargs="+", default=["relational", "nfd"], choices=MODELS)
    parser.add_argument("--domains", nargs="+", default=["ferry", "gripper"], choices=sorted(NFD_TASKS))
    parser.add_argument("--dists", nargs="+", default=["cat", "tn"], choices=["cat", "n", "tn"])
    parser.add_argument("--steps", type=int, default=800, help="training steps per run")
    parser.add_argument("--batch-size", type=int, default=64, help="training states per step (before noise)")
    parser.add_argument("--problems", type=int, default=18, help="test-reduced problems (relational)")
    parser.add_argument("--seeds", type=int, default=300, help="random-walk seeds of the nfd data")
    parser.add_argument("--test-instances", type=int, default=30, help="test instances of the nfd data")
    parser.add_argument("--limit", type=int, default=10_000, help="node evaluations per search")
    parser.add_argument("--jobs", type=int, default=2, help="commands run at once (one thread each)")
    parser.add_argument("--data", type=Path, default=Path("data"))
    parser.add_argument("--nfd-data", type=Path, default=Path("data/nfd"))
    parser.add_argument("--runs", type=Path, help="default: runs/confidence")
    parser.add_argument(
        "--out",
        type=Path,
        help="the report's folder (default: docs/figures/confidence; with --table-only alone: no copy)",
    )
    parser.add_argument("--table-only", action="store_true", help="only the report of what is done")
    parser.add_argument("--store", type=Path, default=Path("experiments/results/confidence"))
    parser.add_argument("--no-store", action="store_true", help="neither restore from nor save to --store")
    return parser


def main() -> None:
    parser = build_parser()
    args = parser.parse_args()
    if args.table_only and args.runs is None and not args.no_store:
        report_store(args)
        return
    args.runs = args.runs or Path("runs/confidence")
    args.out = args.out or Path("docs/figures/confidence")
    try:
        with stop_on_signals():
            experiment(args)
    except KeyboardInterrupt as exc:  # the running commands are stopped already
        interrupted(exc, f"finished trainings and evaluations are kept under {args.runs}", now=True)


def _store_parts(args: argparse.Namespace) -> dict[str, dict[str, Path | None]]:
    """Per setting, the store's part and what it keeps: the setting's runs, and the nfd labels."""
    return {s: {"data": args.nfd_data if s == "nfd" else None, "out": args.runs / s} for s in MODELS}


def save_store(args: argparse.Namespace) -> None:
    if not args.no_store:
        for setting, roots in _store_parts(args).items():
            results_store.save(args.store / setting, **roots)


def experiment(args: argparse.Namespace) -> None:
    args.data, args.nfd_data, args.runs, args.out, args.store = (
        p if p.is_absolute() else ROOT / p
        for p in (args.data, args.nfd_data, args.runs, args.out, args.store)
    )
    cells = [(s, d, h) for s in args.settings for d in args.domains for h in args.dists]
    if not args.table_only:
        if not args.no_store:
            restored = sum(results_store.restore(args.store / s, **r) for s, r in _store_parts(args).items())
            print(f"restored {restored} finished files from {args.store}", flush=True)
        try:
            if "nfd" in args.settings:
                pool([lambda d=d: sample_nfd(d, args) for d in args.domains], args.jobs)
            save_store(args)
            # the slowest trainings (90% noise) first, so that two workers finish together
            variants = sorted(VARIANTS, key=lambda v: -float(VARIANTS[v][1]) if VARIANTS[v] else 0.0)
            pool([lambda c=c, v=v: train(*c, v, args) for v in variants for c in cells], args.jobs)
            save_store(args)
            searches = [(c, "W50", config) for c in cells for config in TABLE2]
            searches += [(c, v, TABLE3) for c in cells for v in VARIANTS if v != "W50"]
            pool([lambda c=c, v=v, k=k: evaluate(*c, v, k, args) for c, v, k in searches], args.jobs)
        finally:
            save_store(args)
    report(args.runs, args.out)
    print(json.dumps({"runs": str(args.runs), "report": str(args.out)}))


def report_store(args: argparse.Namespace) -> None:
    """``--table-only`` alone: the report of the tracked store (extracted to a temporary folder);
    its confidence tables and reliability diagram copied into ``--out`` when given."""
    store = args.store if args.store.is_absolute() else ROOT / args.store
    if not any(store.glob("*/runs/*.jsonl")):
        sys.exit(f"{store} holds no finished run yet: run python -m experiments.confidence_tables first")
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        for setting in MODELS:
            results_store.restore(store / setting, out=runs / setting)
        report(runs, Path(tmp) / "report")
        if args.out is not None:  # the confidence report alone, not the accuracy tables beside it
            args.out.mkdir(parents=True, exist_ok=True)
            for name in (*CONFIDENCE_TABLES, "reliability.png"):
                if (Path(tmp) / "report" / name).is_file():
                    shutil.copyfile(Path(tmp) / "report" / name, args.out / name)


CONFIDENCE_TABLES = ("confidence_table1.md", "confidence_table2.md", "confidence_table3.md")


def report(runs: Path, out: Path) -> None:
    """``agents.report --confidence`` on `runs` into `out` (its own output, the accuracy and
    planning tables too, in ``out/report.log``), the three confidence tables printed once."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "report.log", "w") as log:
        run(["agents.report", str(runs), "--confidence", "--out", str(out)], log=log)
    for name in CONFIDENCE_TABLES:
        path = out / name
        if path.is_file():
            print(path.read_text())


if __name__ == "__main__":
    main()
