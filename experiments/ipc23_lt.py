"""The IPC 2023 Learning Track experiment of docs/ipc23.md: train, plan, tabulate (resumable).

    python -m experiments.ipc23_lt [--protocol paper|ecai25] [--domains ferry miconic ...]
                                   [--configs hff wl-n wl-tn wl-rank ...] [--sample K] [--table-only]

Per domain, with the labels of ``python -m pddlgym_sl.data.generate --problems
../shared/ipc23-lt/<domain>/training --split train --val-every 5 --out data/ipc ...`` (docs/ipc23.md):

1. trains each learned configuration of `CONFIGS` with ``python -m agents.supervised`` into
   ``<runs>/<domain>-<config>`` (the val split stands in for a test split; a finished run is
   kept, an interrupted one resumed);
2. plans with each configuration and GBFS + hFF on the protocol's test sets with
   ``python -m agents.evaluate --tasks ...`` (resumable);
3. prints the coverage tables and the training table.

Two protocols (`PROTOCOLS`): ``paper`` (the admissible-bounds paper's: 10,000 evaluations and 600 s
per search, 3,000 training steps; easy and medium) into ``runs/ipc``, and ``ecai25`` (the field's,
as in Chen's ECAI 2025 study of WL-GOOSE: training within 5 minutes of wall clock, then GBFS with no
evaluation cap, 60 s and 4 GB per task with loading and grounding counted, ``--limits-cover-
grounding``; easy, medium and hard) into ``runs/ipc-ecai25``, tabulated beside the competition's
planners on the same tasks and WL-GOOSE's published totals (`ipc23_field`). ``--sample K`` plans
on an even spread of one task in K of each set (the same tasks for every configuration);
``--address HOST:PORT`` plans on a Ray cluster (one task per worker, its CPU and memory share).

Labels: a learned configuration's domain without finished labels gets them first, with the command
above (`label`; it resumes). A split restored from the store is consolidated by the training that
loads it (`pddlgym_sl.data.dataset.load_split`).

What is finished is also kept in ``--store`` (default ``experiments/results/<runs' name>``, tracked
by git; `results_store`): the labels, every trained run (with its best weights) and every evaluated
task, copied there after each step and back into ``--data`` and ``--runs`` before the first, so a
fresh checkout resumes instead of training and planning again (the 5-minute trainings are not
reproducible to the step: they stop on the wall clock). ``--no-store`` leaves it alone;
``--table-only`` alone tabulates what the store holds (its packs, extracted to a temporary folder);
with ``--runs DIR`` it tabulates DIR.

Every command runs as a subprocess, so what it does is what those commands do. Ctrl-C or SIGTERM
stops the running command at once with one line, and no command outlives the script.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from agents.evaluation.choices import result_directory
from agents.evaluation.config import EvaluationConfig
from agents.evaluation.records import evaluation_records
from experiments import results_store
from experiments.ipc23_field import (
    TASKS_PER_DOMAIN,
    WL_GOOSE_ECAI25,
    WL_GOOSE_ECAI25_BEST_TOTAL,
    official_coverage,
)
from pddlgym_sl.data.generate import given_domain_file
from pddlgym_sl.envs.problems import resolve_problems
from pddlgym_sl.io import atomic_write_json
from pddlgym_sl.parallel import interrupted, run_command, stop_on_signals

ROOT = Path(__file__).resolve().parents[1]
IPC = ROOT.parent / "shared" / "ipc23-lt"
DOMAINS = ("blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban",
           "spanner", "transport")  # fmt: skip
TEST_SETS = ("testing-easy", "testing-medium", "testing-hard")


@dataclass(frozen=True)
class Protocol:
    """How the configurations are trained and their searches limited."""

    test_sets: tuple[str, ...]
    limit: int  # node evaluations per search
    time_limit: float  # seconds per search, or per task with `covers_grounding`
    memory_limit: float | None  # MB per task and per training (None: the defaults)
    covers_grounding: bool  # the limits count loading and grounding the task
    steps: int  # training steps of the WL models
    nlm_steps: int  # and of the NLM
    time_budget: float | None  # wall-clock seconds of training (None: none)
    runs: str  # where its runs go, under the checkout


PROTOCOLS = {
    "paper": Protocol(TEST_SETS[:2], 10_000, 600.0, None, False, 3000, 1000, None, "runs/ipc"),
    "ecai25": Protocol(TEST_SETS, 10**9, 60.0, 4096.0, True, 10**6, 10**6, 300.0, "runs/ipc-ecai25"),
}
"""``paper``: the admissible-bounds paper's evaluation cap (the README's first table); ``ecai25``:
Chen (ECAI 2025)'s limits, 5 minutes of training and 60 s / 4 GB per task, no evaluation cap
(10^9 never binds in 60 s)."""
ECAI_WL = ["--wl-iterations", "1", "--wl-pruning", "i-mf", "--wl-hash", "set"]
"""The WL colour table of the ECAI 2025 study's best configuration."""


