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
evaluations, or one baseline). With ``--backend ray [--address ADDR]`` each job is a Ray task on
a cluster instead (the ``[cluster]`` extra; `pddlgym_sl.parallel`): the cluster's CPUs decide how
many run at once, every node must see ``--out``, the data and this checkout at the same paths,
and a job whose worker died is run again (a training continues from its last checkpoint).

Resumable: a run with ``metrics.json`` is not retrained and a run with only ``args.json`` is
continued with ``--resume``; an evaluation whose ``summary.json`` covers the requested problems
under the same budget is not repeated (and `agents.evaluate` itself skips finished problems).
Killing the sweep (Ctrl-C, SIGTERM) stops its jobs at once and says so in one line; the same
command then finishes the rest. Its jobs die with it even after ``kill -9``
(`pddlgym_sl.parallel.children`); a job still running from an earlier sweep (its
``logs/<job>.pid``) is left alone, never doubled.
"""

from __future__ import annotations

import shlex
import sys
from collections import Counter
from dataclasses import dataclass

from tqdm import tqdm

from agents.sweeping.config import SweepConfig
from agents.sweeping.grid import Cell, grid_cells
from agents.sweeping.jobs import Job, plan
from agents.sweeping.scheduler import Scheduler
from pddlgym_sl.cli import Command, tyro_parse
from pddlgym_sl.parallel import stop_on_signals

__all__ = ["Args", "Cell", "Job", "Scheduler", "SweepResult", "grid_cells", "main", "plan", "sweep"]


Args = SweepConfig
"""The command's flags (field docstrings are their help texts)."""


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
        from agents.training import SupervisedConfig
        from agents.training.datasets import ensure_dataset

        for data, domain in todo.datasets:  # once, before parallel jobs could race to create it
            test_split = {"test_split": args.test_split} if args.test_split else {}
            ensure_dataset(SupervisedConfig(domain=domain, data=data, **test_split), progress=not args.quiet)
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
    scheduler = Scheduler(jobs, args.jobs, args.out / "logs", bar, args.quiet, args.backend, args.address)
    try:
        with stop_on_signals():
            scheduler.run()
    finally:
        bar.close()
    if args.report:
        from agents.reporting import build_report

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


def run(args: Args) -> int:
    """Run the sweep; say how many jobs ran and failed (exit status 1 when one failed)."""
    result = sweep(args)
    if not args.quiet and not args.dry_run:
        print(f"launched {len(result.launched)} jobs, {len(result.failed)} failed")
    return 1 if result.failed else 0


def _kept(args: Args) -> tuple[str, str]:
    return f"finished runs and evaluations are kept in {args.out}", "run the same command again to finish"


COMMAND = Command("python -m agents.sweep", tyro_parse(Args, __doc__), run, extra="learn", interrupt=_kept)


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
