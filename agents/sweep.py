"""Run the paper's grid locally: ``python -m agents.sweep``.

    python -m agents.sweep --domains ferry --models linear --seeds 0 1 --steps 2000 --split test
    python -m agents.sweep                                   # the whole grid of configs/grid.yaml

For every cell of the grid (domain × model × dist × σ × residual × bound) and seed, trains with
`agents.supervised` into ``<out>/<domain>__<model>__<dist>__<sigma>__<residual>__s<seed>``
(``__<bound>`` before ``__s<seed>`` when the bound is not LM-cut), then evaluates it with
`agents.evaluate` on ``--split`` (N runs also with ``--clip``), evaluates the hFF baseline once
per domain into ``<out>/baselines/<domain>__hff/eval/<split>/``, and finally writes the report
(`agents.report`) of everything in ``<out>`` to ``<out>/report/``.

Training uses the paper's per-model settings ``configs/<domain>-<model>.yaml`` (beside
``--grid``; ``--no-presets`` for the trainer's own defaults); ``--steps``, ``--data``,
``--val-every`` and ``--batch-size`` override them. Up to ``--jobs`` subprocesses run at once,
each on one thread (``OMP_NUM_THREADS=1`` and friends in its environment), each writing its
output to ``<out>/logs/<job>.log``; a progress bar counts finished cells (one run with its
evaluations, or one baseline).

Resumable: a run with ``metrics.json`` is not retrained and a run with only ``args.json`` is
continued with ``--resume``; an evaluation whose ``summary.json`` covers the requested problems
under the same budget is not repeated (and `agents.evaluate` itself skips finished problems).
Killing the sweep (Ctrl-C, SIGTERM) stops its jobs; the same command then finishes the rest.
A job still running from an earlier sweep (its ``logs/<job>.pid``) is left alone, never doubled.
"""

from __future__ import annotations

import itertools
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tyro
import yaml
from tqdm import tqdm

from pddlgym_sl.errors import ConfigError

AXES = {
    "domains": None,
    "models": ("nlm", "hgn", "linear"),
    "dists": ("n", "tn"),
    "sigmas": ("learn", "fixed"),
    "residuals": ("none", "hff", "lmcut"),
    "bounds": ("lmcut", "hmax", "blind"),
    "seeds": None,
}
DEFAULT_DATA = Path("data/small")  # agents.supervised's default dataset
CHILD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "PYTHONUNBUFFERED": "1",
}


@dataclass
class Args:
    """Train, evaluate and report a subset of the paper's grid with local subprocesses."""

    grid: Path = Path("configs/grid.yaml")
    """grid axes (domains, models, dists, sigmas, residuals, seeds; optional bounds)"""
    domains: list[str] | None = None
    """restrict the grid's domains"""
    models: list[Literal["nlm", "hgn", "linear"]] | None = None
    """restrict the grid's models"""
    dists: list[Literal["n", "tn"]] | None = None
    """restrict the grid's distributions"""
    sigmas: list[Literal["learn", "fixed"]] | None = None
    """restrict the grid's sigma settings"""
    residuals: list[Literal["none", "hff", "lmcut"]] | None = None
    """restrict the grid's residuals"""
    bounds: list[Literal["lmcut", "hmax", "blind"]] | None = None
    """lower bounds l of TN (default: the grid's, else lmcut)"""
    seeds: list[int] | None = None
    """restrict the grid's seeds"""
    steps: int | None = None
    """training steps (default: the preset's, else the trainer's)"""
    data: Path | None = None
    """dataset root (default: the preset's, else data/small)"""
    val_every: int | None = None
    """steps between validations (default: the preset's, else the trainer's)"""
    test_split: str | None = None
    """labelled split of the final test metrics (default: the trainer's, test)"""
    batch_size: int | None = None
    """states per training step (default: the preset's, else the trainer's)"""
    device: str | None = None
    """training device (default: the trainer's, auto)"""
    presets: bool = True
    """train with configs/<domain>-<model>.yaml (beside --grid) when it exists"""
    out: Path = Path("runs/sweep")
    """sweep directory: runs, baselines/, logs/, report/"""
    jobs: int = 2
    """subprocesses at once (each on one thread)"""
    split: str = "plan"
    """evaluation split"""
    limit: int = 10_000
    """node-evaluation budget per problem"""
    problems: int | None = None
    """evaluate only N problems, evenly spread over the sorted split"""
    eval: bool = True
    """evaluate the runs and the hFF baseline (--no-eval: train only)"""
    report: bool = True
    """write the report to <out>/report/ at the end"""
    dry_run: bool = False
    """print the jobs that would run, run nothing"""
    quiet: bool = False
    """no progress bar, job messages or tables"""