def _flags(**values: str) -> list[str]:
    return [item for key, value in values.items() for item in (f"--{key}", value)]


@dataclass(frozen=True)
class Config:
    """A configuration of the tables: how its model is trained and how it searches.

    ``train``: ``agents.supervised``'s flags (None: a symbolic heuristic, no training); ``run``:
    the configuration whose trained run this one searches with (default: its own, trained into
    ``<runs>/<domain>-<name>``); ``search_bound``: ``agents.evaluate --search-bound``;
    ``intervals``: also train on the satisficing split (`label_plans`: the training tasks A*
    did not solve, their plans' states as intervals [l, u]); ``lifted_search``: ``agents.evaluate
    --lifted-search`` (how the tasks loaded lifted are searched). A label says "TN" or "bound" when
    the configuration uses an admissible bound in training or search, and only then."""

    label: str
    train: list[str] | None = None
    run: str | None = None
    search_bound: str = "trained"
    intervals: bool = False
    lifted_search: str = "eager"


_RANK_TN = [
    *_flags(model="wl", loss="rank-nll", dist="tn", sigma="learn", residual="none", bound="lmcut"),
    *ECAI_WL,
]
_RANK_MU_TN = [*_RANK_TN, "--rank-on", "mu", "--nll-weight", "0.1"]
_INTERVALS = ["--interval-split", "train-plans"]
CONFIGS: dict[str, Config] = {
    "hff": Config("hFF"),  # GBFS + hFF, no training
    "wl-n": Config("WL N", _flags(model="wl", dist="n", sigma="fixed", residual="none", bound="hmax")),
    "wl-tn": Config("WL TN", _flags(model="wl", dist="tn", sigma="learn", residual="none", bound="lmcut")),
    "wl-tn-fixed": Config(
        "WL TN fixed σ", _flags(model="wl", dist="tn", sigma="fixed", residual="none", bound="lmcut")
    ),
    "wl-rank": Config(
        "WL rank", _flags(model="wl", loss="rank", dist="n", sigma="fixed", residual="none", bound="hmax")
    ),
    "wl-rank-ecai": Config(
        "WL rank (ECAI WL)",
        [*_flags(model="wl", loss="rank", dist="n", sigma="fixed", residual="none", bound="hmax"), *ECAI_WL],
    ),
    "wl-tn-ecai": Config(
        "WL TN (ECAI WL)",
        [*_flags(model="wl", dist="tn", sigma="learn", residual="none", bound="lmcut"), *ECAI_WL],
    ),
    "wl-tn-ecai-lazy": Config("WL TN, lazy LM-cut bound", run="wl-tn-ecai", search_bound="lazy"),
    # issue 62: the tasks loaded lifted searched by lazy GBFS (one evaluation per expansion)
    "wl-rank-ecai-lifted-lazy": Config(
        "WL rank (ECAI WL), lazy lifted", run="wl-rank-ecai", lifted_search="lazy"
    ),
    "nlm-tn": Config("NLM TN", _flags(model="nlm", dist="tn", sigma="learn", residual="hff", bound="lmcut")),
    # rank + TN (issue 57): the ranking loss with the TN's NLL, trained on A*'s labels ...
    "wl-rank-tn": Config("WL rank+TN, LM-cut bound", _RANK_TN),
    "wl-rank-tn-lazy": Config("WL rank+TN, lazy LM-cut bound", run="wl-rank-tn", search_bound="lazy"),
    "wl-rank-tn-screened": Config(
        "WL rank+TN, screened LM-cut bound", run="wl-rank-tn", search_bound="screened"
    ),
    "wl-rank-tn-hmax": Config("WL rank+TN, hmax bound", run="wl-rank-tn", search_bound="hmax"),
    "wl-rank-tn-mu": Config("WL rank+TN (bound in training), μ", run="wl-rank-tn", search_bound="none"),
    # ... and on intervals from satisficing plans beside them
    "wl-rank-tn-int": Config(
        "WL rank+TN + intervals, LM-cut bound", [*_RANK_TN, *_INTERVALS], intervals=True
    ),
    "wl-rank-tn-int-lazy": Config(
        "WL rank+TN + intervals, lazy LM-cut bound", run="wl-rank-tn-int", search_bound="lazy", intervals=True
    ),
    # ... and ranking μ (the value a TN searched without its bound gives) beside 0.1 times the TN's NLL
    "wl-rankmu-tn": Config("WL rank(μ)+TN (bound in training), μ", _RANK_MU_TN, search_bound="none"),
    "wl-rankmu-tn-lazy": Config("WL rank(μ)+TN, lazy LM-cut bound", run="wl-rankmu-tn", search_bound="lazy"),
    "wl-rankmu-tn-int": Config(
        "WL rank(μ)+TN + intervals (bound in training), μ",
        [*_RANK_MU_TN, *_INTERVALS],
        search_bound="none",
        intervals=True,
    ),
    "wl-rank-tn-int-mu": Config(
        "WL rank+TN + intervals (bound in training), μ",
        run="wl-rank-tn-int",
        search_bound="none",
        intervals=True,
    ),
}
"""Learned configurations: the WL model as a Gaussian with MSE (N, fixed σ), as the paper's TN
(LM-cut bound; σ learned, or fixed as the paper's "fixed/none" TN) and with the ranking loss, all
without a residual as WL-GOOSE; the NLM with the paper's proposed TN setting. N and rank use hmax
as their bound, which they need only to recognise dead ends (as hFF does), at a fraction of
LM-cut's cost per state. The ``-ecai`` ones fit the colour table as the ECAI 2025 study's best
configuration (`ECAI_WL`: 1 iteration, i-mf pruning, set hash) instead of GOOSE's released
models' (2 iterations, no pruning, set hash). Issue 57's: ``wl-rank-tn`` trains the ranking loss
with the TN's NLL (``--loss rank-nll``, learned σ, LM-cut bound; ECAI WL), ``-int`` also on the
intervals of satisficing plans; their variants search the same run with the bound computed
lazily (on expanded states), screened by hFF, hmax instead, or none (μ). ``wl-rankmu-`` ranks μ
instead of E[x] (``--rank-on mu``: the value of the TN searched without its bound) with the NLL
at a tenth of the ranking loss's weight (``--nll-weight 0.1``: at 1 the NLL took the ranking's
place on childsnack, where μ then needed up to 2.6M evaluations on an easy task that the ranking
loss alone solves in 10,128: docs/ipc23.md)."""
DEFAULT_CONFIGS = ("hff", "wl-n", "wl-tn", "wl-rank")
"""``--configs`` when none are given (and no store is tabulated)."""
LABELS = {name: config.label for name, config in CONFIGS.items()}


