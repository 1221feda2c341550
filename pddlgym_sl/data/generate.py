"""Command line: generate a split's problems, solve them optimally and label every plan state.

    python -m pddlgym_sl.data.generate --domain ferry --split train [--jobs N] [--out DIR]
    python -m pddlgym_sl.data.generate --domain ferry --split all      # train, val and test
    python -m pddlgym_sl.data.generate --preset small            # the training quick start's data
    python -m pddlgym_sl.data.generate --domain-file D.pddl --problems DIR --split mine
    python -m pddlgym_sl.data.generate --domain ferry --split train --upper  # also u (data.upper)
    python -m pddlgym_sl.data.generate --problems ../shared/ipc23-lt/ferry/training --split train \
        --time-limit 60 --stop-after 5 --jobs 1         # given tasks: the IPC 2023 LT training tasks
    python -m pddlgym_sl.data.generate --domain ferry --split train --backend ray --address auto
    python -m pddlgym_sl.data.generate --problems ../shared/ipc23-lt/ferry/training --split train-plans \
        --val-every 5 --labels satisficing --unsolved-in train --time-limit 60   # intervals [l, u]

Writes ``<out>/<domain>/<split>/`` (see `pddlgym_sl.data.build`); re-running resumes. Fast Downward
(A* + LM-cut) solves each problem under a time/memory limit — 5 min / 8 GB for train and val,
30 min / 8 GB for test and plan, as in the paper — regenerating a failed problem with another
seed up to 20 times.

Parallel (`pddlgym_sl.parallel`): ``--jobs N`` local worker processes (one thread each), or
``--backend ray [--address ADDR]`` one Ray task per problem on a cluster (``pip install
'pddlgym-sl[cluster]'``; every node must see ``--out`` at the same path). Ctrl-C or SIGTERM stops
every worker at once, says how many problems are finished and kept, and the same command resumes;
no worker or planner outlives the command, even after ``kill -9``.

Given tasks (``--problems DIR``): every ``*.pddl`` in DIR that is not a domain file, by name. The
domain file is ``--domain-file``, else the bundled domain of ``--domain``, else a ``domain.pddl``
in DIR or in its parent (the IPC layout ``<domain>/domain.pddl``, ``<domain>/training/p01.pddl``);
the dataset is named after ``--domain`` or the domain file's directory. A given task is solved
once (no regeneration); a task that fails (limits, unsolvable, unreadable, a crash) is a recorded
failure, never fatal. ``--val-every K`` sends every K-th task to a ``val`` split; ``--stop-after
K`` gives up on the rest of a size-ordered directory after K consecutive failures.

Satisficing labels (``--labels satisficing``): Fast Downward's lama-first instead of A* under the
same limits, its plan shortened (`pddlgym_sl.data.shorten`), every plan state labelled with the
plan's remaining cost, an upper bound u of h* (`pddlgym_sl.data.labels`): training reads such a
split as intervals [l, u] (``agents.supervised --interval-split``). ``--unsolved-in SPLIT`` labels
only the tasks that SPLIT (of the same dataset) did not solve; with ``--val-every K`` the val
tasks are left out (the val split keeps its optimal labels).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import domains
from pddlgym_sl.arguments import check_ranges
from pddlgym_sl.cli import Command, tyro_parse
from pddlgym_sl.data.build import build_split, read_records
from pddlgym_sl.data.presets import get_preset
from pddlgym_sl.data.solve import SolveConfig, slot_name
from pddlgym_sl.envs.problems import resolve_problems
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.parallel import BACKENDS, Backend

DEFAULT_TIME_LIMITS = {"train": 300.0, "val": 300.0, "test": 1800.0, "plan": 1800.0, "test-reduced": 300.0}
LABELLED_SPLITS = ("train", "val", "test")
"""``--split all``: the splits training and Table 1 need (the plan split is only searched, not labelled)."""


@dataclass
class Args:
    """Generate, solve and label problem sets (see the module docstring)."""

    domain: str | None = None
    """bundled domain (blocksworld, ferry, gripper, visitall)"""
    split: str | None = None
    """split of Table 3 (train, val, test, plan), all (= train, val, test), or a name for --problems"""
    preset: Literal["small", "test-reduced"] | None = None
    """a named problem set instead of --split (see pddlgym_sl.data.presets; test-reduced needs --domain)"""
    out: Path | None = None
    """root directory (default: data; data/small for --preset small)"""
    jobs: int = max(1, os.cpu_count() or 1)
    """parallel solver processes (local backend)"""
    backend: Literal[BACKENDS] = "local"
    """where problems are solved: local processes, or ray (a Ray cluster; the [cluster] extra)"""
    address: str | None = None
    """--backend ray: the cluster's address (auto, or HOST:PORT; default: $RAY_ADDRESS, else a Ray
    instance of this machine)"""
    limit: int | None = None
    """only the first N problems of the split"""
    time_limit: float | None = None
    """solver time limit per problem in seconds (default: 300 train/val, 1800 test/plan)"""
    memory_limit: int = 8192
    """solver memory limit per problem in MiB"""
    retries: int = 20
    """attempts per problem (regenerated with another seed after a failure)"""
    problems: Path | None = None
    """label the user's own problem files in this directory instead of generating"""
    domain_file: Path | None = None
    """domain file for --problems (default: the bundled domain of --domain, else DIR/domain.pddl or
    DIR/../domain.pddl)"""
    stop_after: int | None = None
    """stop after this many consecutive failed problems, in order (the rest are larger; needs --jobs 1)"""
    val_every: int | None = None
    """with --problems: every K-th given task (K-th, 2K-th, ...) goes to the val split instead"""
    quiet: bool = False
    """no progress bar"""
    rebuild: bool = False
    """delete and rebuild a split labelled by an older core version (instead of refusing it)"""
    upper: bool = False
    """also give every labelled state an upper bound u: the cost of a GBFS + hFF plan from it
    (pddlgym_sl.data.upper; a finished split only gains the column)"""
    labels: Literal["optimal", "satisficing"] = "optimal"
    """optimal: A* + LM-cut, each plan state labelled with h*; satisficing: lama-first, the plan
    shortened, each state labelled with its remaining cost (an upper bound u of h*)"""
    unsolved_in: str | None = None
    """with --problems: only the tasks that this split (under the same --out) did not solve"""

    def __post_init__(self) -> None:
        check_ranges(self, positive=("jobs", "limit", "time_limit", "memory_limit", "retries", "stop_after"))
        Backend(self.backend, self.jobs, self.address)  # --address without --backend ray


