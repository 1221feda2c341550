"""Learning curves of value learning: GBFS with the learned V on held-out problems vs env steps.

    python -m agents.rl_value --dist tn --snapshot-every 2000 --steps 20000 --seed 0  # and n, n --clip
    python -m agents.apps.rl_value_curves --runs runs/rlv__ferry__* --split val --problems 20 \\
        --limit 10000 --baselines hff --out docs/figures/rl_value_ferry

Every ``--runs`` directory of `agents.apps.rl_value` contributes one curve: each of its snapshots
(``snapshots/step-<steps>.safetensors``, written with ``--snapshot-every``) plans with GBFS
(`pddlgym_sl.search.gbfs`, ``--limit`` evaluations; the run's ``--clip`` is used for N+clip) on the
held-out problems: ``--tasks DIR``, or ``--problems`` spread over the run's domain's ``--split``
(the dataset's copy under the run's ``--data`` if it has one). Each ``--baselines`` heuristic
(hFF, ...) and the best checkpoint of each ``--supervised`` run (`agents.apps.supervised`, e.g. the
TN model trained on optimal labels for about the value runs' wall-clock time) plan on the same
problems and are drawn as horizontal lines. Per snapshot and problem the result is kept in
``<run>/curves/<split>/step-<steps>/<problem>.json`` (baselines: beside ``--out``), so an
interrupted plot resumes without re-planning. Writes ``<out>.png`` (coverage, mean plan length of
the solved problems and mean evaluations against env steps; colour: the head, one line per run) and
``<out>.md`` (the same numbers as a table, with each run's training wall-clock seconds).
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

import domains
from pddlgym_sl.cli import Command, tyro_parse
from pddlgym_sl.envs.encoders.schema import Schema
from pddlgym_sl.envs.problems import problem_files, resolve_problems, spread
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.io import atomic_write_json, atomic_write_text
from pddlgym_sl.search import gbfs
from pddlgym_sl.task import load_task

__all__ = ["Point", "main", "snapshots"]

_STEP = re.compile(r"step-(\d+)\.safetensors$")


@dataclass
class Args:
    """Learning curves (coverage, mean plan length vs env steps) of agents.rl_value runs."""

    runs: list[Path]
    """run directories of python -m agents.rl_value (with --snapshot-every)"""
    out: Path = Path("rl_value_curves")
    """output prefix: <out>.png, <out>.md, and <out>-baselines/ (the baselines' cached results)"""
    split: str = "val"
    """held-out split of the runs' domain"""
    tasks: Path | None = None
    """held-out problem files of this directory instead (its domain.pddl, or the parent's)"""
    problems: int = 20
    """problems spread over the held-out split"""
    limit: int = 10_000
    """GBFS evaluation budget per problem"""
    baselines: list[str] = field(default_factory=list)
    """heuristics (hff, lmcut, ...) planning on the same problems, drawn as horizontal lines"""
    supervised: list[Path] = field(default_factory=list)
    """run directories of python -m agents.supervised (best checkpoint) planning on the same problems,
    drawn as horizontal lines labelled with their training wall-clock seconds"""
    quiet: bool = False
    """no progress bar"""


@dataclass
class Point:
    """One snapshot's (or baseline's) GBFS results on the held-out problems."""

    steps: int
    coverage: float
    mean_length: float  # over the solved problems (nan: none solved)
    mean_evaluations: float  # over all problems (an unsolved one counts what it spent)


def snapshots(run: Path) -> list[tuple[int, Path]]:
    """``(env steps, weights file)`` of a run's snapshots, by steps."""
    files = (run / "snapshots").glob("*.safetensors")
    return sorted((int(m.group(1)), p) for p in files if (m := _STEP.match(p.name)))


def _recorded_args(run: Path) -> dict:
    """The run's checked args.json (`agents.training.records`) as a dict of its fields."""
    from agents.training.records import run_args

    return dataclasses.asdict(run_args(run)[1])


def held_out(args: Args, run_args: dict) -> tuple[Path, list[Path], str]:
    """Domain file, problem files and split label of the held-out problems."""
    if args.tasks is not None:
        domain_file = args.tasks / "domain.pddl"
        if not domain_file.is_file():
            domain_file = args.tasks.parent / "domain.pddl"
        files = list(resolve_problems(problems=args.tasks, domain_file=domain_file).files)
        return domain_file, spread(files, args.problems), args.tasks.resolve().name
    domain = run_args["domain"]
    data = Path(run_args["data"]) if run_args.get("data") else None
    files = spread(problem_files(domain, args.split, data), args.problems)
    return domains.domain_file(domain), files, args.split


def _solve(domain_file: Path, problem: Path, heuristic, limit: int, cache: Path) -> dict:
    if cache.is_file():
        return json.loads(cache.read_text())
    task = load_task(domain_file, problem)
    h = heuristic(task) if callable(heuristic) else heuristic
    result = gbfs(task, h, max_evaluations=limit)
    record = {"solved": result.solved, "length": result.cost, "evaluations": result.evaluations}
    atomic_write_json(cache, record)
    return record


def _point(steps: int, records: list[dict]) -> Point:
    lengths = [r["length"] for r in records if r["solved"]]
    coverage = len(lengths) / len(records) if records else float("nan")
    evaluations = float(np.mean([r["evaluations"] for r in records])) if records else float("nan")
    return Point(steps, coverage, float(np.mean(lengths)) if lengths else float("nan"), evaluations)


def run_curve(args: Args, run: Path, bar: tqdm) -> tuple[str, list[Point]]:
    """The curve of one run: its label (head and seed) and a point per snapshot."""
    from agents.learned_heuristic import LearnedHeuristic, TrainedModel
    from agents.value_targets import target_mode  # torch: not at import (fast --help)

    run_args = _recorded_args(run)
    clip = bool(run_args.get("clip", False))
    label = f"{target_mode(str(run_args['dist']), clip)} s{run_args['seed']}"
    domain_file, files, split = held_out(args, run_args)
    schema = Schema.from_domain_file(domain_file)
    points = []
    for steps, weights in snapshots(run):
        trained = TrainedModel.load(run, checkpoint=str(weights.relative_to(run).with_suffix("")))
        make = lambda task, t=trained: LearnedHeuristic(t, task, schema, clip=clip)  # noqa: E731
        records = []
        for f in files:
            cache = run / "curves" / f"{split}-{args.limit}" / f"step-{steps}" / f"{f.stem}.json"
            records.append(_solve(domain_file, f, make, args.limit, cache))
            bar.update(1)
        points.append(_point(steps, records))
    return label, points


def baseline_points(args: Args, run_args: dict, bar: tqdm) -> dict[str, Point]:
    domain_file, files, split = held_out(args, run_args)
    out = {}
    for name in args.baselines:
        cache_dir = Path(f"{args.out}-baselines") / f"{split}-{args.limit}" / name
        records = [_solve(domain_file, f, name, args.limit, cache_dir / f"{f.stem}.json") for f in files]
        bar.update(len(files))
        out[name] = _point(0, records)
    return out


def supervised_points(args: Args, run_args: dict, bar: tqdm) -> dict[str, Point]:
    """GBFS with each ``--supervised`` run's best checkpoint on the held-out problems."""
    from agents.checkpoint import load_json_object  # torch: not at import (fast --help)
    from agents.learned_heuristic import LearnedHeuristic, TrainedModel

    domain_file, files, split = held_out(args, run_args)
    schema = Schema.from_domain_file(domain_file)
    out = {}
    for run in args.supervised:
        trained = TrainedModel.load(run)
        stored = _recorded_args(run)
        wall = load_json_object(run / "metrics.json").get("wall_seconds")
        name = f"supervised {str(stored['dist']).upper()} ({wall:.0f} s training)" if wall else run.name
        make = lambda task, t=trained: LearnedHeuristic(t, task, schema)  # noqa: E731
        cache_dir = Path(f"{args.out}-baselines") / f"{split}-{args.limit}" / f"supervised-{run.name}"
        records = [_solve(domain_file, f, make, args.limit, cache_dir / f"{f.stem}.json") for f in files]
        bar.update(len(files))
        out[name] = _point(0, records)
    return out


def table(curves: dict[str, list[Point]], baselines: dict[str, Point]) -> str:
    rows = ["| curve | env steps | coverage | mean plan length | mean evaluations |", "|-|-:|-:|-:|-:|"]
    for label, points in curves.items():
        rows += [f"| {label} | {p.steps} | {_cells(p)} |" for p in points]
    rows += [f"| GBFS {name} | - | {_cells(p)} |" for name, p in baselines.items()]
    return "\n".join(rows) + "\n"


def _cells(p: Point) -> str:
    return f"{p.coverage:.2f} | {p.mean_length:.2f} | {p.mean_evaluations:.0f}"


def plot(curves: dict[str, list[Point]], baselines: dict[str, Point], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    heads = sorted({label.split()[0] for label in curves})
    colours = {h: f"C{i}" for i, h in enumerate(heads)}
    for label, points in curves.items():
        x = [p.steps for p in points]
        style = {"color": colours[label.split()[0]], "marker": "o", "markersize": 3, "label": label}
        axes[0].plot(x, [p.coverage for p in points], **style)
        axes[1].plot(x, [p.mean_length for p in points], **style)
        axes[2].plot(x, [p.mean_evaluations for p in points], **style)
    for i, (name, p) in enumerate(baselines.items()):
        style = {"color": "grey", "linestyle": ("--", ":", "-.")[i % 3], "label": f"GBFS {name}"}
        axes[0].axhline(p.coverage, **style)
        axes[1].axhline(p.mean_length, **style)
        axes[2].axhline(p.mean_evaluations, **style)
    for ax, what in zip(axes, ("coverage", "mean plan length (solved)", "mean evaluations"), strict=True):
        ax.set_xlabel("env steps")
        ax.set_ylabel(what)
        ax.grid(alpha=0.3)
    axes[0].set_ylim(-0.02, 1.02)
    axes[1].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(args: Args) -> int:
    """Plan from every snapshot (and baseline), write the table and the plot."""
    missing = [str(r) for r in args.runs if not snapshots(r)]
    if missing:
        raise ConfigError(f"no snapshots (train with --snapshot-every N) in {', '.join(missing)}")
    first_args = _recorded_args(args.runs[0])
    n_files = len(held_out(args, first_args)[1])
    total = n_files * (sum(len(snapshots(r)) for r in args.runs) + len(args.baselines) + len(args.supervised))
    with tqdm(total=total, desc="GBFS", unit="problem", disable=args.quiet) as bar:
        curves = dict(run_curve(args, r, bar) for r in args.runs)
        baselines = baseline_points(args, first_args, bar)
        baselines |= supervised_points(args, first_args, bar)
    where = str(args.tasks) if args.tasks else f"{first_args['domain']} {args.split}"
    title = f"value learning: GBFS on {n_files} held-out problems ({where}), {args.limit} evaluations"
    plot(curves, baselines, args.out.with_suffix(".png"), title)
    walls = "\n".join(f"- {r}: {_wall_seconds(r)} s training" for r in [*args.runs, *args.supervised])
    atomic_write_text(args.out.with_suffix(".md"), f"{title}\n\n{table(curves, baselines)}\n{walls}\n")
    print(table(curves, baselines), end="")
    return 0


COMMAND = Command("python -m agents.rl_value_curves", tyro_parse(Args, __doc__), run, extra="learn")


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


def _wall_seconds(run: Path) -> str:
    """The wall-clock seconds a run's metrics.json records for its training ("?" if none)."""
    path = run / "metrics.json"
    wall = json.loads(path.read_text()).get("wall_seconds") if path.is_file() else None
    return f"{wall:.0f}" if isinstance(wall, int | float) else "?"


if __name__ == "__main__":
    sys.exit(main())