def run_of(config: str) -> str:
    """The configuration whose trained run `config` searches with."""
    return CONFIGS[config].run or config


def run(cmd: list[str]) -> None:
    """One command, dying with this script (`pddlgym_sl.parallel.run_command`)."""
    print("+", " ".join(cmd), flush=True)
    status = run_command([sys.executable, "-m", *cmd], cwd=ROOT, env=os.environ)
    if status != 0:
        raise subprocess.CalledProcessError(status, cmd)


def parallel_flags(args) -> list[str]:
    """``agents.evaluate`` / ``generate``'s flags for where units run: local jobs or the Ray cluster."""
    return (
        ["--jobs", str(args.jobs)]
        if args.address is None
        else ["--backend", "ray", "--address", args.address]
    )


def label(domain: str, args) -> None:
    """The domain's training tasks labelled (A* + LM-cut, 60 s and 4 GB each; every 5th task the val
    split; a size-ordered set given up after 5 failures in a row): resumes, and consolidates."""
    cmd = ["pddlgym_sl.data.generate", "--problems", str(args.ipc / domain / "training"), "--split", "train"]
    cmd += ["--val-every", "5", "--out", str(args.data), "--time-limit", "60", "--memory-limit", "4096"]
    run([*cmd, "--stop-after", "5", *parallel_flags(args), "--quiet"])