def given_domain_file(problems: Path, domain_file: Path | None, domain: str | None) -> Path:
    """The domain file of a directory of given tasks (see the module docstring)."""
    if domain_file is not None:
        return domain_file
    if domain is not None:
        return domains.domain_file(domain)
    for candidate in (problems / "domain.pddl", problems.parent / "domain.pddl"):
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"no domain file for {problems}: give --domain-file (no domain.pddl in it or in its parent)"
    )


def _solved_slots(split_dir: Path) -> set[str]:
    """The slots a labelled split solved (`ConfigError` when it has no records)."""
    records = read_records(split_dir)
    if not records:
        raise ConfigError(f"--unsolved-in: {split_dir} has no records (label that split first)")
    return {slot for slot, record in records.items() if record["status"] == "solved"}


def run(args: Args) -> list[dict]:
    """Build the requested split(s); return their manifests."""

    def config(split: str) -> SolveConfig:
        limits = {
            "time_limit": args.time_limit or DEFAULT_TIME_LIMITS.get(split, 300.0),
            "memory_limit_mb": args.memory_limit,
            "retries": args.retries,
        }
        return SolveConfig.satisficing(**limits) if args.labels == "satisficing" else SolveConfig(**limits)

    def build(name: str, domain_file: Path, split: str, slots: list, split_dir: Path) -> dict:
        """One split of `name` built with the command's settings (`build_split`)."""
        return build_split(
            name,
            domain_file,
            split,
            slots,
            split_dir,
            config(split),
            jobs=args.jobs,
            progress=not args.quiet,
            rebuild=args.rebuild,
            upper=args.upper,
            stop_after=args.stop_after,
            backend=args.backend,
            address=args.address,
        )

    if args.preset is not None:
        preset = get_preset(args.preset, args.domain)
        root = args.out or Path(preset.root)
        return [
            build(
                preset.domain,
                domains.domain_file(preset.domain),
                split,
                specs[: args.limit],
                root / preset.domain / split,
            )
            for split, specs in preset.splits.items()
        ]
    if args.split is None or (args.domain is None and args.domain_file is None and args.problems is None):
        raise ConfigError("give --preset, or --domain and --split (or --domain-file, --problems and --split)")
    root = args.out or Path("data")
    if args.problems is not None:
        domain_file = given_domain_file(args.problems, args.domain_file, args.domain)
        files = list(resolve_problems(problems=args.problems, domain_file=domain_file).files)
        name = args.domain or domain_file.resolve().parent.name
        slots = files[: args.limit]
        plan = {args.split: slots}
        if args.val_every is not None:
            if args.val_every < 2 or args.split == "val":
                raise ConfigError("--val-every must be at least 2, and --split must not be val")
            held = slots[args.val_every - 1 :: args.val_every]
            plan = {args.split: [f for f in slots if f not in held], "val": held}
            if args.labels == "satisficing":  # the val split keeps its optimal labels
                del plan["val"]
        if args.unsolved_in is not None:
            solved = _solved_slots(root / name / args.unsolved_in)
            plan[args.split] = [f for f in plan[args.split] if slot_name(f) not in solved]
    else:
        domain_file = domains.domain_file(args.domain)
        name = args.domain
        splits = LABELLED_SPLITS if args.split == "all" else (args.split,)
        plan = {split: domains.split_specs(args.domain, split)[: args.limit] for split in splits}
    return [build(name, domain_file, split, slots, root / name / split) for split, slots in plan.items()]


def report(args: Args) -> int:
    """Build the split(s), then print one line per split."""
    manifests = run(args)
    for m in manifests:
        s = m["summary"]
        print(
            f"{m['domain']}/{m['split']}: {s['solved']}/{s['slots']} solved, {s['failed']} failed, "
            f"{s['states']} labelled states, {s['retries']} regenerations; "
            f"solver {s['solver_seconds']:.1f}s, labelling {s['label_seconds']:.1f}s"
        )
    return 0


COMMAND = Command(
    "python -m pddlgym_sl.data.generate",
    tyro_parse(Args, __doc__),
    report,
    interrupt=lambda args: f"finished problems are kept under {args.out or 'data'}",
)


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