@dataclass(frozen=True)
class Cell:
    """One training run: a grid cell and a seed."""

    domain: str
    model: str
    dist: str
    sigma: str
    residual: str
    bound: str
    seed: int

    @property
    def name(self) -> str:
        bound = f"__{self.bound}" if self.bound != "lmcut" else ""
        return f"{self.domain}__{self.model}__{self.dist}__{self.sigma}__{self.residual}{bound}__s{self.seed}"


@dataclass
class Job:
    """One subprocess: training a run, evaluating it, or evaluating a baseline."""

    name: str
    kind: str  # "train" | "eval" | "baseline"
    command: list[str]
    unit: str  # the progress-bar cell it belongs to
    marker: str  # in the command line of this job's process (to recognise it still running)
    after: str | None = None  # a job that must succeed first

    @property
    def priority(self) -> int:
        return {"eval": 0, "train": 1, "baseline": 2}[self.kind]


# ------------------------------------------------------------------ planning
def grid_cells(args: Args) -> list[Cell]:
    """The cells of the grid file restricted by the command line, seed-major (seed 0 of every cell
    first, so that an interrupted sweep still covers the whole grid)."""
    try:
        grid = yaml.safe_load(args.grid.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the grid: {exc}", file=args.grid) from None
    axes: dict[str, list[Any]] = {}
    for axis, allowed in AXES.items():
        chosen = getattr(args, axis)
        values = list(chosen) if chosen is not None else list(grid.get(axis) or [])
        if axis == "bounds" and not values:
            values = ["lmcut"]
        if not values:
            raise ConfigError(f"no {axis}: give --{axis} or list them in the grid", file=args.grid)
        bad = [v for v in values if allowed is not None and v not in allowed]
        if bad:
            raise ConfigError(f"unknown {axis} {bad} (valid: {list(allowed)})", file=args.grid)
        axes[axis] = list(dict.fromkeys(values))
    cells = [
        Cell(d, m, dist, s, r, b, int(seed))
        for seed in axes["seeds"]
        for d, m, s, r, b, dist in itertools.product(
            axes["domains"], axes["models"], axes["sigmas"], axes["residuals"], axes["bounds"], axes["dists"]
        )
    ]
    return cells


def _preset(args: Args, cell: Cell) -> Path | None:
    path = args.grid.parent / f"{cell.domain}-{cell.model}.yaml"
    return path if args.presets and path.is_file() else None


def data_root(args: Args, cell: Cell) -> Path:
    """The dataset a cell trains on: --data, else its preset's, else the trainer's default."""
    if args.data is not None:
        return args.data
    preset = _preset(args, cell)
    if preset is not None:
        values = yaml.safe_load(preset.read_text()) or {}
        if values.get("data"):
            return Path(values["data"])
    return DEFAULT_DATA


def train_command(args: Args, cell: Cell) -> list[str]:
    """`agents.supervised` for a cell: continue it when args.json exists, else start it."""
    run = args.out / cell.name
    cmd = [sys.executable, "-m", "agents.supervised", "--quiet"]
    if (run / "args.json").is_file():
        return cmd + ["--resume", str(run)] + (["--steps", str(args.steps)] if args.steps else [])
    preset = _preset(args, cell)
    if preset is not None:
        cmd += ["--config", str(preset)]
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


def _eval_options(args: Args) -> list[str]:
    cmd = ["--split", args.split, "--limit", str(args.limit), "--quiet"]
    return cmd + (["--problems", str(args.problems)] if args.problems is not None else [])


def eval_command(args: Args, cell: Cell, clip: bool) -> list[str]:
    cmd = [sys.executable, "-m", "agents.evaluate", "--run", str(args.out / cell.name), *_eval_options(args)]
    return cmd + (["--clip"] if clip else [])


def baseline_dir(args: Args, domain: str) -> Path:
    return args.out / "baselines" / f"{domain}__hff" / "eval" / args.split


def baseline_command(args: Args, domain: str, data: Path) -> list[str]:
    cmd = [sys.executable, "-m", "agents.evaluate", "--heuristic", "hff", "--domain", domain]
    return [*cmd, "--data", str(data), "--out", str(baseline_dir(args, domain)), *_eval_options(args)]


class _Planner:
    """Decides which jobs are still needed, reading what earlier sweeps left behind."""

    def __init__(self, args: Args) -> None:
        self.args = args
        self.counts: dict[tuple[str, str], int] = {}
        self.warnings: list[str] = []

    def expected_problems(self, domain: str, data: Path | None) -> int:
        """How many problems `agents.evaluate` evaluates (the same `problem_files` and `spread`):
        the dataset's own copies of the split, else the paper's Table 3 split."""
        key = (domain, str(data))
        if key not in self.counts:
            from pddlgym_sl.envs.problems import problem_files, spread

            files = problem_files(domain, self.args.split, data)
            self.counts[key] = len(spread(files, self.args.problems))
        return self.counts[key]

    def eval_done(self, directory: Path, domain: str, data: Path | None) -> bool:
        """An evaluation is finished when its summary covers the requested problems; one made under
        another budget is kept (with a warning): its per-problem results would be reused anyway."""
        from agents.report_data import _read_json

        summary = _read_json(directory / "summary.json")
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
        from agents.report_data import _read_json

        stored = _read_json(self.args.out / cell.name / "args.json")
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


def plan(args: Args, cells: list[Cell]) -> Plan:
    """Decide, from what is on disk, which jobs of the grid are still to run."""
    planner = _Planner(args)
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
            train = Job(cell.name, "train", train_command(args, cell), cell.name, cell.name)
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


# ------------------------------------------------------------------ running
def _child_env() -> dict[str, str]:
    return {**os.environ, **CHILD_ENV}


class _Scheduler:
    """Runs jobs as subprocesses, at most `width` at once, respecting `Job.after`."""

    def __init__(self, jobs: list[Job], width: int, logs: Path, bar: tqdm, quiet: bool) -> None:
        self.waiting = list(jobs)
        self.width = max(1, width)
        self.logs = logs
        self.bar = bar
        self.quiet = quiet
        self.running: dict[str, tuple[Job, subprocess.Popen, Any, float]] = {}
        self.succeeded: set[str] = set()
        self.failed: dict[str, str] = {}
        self.left = Counter(j.unit for j in jobs)

    def say(self, text: str) -> None:
        if not self.quiet:
            tqdm.write(text)

    def _finish(self, job: Job) -> None:
        self.left[job.unit] -= 1
        if self.left[job.unit] == 0:
            self.bar.update(1)

    def _start(self, job: Job) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        log = (self.logs / f"{job.name}.log").open("a")
        log.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} $ {shlex.join(job.command)}\n")
        log.flush()
        proc = subprocess.Popen(job.command, stdout=log, stderr=subprocess.STDOUT, env=_child_env())
        (self.logs / f"{job.name}.pid").write_text(f"{proc.pid}\n")
        self.running[job.name] = (job, proc, log, time.perf_counter())
        self.say(f"start  {job.name}")

    def _reap(self) -> None:
        for name, (job, proc, log, start) in list(self.running.items()):
            rc = proc.poll()
            if rc is None:
                continue
            log.close()
            (self.logs / f"{name}.pid").unlink(missing_ok=True)
            del self.running[name]
            seconds = time.perf_counter() - start
            if rc == 0:
                self.succeeded.add(name)
                self.say(f"done   {name} ({seconds:.0f} s)")
            else:
                self.failed[name] = f"exit status {rc}; see {self.logs / (name + '.log')}"
                self.say(f"FAILED {name} (exit status {rc}; log: {self.logs / (name + '.log')})")
            self._finish(job)

    def run(self) -> None:
        try:
            while self.waiting or self.running:
                for job in list(self.waiting):
                    if job.after in self.failed:
                        self.waiting.remove(job)
                        self.failed[job.name] = f"not run: {job.after} failed"
                        self._finish(job)
                    elif len(self.running) < self.width and (
                        job.after is None or job.after in self.succeeded
                    ):
                        self.waiting.remove(job)
                        self._start(job)
                self.bar.set_postfix_str(", ".join(self.running), refresh=False)
                self._reap()
                if self.running:
                    time.sleep(0.2)
        finally:
            self.stop()

    def stop(self) -> None:
        """Terminate the jobs still running (after an interrupt); their work is resumable."""
        for name, (_, proc, log, _) in list(self.running.items()):
            if proc.poll() is None:
                proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} stopped by the sweep (resumable)\n")
            log.close()
            self.say(f"stopped {name}")
            (self.logs / f"{name}.pid").unlink(missing_ok=True)
            del self.running[name]


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