def label_summaries(domain: str, args) -> tuple[dict, dict] | None:
    """The train and val splits' manifest summaries once `label` has finished for `domain`; None
    before (a split's build writes its manifest when it ends: an interrupted build leaves records
    and label files, but no manifest)."""
    manifests = [args.data / domain / split / "manifest.json" for split in ("train", "val")]
    if not all(m.is_file() for m in manifests):
        return None
    train_summary, val_summary = (json.loads(m.read_text())["summary"] for m in manifests)
    return train_summary, val_summary


def label_plans(domain: str, args) -> None:
    """The training tasks that A* did not solve (`label`), labelled by shortened lama-first plans
    (60 s and 4 GB each) as intervals [l, u] into the split ``train-plans`` (the val tasks left
    out; resumes)."""
    cmd = ["pddlgym_sl.data.generate", "--problems", str(args.ipc / domain / "training")]
    cmd += ["--split", "train-plans", "--val-every", "5", "--labels", "satisficing", "--unsolved-in", "train"]
    cmd += ["--out", str(args.data), "--time-limit", "60", "--memory-limit", "4096"]
    run([*cmd, *parallel_flags(args), "--quiet"])


def plans_summary(domain: str, args) -> dict | None:
    """The satisficing split's manifest summary once `label_plans` has finished, else None."""
    manifest = args.data / domain / "train-plans" / "manifest.json"
    return json.loads(manifest.read_text())["summary"] if manifest.is_file() else None


def train_flags(domain: str, config: str, args) -> list[str]:
    """`config`'s training flags on `domain`: without ``--interval-split`` where A* solved every
    training task (miconic, spanner), whose satisficing split then labels none (the run trains on
    the exact labels alone, as its configuration without intervals does)."""
    flags = list(CONFIGS[config].train or [])
    summary = plans_summary(domain, args) if CONFIGS[config].intervals else None
    if summary is not None and not summary["solved"]:
        at = flags.index("--interval-split")
        del flags[at : at + 2]
    return flags


def train(domain: str, config: str, args) -> Path | None:
    """The finished run directory of `config` on `domain` (labelled and trained now if needed);
    None without data."""
    config = run_of(config)
    summaries = label_summaries(domain, args)
    if summaries is None:
        label(domain, args)
        summaries = label_summaries(domain, args)
    if summaries is None:
        raise RuntimeError(f"labelling {domain} ended without both splits' manifests in {args.data / domain}")
    if not summaries[0]["solved"]:
        print(f"{domain}: no training task solved in {args.data / domain / 'train'}; skipped", flush=True)
        return None
    if CONFIGS[config].intervals and plans_summary(domain, args) is None:
        label_plans(domain, args)
    run_dir = args.runs / f"{domain}-{config}"
    if (run_dir / "metrics.json").is_file():
        return run_dir
    steps = args.protocol.nlm_steps if config.startswith("nlm") else args.protocol.steps
    if (run_dir / "args.json").is_file():
        run(["agents.supervised", "--resume", str(run_dir), "--quiet"])
    else:
        flags = [*train_flags(domain, config, args), "--data", str(args.data), "--domain", domain]
        flags += ["--test-split", "val"]
        flags += ["--steps", str(steps), "--runs", str(args.runs), "--name", run_dir.name, "--quiet"]
        if args.protocol.time_budget is not None:
            flags += ["--time-budget", str(args.protocol.time_budget)]
        if args.protocol.memory_limit is not None:  # the NLM cuts its batches to fit (agents.micro_batches)
            flags += ["--memory-limit", str(args.protocol.memory_limit)]
        run(["agents.supervised", *flags])
    return run_dir


def out_dir(domain: str, config: str, test_set: str, args) -> Path:
    """Where `config`'s evaluation of a test set goes: under its run, named as ``agents.evaluate``
    names it (`result_directory`: ``-bound-<b>`` for another search bound, ``-lifted-lazy``)."""
    run_dir = args.runs / f"{domain}-{run_of(config)}"
    search = EvaluationConfig(
        run=run_dir, search_bound=CONFIGS[config].search_bound, lifted_search=CONFIGS[config].lifted_search
    )
    return result_directory(search, domain, test_set)


def sample_size(tasks: Path, every: int) -> int:
    """How many of a set's tasks ``--sample K`` plans on (an even spread of one in K), counted as
    ``agents.evaluate --tasks`` finds them."""
    files = resolve_problems(problems=tasks, domain_file=given_domain_file(tasks, None, None)).files
    return math.ceil(len(files) / every)


