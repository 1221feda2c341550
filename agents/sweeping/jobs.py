"""The jobs of a sweep: the commands that train and evaluate a cell or a baseline, and `plan`,
which decides from what earlier sweeps left on disk which of them are still to run."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from agents.reporting.collect import read_json
from agents.sweeping.config import SweepConfig
from agents.sweeping.grid import Cell, data_root, preset

__all__ = [
    "Job",
    "Plan",
    "Planner",
    "baseline_command",
    "baseline_dir",
    "eval_command",
    "plan",
    "resume_command",
    "train_command",
]


@dataclass
class Job:
    """One subprocess: training a run, evaluating it, or evaluating a baseline."""

    name: str
    kind: str  # "train" | "eval" | "baseline"
    command: list[str]
    unit: str  # the progress-bar cell it belongs to
    marker: str  # in the command line of this job's process (to recognise it still running)
    after: str | None = None  # a job that must succeed first
    resume: list[str] | None = None
    """training: the command instead when `run_dir` has args.json by the time the job starts (an
    earlier attempt began the run and was killed: a Ray worker's task is retried)"""
    run_dir: Path | None = None

    @property
    def priority(self) -> int:
        return {"eval": 0, "train": 1, "baseline": 2}[self.kind]


def resume_command(args: SweepConfig, cell: Cell) -> list[str]:
    """`agents.supervised` continuing a cell's run."""
    cmd = [sys.executable, "-m", "agents.supervised", "--quiet", "--resume", str(args.out / cell.name)]
    return cmd + (["--steps", str(args.steps)] if args.steps else [])


def train_command(args: SweepConfig, cell: Cell) -> list[str]:
    """`agents.supervised` for a cell: continue it when args.json exists, else start it."""
    run = args.out / cell.name
    cmd = [sys.executable, "-m", "agents.supervised", "--quiet"]
    if (run / "args.json").is_file():
        return resume_command(args, cell)
    path = preset(args, cell)
    if path is not None:
        cmd += ["--config", str(path)]
    cmd += ["--domain", cell.domain, "--model", cell.model, "--dist", cell.dist, "--sigma", cell.sigma]
    cmd += ["--residual", cell.residual, "--bound", cell.bound, "--seed", str(cell.seed)]
    cmd += ["--runs", str(args.out), "--name", cell.name]
    options = {
        "--steps": args.steps,
        "--data": args.data,
        "--val-every": args.val_every,
        "--test-split": args.test_split,
        "--batch-size": args.batch_size,
        "--device": args.device,
    }
    for flag, value in options.items():
        if value is not None:
            cmd += [flag, str(value)]
    return cmd


def _eval_options(args: SweepConfig) -> list[str]:
    cmd = ["--split", args.split, "--limit", str(args.limit), "--quiet"]
    return cmd + (["--problems", str(args.problems)] if args.problems is not None else [])


def eval_command(args: SweepConfig, cell: Cell, clip: bool) -> list[str]:
    cmd = [sys.executable, "-m", "agents.evaluate", "--run", str(args.out / cell.name), *_eval_options(args)]
    return cmd + (["--clip"] if clip else [])


def baseline_dir(args: SweepConfig, domain: str) -> Path:
    return args.out / "baselines" / f"{domain}__hff" / "eval" / args.split


def baseline_command(args: SweepConfig, domain: str, data: Path) -> list[str]:
    cmd = [sys.executable, "-m", "agents.evaluate", "--heuristic", "hff", "--domain", domain]
    return [*cmd, "--data", str(data), "--out", str(baseline_dir(args, domain)), *_eval_options(args)]


class Planner:
    """Decides which jobs are still needed, reading what earlier sweeps left behind."""

    def __init__(self, args: SweepConfig) -> None:
        self.args = args
        self.counts: dict[tuple[str, str], int] = {}
        self.warnings: list[str] = []

    def expected_problems(self, domain: str, data: Path | None) -> int:
        """How many problems `agents.evaluate` evaluates (`agents.evaluation.select_problems`): the
        dataset's own copies of the split, else the paper's Table 3 split."""
        key = (domain, str(data))
        if key not in self.counts:
            from agents.evaluation import EvaluationConfig, select_problems

            config = EvaluationConfig(heuristic="hff", domain=domain, split=self.args.split, data=data,
                                      problems=self.args.problems)  # fmt: skip
            self.counts[key] = len(select_problems(config).files)
        return self.counts[key]

    def eval_done(self, directory: Path, domain: str, data: Path | None) -> bool:
        """An evaluation is finished when its summary covers the requested problems; one made under
        another budget is kept (with a warning): its per-problem results would be reused anyway."""
        summary = read_json(directory / "summary.json")
        if summary is None:
            return False
        if summary.get("limit") != self.args.limit:
            self.warnings.append(
                f"{directory} was evaluated with limit {summary.get('limit')}, not {self.args.limit}: "
                "kept; delete it to evaluate again"
            )
            return True
        return summary.get("problems") == self.expected_problems(domain, data)

    def run_data(self, cell: Cell) -> Path:
        stored = read_json(self.args.out / cell.name / "args.json")
        if stored and stored.get("data"):
            return Path(stored["data"])
        return data_root(self.args, cell)


def _alive(pid_file: Path, marker: str) -> int | None:
    """The pid in `pid_file` when that process still runs a command mentioning `marker`."""
    try:
        pid = int(pid_file.read_text().split()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return None
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        try:
            if marker not in cmdline.read_bytes().decode(errors="replace"):
                return None
        except OSError:
            return None
    return pid


@dataclass
class Plan:
    """What a sweep still has to do."""

    jobs: list[Job]
    """jobs to start, in priority order"""
    units: list[str]
    """every progress-bar cell (one run with its evaluations, or one baseline)"""
    busy: list[Job]
    """jobs still running from an earlier sweep (and those waiting on them): left alone"""
    warnings: list[str]
    datasets: list[tuple[Path, str]]
    """(data, domain) pairs that the training jobs need"""


def plan(args: SweepConfig, cells: list[Cell]) -> Plan:
    """Decide, from what is on disk, which jobs of the grid are still to run."""
    planner = Planner(args)
    jobs: list[Job] = []
    units: list[str] = []
    datasets: dict[tuple[str, str], tuple[Path, str]] = {}
    logs = args.out / "logs"
    for cell in cells:
        run = args.out / cell.name
        units.append(cell.name)
        train = None
        if not (run / "metrics.json").is_file():
            if run.is_dir() and not (run / "args.json").is_file():
                if any(run.iterdir()):
                    planner.warnings.append(f"{run} exists without args.json: remove it to train this cell")
                    continue
                run.rmdir()  # left by a run killed before it wrote anything
            train = Job(
                cell.name,
                "train",
                train_command(args, cell),
                cell.name,
                cell.name,
                resume=resume_command(args, cell),
                run_dir=run,
            )
            jobs.append(train)
            data = data_root(args, cell) if not (run / "args.json").is_file() else planner.run_data(cell)
            datasets[(str(data), cell.domain)] = (data, cell.domain)
        if not args.eval:
            continue
        for clip in (False, True) if cell.dist == "n" else (False,):
            directory = run / "eval" / (args.split + ("-clip" if clip else ""))
            if train is None and planner.eval_done(directory, cell.domain, planner.run_data(cell)):
                continue
            name = f"{cell.name}__eval-{args.split}{'-clip' if clip else ''}"
            after = train.name if train else None
            jobs.append(Job(name, "eval", eval_command(args, cell, clip), cell.name, cell.name, after))
    if args.eval:
        for domain in dict.fromkeys(c.domain for c in cells):
            data = data_root(args, next(c for c in cells if c.domain == domain))
            unit = f"baseline {domain}"
            units.append(unit)
            if not planner.eval_done(baseline_dir(args, domain), domain, data):
                command = baseline_command(args, domain, data)
                jobs.append(
                    Job(
                        f"baselines__{domain}__hff__{args.split}", "baseline", command, unit, f"{domain}__hff"
                    )
                )
    # leave alone what an earlier sweep (killed without the chance to stop its jobs) still runs
    running = set()
    for job in jobs:
        pid_file = logs / f"{job.name}.pid"
        pid = _alive(pid_file, job.marker)
        if pid is not None:
            planner.warnings.append(
                f"{job.name} still runs (pid {pid}) from an earlier sweep: not started again"
            )
            running.add(job.name)
        else:
            pid_file.unlink(missing_ok=True)
    busy = [j for j in jobs if j.name in running or j.after in running]
    jobs = [j for j in jobs if j not in busy]
    jobs.sort(key=lambda j: j.priority)  # stable: the cell order within a kind
    return Plan(jobs, units, busy, planner.warnings, list(datasets.values()))