@dataclass
class SweepResult:
    """What a sweep did: the jobs it ran and those that failed (name -> reason)."""

    launched: list[str]
    failed: dict[str, str]
    warnings: list[str]


def sweep(args: Args) -> SweepResult:
    """Plan and run the jobs of `args`, then write the report."""
    cells = grid_cells(args)
    todo = plan(args, cells)
    jobs, units, warnings = todo.jobs, todo.units, todo.warnings
    say = (lambda text: None) if args.quiet else print
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    kinds = Counter(j.kind for j in jobs)
    say(
        f"sweep {args.out}: {len(cells)} runs, {len(units) - len(cells)} baselines; to run: {kinds['train']} "
        f"train, {kinds['eval']} eval, {kinds['baseline']} baseline jobs, {args.jobs} at a time"
    )
    if args.dry_run:
        for job in jobs:
            print(shlex.join(job.command) + (f"    # after {job.after}" if job.after else ""))
        return SweepResult([], {}, warnings)
    if not jobs and todo.busy:
        say(f"nothing to start: {len(todo.busy)} jobs wait on an earlier sweep's; run again when it ends")
    elif not jobs:
        say("nothing to do: every run, evaluation and baseline is finished")
    if kinds["train"]:
        from agents.supervised import Args as TrainArgs
        from agents.supervised import ensure_dataset

        for data, domain in todo.datasets:  # once, before parallel jobs could race to create it
            test_split = {"test_split": args.test_split} if args.test_split else {}
            ensure_dataset(TrainArgs(domain=domain, data=data, quiet=args.quiet, **test_split))
    args.out.mkdir(parents=True, exist_ok=True)
    pending_units = {j.unit for j in jobs + todo.busy}
    bar = tqdm(
        total=len(units),
        initial=len(units) - len(pending_units),
        desc="cells",
        unit="cell",
        disable=args.quiet,
        dynamic_ncols=True,
    )
    scheduler = _Scheduler(jobs, args.jobs, args.out / "logs", bar, args.quiet)
    main_thread = threading.current_thread() is threading.main_thread()  # signals: main thread only
    previous = signal.signal(signal.SIGTERM, _raise_interrupt) if main_thread else None
    try:
        scheduler.run()
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
        bar.close()
    if args.report:
        from agents.report import build_report

        report = build_report([args.out], args.out / "report", split=args.split)
        if not args.quiet:
            print(report.table1)
            print(report.table2)
        say(f"report: {args.out / 'report'}")
    launched = [j.name for j in jobs if j.name in scheduler.succeeded or j.name in scheduler.failed]
    launched = [n for n in launched if not scheduler.failed.get(n, "").startswith("not run")]
    for name, reason in scheduler.failed.items():
        print(f"failed: {name}: {reason}", file=sys.stderr)
    return SweepResult(launched, scheduler.failed, warnings)


def main(argv: list[str] | None = None) -> int:
    args = tyro.cli(Args, args=argv, description=__doc__)
    try:
        result = sweep(args)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: run the same command again to finish the sweep", file=sys.stderr)
        return 130
    if not args.quiet and not args.dry_run:
        print(f"launched {len(result.launched)} jobs, {len(result.failed)} failed")
    return 1 if result.failed else 0


if __name__ == "__main__":
    sys.exit(main())