def evaluate(domain: str, config: str, test_set: str, args) -> None:
    tasks, protocol = args.ipc / domain / test_set, args.protocol
    common = ["--tasks", str(tasks), "--limit", str(protocol.limit), "--time-limit", str(protocol.time_limit)]
    common += ["--out", str(out_dir(domain, config, test_set, args)), "--quiet"]
    common += parallel_flags(args)
    if protocol.memory_limit is not None:
        common += ["--memory-limit", str(protocol.memory_limit)]
    if protocol.covers_grounding:
        common += ["--limits-cover-grounding"]
    common += ["--grounding", args.grounding, "--lifted-search", CONFIGS[config].lifted_search]
    if args.sample > 1:
        common += ["--problems", str(sample_size(tasks, args.sample))]
    if CONFIGS[config].train is None and CONFIGS[config].run is None:
        run(["agents.evaluate", "--heuristic", config, *common])
    else:
        run_dir = train(domain, config, args)
        if run_dir is not None:
            bound = CONFIGS[config].search_bound
            run(["agents.evaluate", "--run", str(run_dir), "--search-bound", bound, *common])


def records(domain: str, config: str, test_set: str, args) -> list[dict] | None:
    """The per-task results of a finished evaluation, else None."""
    return evaluation_records(out_dir(domain, config, test_set, args))


def coverage(domain: str, config: str, test_set: str, args) -> tuple[int, int, int] | None:
    """(solved, tasks, searches stopped by the time limit) of a finished evaluation, else None."""
    results = records(domain, config, test_set, args)
    if results is None:
        return None
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
    learned = [c for c in configs if CONFIGS[c].train is not None]
    lines += ["", "| domain | training tasks labelled (val) | states (val) | "
              + " | ".join(f"{LABELS[c]} s" for c in learned) + " |",
              "|---|--:|--:|" + "--:|" * len(learned)]  # fmt: skip
    for d in args.domains:
        summaries = label_summaries(d, args)
        if summaries is None:
            continue
        train_m, val_m = summaries
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


PLANNERS = ("HUZAR", "GOFAI", "FD SMAC", "Muninn")


def _row(*cells) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"


def _solved(results: list[dict] | None) -> int | None:
    return None if results is None else sum(r["solved"] for r in results)


def field_tables(args) -> str:
    """The ``ecai25`` protocol's comparison: per domain and difficulty our configurations beside
    the competition's planners on the same tasks; per domain beside WL-GOOSE's published figures;
    and where the time went (evaluations per second against evaluations per solved task)."""
    configs, labels = args.configs, [LABELS[c] for c in args.configs]
    lines = [_row("domain", "set", "tasks", *labels, *PLANNERS), "|---|---|" + "--:|" * (len(configs) + 5)]
    totals: dict[str, dict[str, int | None]] = {d: dict.fromkeys(configs, 0) for d in args.domains}
    found = {(d, c, s): records(d, c, s, args) for d in args.domains for c in configs for s in args.test_sets}
    ungrounded = seen = searched_lifted = solved_lifted = 0
    for d in args.domains:
        for s in args.test_sets:
            results = {c: found[d, c, s] for c in configs}
            done = [r for r in results.values() if r is not None]
            if not done:
                for c in configs:
                    totals[d][c] = None
                continue
            names = {r["problem"] for r in done[0]}
            official = official_coverage(args.ipc / "official_runs.csv", d, s.removeprefix("testing-"), names)
            ours = [_solved(results[c]) for c in configs]
            for c, n in zip(configs, ours, strict=True):
                totals[d][c] = None if n is None or totals[d][c] is None else totals[d][c] + n
            cells = ["–" if n is None else n for n in ours] + [official.get(k, "–") for k in PLANNERS]
            lines.append(_row(d, s.removeprefix("testing-"), len(names), *cells))
            grounding = {}  # task -> whether every configuration's run ended in its grounding
            for r in done:
                for x in r:
                    grounding[x["problem"]] = (
                        grounding.get(x["problem"], True) and x.get("ended_in") == "grounding"
                    )
            seen += len(grounding)
            ungrounded += sum(grounding.values())
            lifted: dict[str, bool] = {}  # task searched lifted -> whether some configuration solved it
            for x in (x for r in done for x in r if x.get("grounding") == "lifted"):
                lifted[x["problem"]] = lifted.get(x["problem"], False) or x["solved"]
            searched_lifted += len(lifted)
            solved_lifted += sum(lifted.values())
    lines = [*_difficulty_table(args, found), "", *lines]
    summary = (
        f"Tasks on which every configuration's run ended in grounding: {ungrounded} of {seen}. Tasks "
        f"searched lifted by some configuration: {searched_lifted}, {solved_lifted} of them solved."
    )
    lines += ["", *_goose_table(args, totals), "", summary, "", *_speed_table(args, found)]
    if searched_lifted:
        lines += ["", *_lifted_table(args, found)]
    return "\n".join(lines)


def _difficulty_table(args, found: dict[tuple[str, str, str], list[dict] | None]) -> list[str]:
    """Tasks solved per difficulty over every domain, ours beside the competition's planners on the
    same tasks (a configuration's cell only when all its domains ran), and WL-GOOSE's best single
    configuration at our limits, scaled to our task count (its figure covers all three sets)."""
    labels = [LABELS[c] for c in args.configs]
    lines = [_row("set", "tasks", *labels, *(f"{k} (1,800 s)" for k in PLANNERS), "WL-GOOSE best ≈"),
             "|---|--:|" + "--:|" * (len(labels) + len(PLANNERS) + 1)]  # fmt: skip
    everything: dict[str, int | None] = dict.fromkeys([*args.configs, *PLANNERS], 0)
    all_tasks = 0
    for s in args.test_sets:
        ours: dict[str, int | None] = dict.fromkeys(args.configs, 0)
        theirs = dict.fromkeys(PLANNERS, 0)
        tasks = 0
        for d in args.domains:
            done = [found[d, c, s] for c in args.configs if found[d, c, s] is not None]
            names = {r["problem"] for r in done[0]} if done else set()
            tasks += sample_size(args.ipc / d / s, args.sample)
            official = official_coverage(args.ipc / "official_runs.csv", d, s.removeprefix("testing-"), names)
            for k in PLANNERS:
                theirs[k] += official.get(k, 0)
            for c in args.configs:
                n = _solved(found[d, c, s])
                ours[c] = None if n is None or ours[c] is None else ours[c] + n
        all_tasks += tasks
        for key, n in [*ours.items(), *theirs.items()]:
            everything[key] = None if n is None or everything[key] is None else everything[key] + n
        cells = ["–" if ours[c] is None else ours[c] for c in args.configs]
        lines.append(_row(s.removeprefix("testing-"), tasks, *cells, *theirs.values(), "–"))
    goose = "–"
    if set(args.test_sets) == set(TEST_SETS):
        goose = f"{WL_GOOSE_ECAI25_BEST_TOTAL * all_tasks / 900:.0f}"
    cells = ["–" if everything[k] is None else everything[k] for k in [*args.configs, *PLANNERS]]
    lines.append(_row("**all**", all_tasks, *cells, goose))
    return lines


def _goose_table(args, totals: dict[str, dict[str, int | None]]) -> list[str]:
    """Per domain, over the protocol's sets: ours beside WL-GOOSE at the same limits, its
    published per-domain figures scaled to our task count (marked ≈)."""
    configs = args.configs
    n_tasks = {
        d: sum(sample_size(args.ipc / d / s, args.sample) for s in args.test_sets) for d in args.domains
    }
    lines = [
        "WL-GOOSE at the same limits (Chen, ECAI 2025; of 90 tasks per domain, ≈: scaled to our task count): "
        "the ICAPS 2024 configuration, and the best configuration of each domain (an oracle).",
        "",
        _row(
            "domain",
            "tasks",
            *(LABELS[c] for c in configs),
            "WL-GOOSE ICAPS24 ≈",
            "WL-GOOSE best per domain ≈",
        ),
        "|---|--:|" + "--:|" * (len(configs) + 2),
    ]
    comparable = set(args.test_sets) == set(TEST_SETS)  # its figures are over all three sets
    if not comparable:
        lines[0] += " Its figures cover easy, medium and hard together: not shown for a part of them."
    for d in args.domains:
        icaps, best = (
            round(n * n_tasks[d] / TASKS_PER_DOMAIN) if comparable else "–" for n in WL_GOOSE_ECAI25[d]
        )
        ours = ("–" if totals[d][c] is None else totals[d][c] for c in configs)
        lines.append(_row(d, n_tasks[d], *ours, icaps, best))
    by_config = {c: [totals[d][c] for d in args.domains] for c in configs}
    total = sum(n_tasks.values())
    complete = ", ".join(f"{LABELS[c]} {sum(v)}" for c, v in by_config.items() if None not in v)
    best = WL_GOOSE_ECAI25_BEST_TOTAL
    scaled = f" (≈ {best * total / 900:.0f} of our {total} tasks at its rate)" if comparable else ""
    complete = complete or "no configuration complete"
    lines += [
        "",
        f"WL-GOOSE's best single configuration: {best} of 900{scaled}; ours on {total} tasks: {complete}.",
    ]
    return lines


def _speed_table(args, found: dict[tuple[str, str, str], list[dict] | None]) -> list[str]:
    """Per domain and configuration: evaluations per second of search, and the median evaluations
    of the solved tasks (speed against guidance), from `found`, the records of each (domain,
    configuration, set)."""
    head = [f"{LABELS[c]} {what}" for c in args.configs for what in ("evals/s", "median evals solved")]
    lines = [_row("domain", *head), "|---|" + "--:|--:|" * len(args.configs)]
    for d in args.domains:
        cells = []
        for c in args.configs:
            searched = [x for s in args.test_sets for x in found[d, c, s] or [] if x.get("evaluations")]
            seconds = sum(x["seconds"] for x in searched)
            solved = [x["evaluations"] for x in searched if x["solved"]]
            cells.append(f"{sum(x['evaluations'] for x in searched) / seconds:,.0f}" if seconds > 0 else "–")
            cells.append(f"{statistics.median(solved):,.0f}" if solved else "–")
        lines.append(_row(d, *cells))
    return lines


def _lifted_table(args, found: dict[tuple[str, str, str], list[dict] | None]) -> list[str]:
    """Per domain, set and configuration, the tasks searched lifted (``grounding: lifted``): how
    many, solved, what ended the others, and the median evaluations, expansions and seconds of
    search (evaluations per expansion: the branching that lifted GBFS pays for)."""
    head = ("domain", "set", "configuration", "searched lifted", "solved", "time / memory limit",
            "median evaluations", "median expansions", "median search s")  # fmt: skip
    lines = [_row(*head), "|---|---|---|" + "--:|" * 6]
    for d in args.domains:
        for s in args.test_sets:
            for c in args.configs:
                lifted = [x for x in found[d, c, s] or [] if x.get("grounding") == "lifted"]
                if not lifted:
                    continue
                ended = [sum(x["status"] == k for x in lifted) for k in ("time_limit", "memory_limit")]

                def median(key: str, fmt: str = ",.0f", runs: list[dict] = lifted) -> str:
                    return format(statistics.median(x[key] for x in runs), fmt)

                solved = sum(x["solved"] for x in lifted)
                medians = (median("evaluations"), median("expansions"), median("seconds", ".1f"))
                lines.append(_row(d, s.removeprefix("testing-"), LABELS[c], len(lifted), solved,
                                  f"{ended[0]} / {ended[1]}", *medians))  # fmt: skip
    return lines


def build_parser() -> argparse.ArgumentParser:
    """The command line (what ``--help`` shows; the docs' commands are checked against it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    parser.add_argument("--protocol", choices=PROTOCOLS, help="limits and test sets (default: paper)")
    parser.add_argument("--configs", nargs="+", choices=CONFIGS, help=f"default: {' '.join(DEFAULT_CONFIGS)}")
    parser.add_argument("--test-sets", nargs="+", choices=TEST_SETS, help="default: the protocol's")
    parser.add_argument("--sample", type=int, help="plan on an even spread of one task in K (default: 1)")
    parser.add_argument(
        "--grounding",
        choices=("auto", "ground", "lifted"),
        default="auto",
        help="agents.evaluate --grounding: auto plans lifted where grounding would not fit (default)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="agents.evaluate's parallel searches")
    parser.add_argument(
        "--address", help="plan on this Ray cluster (agents.evaluate --backend ray --address)"
    )
    parser.add_argument("--data", type=Path, default=Path("data/ipc"))
    parser.add_argument("--runs", type=Path, default=None, help="default: the protocol's")
    parser.add_argument("--ipc", type=Path, default=IPC)
    parser.add_argument("--table-only", action="store_true", help="print the tables of what is done")
    parser.add_argument("--store", type=Path, help="tracked folder of what is finished (module docstring)")
    parser.add_argument("--no-store", action="store_true", help="neither restore from nor save to --store")
    return parser


def main() -> None:
    parser = build_parser()
    args = parser.parse_args()
    if args.table_only and args.runs is None and not args.no_store:  # the tracked store's results
        tabulate_stores(args)
        return
    args.protocol = PROTOCOLS[args.protocol or "paper"]
    args.configs, args.sample = args.configs or list(DEFAULT_CONFIGS), args.sample or 1
    args.test_sets = args.test_sets or list(args.protocol.test_sets)
    args.runs = args.runs or Path(args.protocol.runs)
    args.store = args.store or Path("experiments/results") / Path(args.protocol.runs).name
    args.data, args.runs, args.store = (
        ROOT / p if not p.is_absolute() else p for p in (args.data, args.runs, args.store)
    )
    if not args.table_only:
        if not args.ipc.is_dir():
            sys.exit(f"the IPC 2023 LT tasks are not at {args.ipc}")
        keep = not args.no_store
        if keep:
            restored = results_store.restore(args.store, data=args.data, out=args.runs)
            print(f"restored {restored} finished files from {args.store}", flush=True)
            describe_store(args)
        try:
            with stop_on_signals():
                for test_set in args.test_sets:  # every domain's easy tasks before any medium one
                    for domain in args.domains:
                        for config in args.configs:
                            try:
                                evaluate(domain, config, test_set, args)
                            finally:
                                if keep:
                                    results_store.save(args.store, data=args.data, out=args.runs)
        except KeyboardInterrupt as exc:  # the running command is stopped already
            kept = f"finished labels, trainings and evaluations are kept under {args.data} and {args.runs}"
            interrupted(exc, kept + (f", and in {args.store}" if keep else ""), now=True)
    print_tables(args)


STORE_DESCRIPTION = "experiment.json"
"""A store's own record of how its results were made (protocol, sample), read by ``--table-only``."""


def describe_store(args: argparse.Namespace) -> None:
    """Write the store's protocol and sample (``--table-only`` tabulates the store with them)."""
    name = next(k for k, v in PROTOCOLS.items() if v == args.protocol)
    description = {"protocol": name, "sample": args.sample}
    path = args.store / STORE_DESCRIPTION
    if not path.is_file() or json.loads(path.read_text()) != description:
        atomic_write_json(path, description)


def stored_configs(runs: Path) -> list[str]:
    """The configurations with a run folder (``<domain>-<config>``) under `runs`, in `CONFIGS`' order."""
    held = {p.name.split("-", 1)[1] for p in runs.iterdir() if "-" in p.name}
    return [c for c in CONFIGS if c in held]


def tabulate_stores(args: argparse.Namespace) -> None:
    """``--table-only`` without ``--runs``: the tables of each tracked store (``--store``, or every
    protocol's that exists), with the protocol and sample it records and, unless ``--configs``, the
    configurations it holds; the store's packs are extracted to a temporary folder for them."""
    names = [args.protocol] if args.protocol else list(PROTOCOLS)
    stores = {n: args.store or Path("experiments/results") / Path(PROTOCOLS[n].runs).name for n in names}
    stores = {n: ROOT / p if not p.is_absolute() else p for n, p in stores.items()}
    described = {n: p for n, p in stores.items() if (p / STORE_DESCRIPTION).is_file()}
    if not described:
        sys.exit(f"no tracked store with a {STORE_DESCRIPTION} at {', '.join(map(str, stores.values()))}")
    for name, store in described.items():
        description = json.loads((store / STORE_DESCRIPTION).read_text())
        if description["protocol"] != name:
            continue
        with results_store.extracted(store) as root:
            table = argparse.Namespace(**vars(args))
            table.protocol, table.sample = PROTOCOLS[name], args.sample or description["sample"]
            table.configs = args.configs or stored_configs(root / "runs")
            table.test_sets = args.test_sets or list(table.protocol.test_sets)
            table.data, table.runs, table.store = root / "data", root / "runs", store
            print(f"# {store.relative_to(ROOT) if store.is_relative_to(ROOT) else store}: protocol {name}, "
                  f"sample {table.sample}")  # fmt: skip
            print_tables(table)


def print_tables(args: argparse.Namespace) -> None:
    """The coverage and training tables of what `args.runs` holds (and the field's beside them)."""
    print(tables(args))
    if args.protocol.covers_grounding:
        print()
        print(field_tables(args))


if __name__ == "__main__":
    main()
