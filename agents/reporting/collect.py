"""Collecting what the report needs: run directories, their evaluations, and hFF baselines.

A *run* is a directory with ``args.json`` (`agents.training.records`: written by ``python -m
agents.supervised`` and ``python -m agents.rl_value``; directories of other commands, such as
``agents.rl``'s, are skipped with one note); its test accuracy is
``metrics.json`` (absent while the run is unfinished) and its planning results are
``eval/<split>/summary.json`` (N, TN) and ``eval/<split>-clip/summary.json`` (N+clip), each with
per-problem JSONs in ``problems/``. A *baseline* is any ``summary.json`` of `agents.evaluate`
without a run (``--heuristic``), found anywhere under the given paths.

Runs are grouped by (model, domain, data set, config, dist), where a config is the paper's column
block (σ learn|fixed, residual, lower bound, and the loss when it is not the NLL); the seeds of a
group are its repetitions. A table row is a domain, or ``<domain> (<data set>)`` when a model's
runs of that domain were trained on more than one data set (Table 1's hFF and hLMcut are then that
data set's). Nothing here raises on missing or malformed files: what is missing becomes None and a
note for the report.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HEURISTIC_LABELS = {"hff": "hFF", "lmcut": "hLMcut", "hmax": "hmax", "blind": "hblind"}
"""How the paper writes the heuristics in column headers (others: their registry name)."""


def display_order(axis: str) -> tuple[str, ...]:
    """The display order of ``axis`` (domain, model, sigma, residual, bound), read from the
    registries each time (imported on first use: they pull in torch)."""
    import domains
    from agents.registries import BOUNDS, MODELS, RESIDUALS, SIGMAS

    orders = {
        "domain": tuple(domains.DOMAINS),
        "model": tuple(MODELS),
        "sigma": SIGMAS,
        "residual": (*RESIDUALS[1:], RESIDUALS[0]),  # "none" last
        "bound": BOUNDS,
    }
    return orders[axis]


def _rank(value: str, axis: str) -> tuple[int, str]:
    """Sort key: the registry's order first, anything else alphabetically after it."""
    order = display_order(axis)
    return (order.index(value), "") if value in order else (len(order), value)


def domain_key(domain: str) -> tuple[int, str]:
    return _rank(domain, "domain")


def model_key(model: str) -> tuple[int, str]:
    return _rank(model, "model")


def model_label(model: str) -> str:
    """A model's name in titles: its spec's label, or its name when it is not registered."""
    from agents.models import MODELS

    return MODELS[model].label if model in MODELS else model


@dataclass(frozen=True)
class Config:
    """One column block of the paper's tables: how σ, the residual and the bound are set, and the
    training loss."""

    sigma: str
    residual: str
    bound: str = "lmcut"
    loss: str = "nll"

    @property
    def label(self) -> str:
        """The paper's column header: ``learn/hFF``, ``fixed/none``, ``learn/hFF (l = hmax)``, and
        ``fixed/none rank`` for a loss other than the NLL."""
        text = f"{self.sigma}/{HEURISTIC_LABELS.get(self.residual, self.residual)}"
        if self.bound != "lmcut":
            text += f" (l = {HEURISTIC_LABELS.get(self.bound, self.bound)})"
        if self.loss != "nll":
            text += f" {self.loss}"
        return text

    def sort_key(self) -> tuple:
        return (
            self.loss != "nll",
            self.loss,
            _rank(self.sigma, "sigma"),
            _rank(self.residual, "residual"),
            _rank(self.bound, "bound"),
        )


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object, or None when the file is absent or unreadable."""
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


@dataclass
class Run:
    """One training run (one seed of one grid cell) and what has been computed for it."""

    path: Path
    model: str
    domain: str
    dist: str
    config: Config
    seed: int
    args: dict[str, Any]
    metrics: dict[str, Any] | None
    dataset: str = ""
    """Where its training data came from: the data root (``--data``), the task directory of a value
    learning run (``--tasks``), or "" for the domain's generated problems."""

    def eval_dir(self, split: str, clip: bool) -> Path:
        return self.path / "eval" / (split + ("-clip" if clip else ""))

    def summary(self, split: str, clip: bool) -> dict[str, Any] | None:
        """`agents.evaluate`'s summary.json for this split (None when not evaluated yet)."""
        return read_json(self.eval_dir(split, clip) / "summary.json")

    def metric(self, key: str) -> float | None:
        """A finite test metric from metrics.json, or None."""
        if self.metrics is None:
            return None
        value = self.metrics.get(key)
        return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


@dataclass(frozen=True)
class GroupKey:
    model: str
    domain: str
    config: Config
    dist: str
    dataset: str = ""


@dataclass
class Collection:
    """Every run found (grouped), the baselines per domain, and notes about what is odd or missing."""

    groups: dict[GroupKey, list[Run]] = field(default_factory=dict)
    baselines: dict[str, dict[str, Any]] = field(default_factory=dict)
    baseline_dirs: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def models(self) -> list[str]:
        return sorted({k.model for k in self.groups}, key=model_key)

    def _rows(self, model: str) -> dict[str, tuple[str, str]]:
        """Row label -> (domain, data set) of `model`'s runs: the domain, or ``<domain> (<data
        set>)`` where the model's runs of the domain come from several data sets."""
        pairs = sorted({(k.domain, k.dataset) for k in self.groups if k.model == model})
        sets: dict[str, int] = {}
        for domain, _ in pairs:
            sets[domain] = sets.get(domain, 0) + 1
        return {
            (domain if sets[domain] == 1 else f"{domain} ({dataset or 'generated'})"): (domain, dataset)
            for domain, dataset in sorted(pairs, key=lambda p: (domain_key(p[0]), p[1]))
        }

    def domains(self, model: str) -> list[str]:
        """The table rows of `model` (see `_rows`), in the registry's domain order."""
        return list(self._rows(model))

    def configs(self, model: str) -> list[Config]:
        return sorted({k.config for k in self.groups if k.model == model}, key=Config.sort_key)

    def runs(self, model: str, row: str, config: Config, dist: str) -> list[Run]:
        domain, dataset = self._rows(model).get(row, (row, ""))
        return self.groups.get(GroupKey(model, domain, config, dist, dataset), [])

    def baseline(self, row: str) -> dict[str, Any] | None:
        """The hFF baseline summary of a row's domain (``<domain> (<data set>)`` included)."""
        return self.baselines.get(row.split(" (", 1)[0])

    def baseline_dir(self, row: str) -> Path | None:
        return self.baseline_dirs.get(row.split(" (", 1)[0])

    def all_runs(self) -> Iterable[Run]:
        for runs in self.groups.values():
            yield from runs


def load_run(path: Path) -> Run | None:
    """A `Run` from a directory with args.json (None when args.json is unreadable)."""
    args = read_json(path / "args.json")
    if args is None:
        return None
    try:
        config = Config(
            str(args["sigma"]),
            str(args["residual"]),
            str(args.get("bound") or "lmcut"),
            str(args.get("loss") or "nll"),
        )
        model = str(args["model"])
        if args.get("app") == "rl_value":  # value learning: its own tables, never mixed with supervised runs
            model += " RL+clip" if args.get("clip") else " RL"
        return Run(
            path=path,
            model=model,
            domain=str(args["domain"]),
            dist=str(args["dist"]),
            config=config,
            seed=int(args["seed"]),
            args=args,
            metrics=read_json(path / "metrics.json"),
            dataset=str(args.get("data") or args.get("tasks") or ""),
        )
    except (KeyError, TypeError, ValueError):
        return None


def is_training_run(args: dict[str, Any]) -> bool:
    """Whether an ``args.json`` is a training run's (`agents.training.records`: ``agents.supervised``
    or ``agents.rl_value``), not another command's (``agents.rl`` has no model and head)."""
    return args.get("app") in ("supervised", "rl_value") or {"model", "dist"} <= set(args)


def walk_runs(paths: Sequence[Path]) -> tuple[list[Path], list[Path], list[str]]:
    """Run directories and evaluation summaries under `paths` (a run's own eval is not walked)."""
    run_dirs: list[Path] = []
    summaries: list[Path] = []
    notes: list[str] = []
    seen: set[Path] = set()
    for root in paths:
        if not root.exists():
            notes.append(f"{root} does not exist")
            continue
        if root.is_file():
            if root.name == "summary.json":
                summaries.append(root)
            continue
        for directory, subdirs, files in os.walk(root):
            here = Path(directory)
            if here.resolve() in seen:
                subdirs[:] = []
                continue
            seen.add(here.resolve())
            if "args.json" in files:
                run_dirs.append(here)
                subdirs[:] = []  # a run's eval/ holds its own summaries, not baselines
                continue
            if "summary.json" in files:
                summaries.append(here / "summary.json")
            subdirs.sort()
    return run_dirs, summaries, notes


def collect(
    paths: Sequence[Path], split: str, baselines: Sequence[Path] = (), heuristic: str = "hff"
) -> Collection:
    """Find runs under `paths` and `heuristic` baselines of `split` under `paths` and `baselines`."""
    run_dirs, summaries, notes = walk_runs(list(paths))
    extra_runs, extra_summaries, extra_notes = walk_runs(list(baselines))
    summaries += extra_summaries
    notes += extra_notes
    if extra_runs:
        notes.append(f"run directories under --baselines were ignored: {', '.join(map(str, extra_runs))}")
    col = Collection(notes=notes)

    by_seed: dict[tuple[GroupKey, int], list[Run]] = {}
    others: list[str] = []
    for path in run_dirs:
        run = load_run(path)
        if run is None:
            args = read_json(path / "args.json")
            if args is None:
                col.notes.append(f"{path}: unreadable args.json, skipped")
            elif not is_training_run(args):
                others.append(path.name)  # another command's run (agents.rl), not a training run
            else:
                col.notes.append(f"{path}: args.json of a training run with missing or bad fields, skipped")
            continue
        key = GroupKey(run.model, run.domain, run.config, run.dist, run.dataset)
        by_seed.setdefault((key, run.seed), []).append(run)
    if others:
        col.notes.append(f"not agents.supervised runs (e.g. agents.rl), skipped: {', '.join(sorted(others))}")
    for (key, seed), runs in sorted(by_seed.items(), key=lambda item: item[0][1]):
        # Two runs of one seed would count twice: keep the finished (then the latest-named) one.
        runs.sort(key=lambda r: (r.metrics is not None, r.path.name))
        chosen = runs[-1]
        if len(runs) > 1:
            others = ", ".join(str(r.path) for r in runs[:-1])
            col.notes.append(f"{chosen.path}: seed {seed} also in {others}; only {chosen.path.name} is used")
        col.groups.setdefault(key, []).append(chosen)
    for key, runs in col.groups.items():
        for what in ("steps", "test_split"):
            values = {str(r.args.get(what)) for r in runs}
            if len(values) > 1:
                col.notes.append(
                    f"{key.model} {key.domain} {key.config.label} {key.dist.upper()}: seeds differ in "
                    f"{what} ({', '.join(sorted(values))})"
                )

    limits = [s.get("limit") for r in col.all_runs() for c in (False, True) if (s := r.summary(split, c))]
    common_limit = max(set(limits), key=limits.count) if limits else None
    candidates: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for path in summaries:
        summary = read_json(path)
        if summary is None or summary.get("run") or summary.get("heuristic") != heuristic:
            continue
        if summary.get("split") != split or not summary.get("domain"):
            continue
        candidates.setdefault(str(summary["domain"]), []).append((path.parent, summary))
    for domain, found in candidates.items():
        # Prefer the baseline evaluated under the runs' budget, then the one with most problems.
        found.sort(key=lambda item: (item[1].get("limit") == common_limit, item[1].get("problems", 0)))
        directory, summary = found[-1]
        col.baselines[domain] = summary
        col.baseline_dirs[domain] = directory
        if len(found) > 1:
            col.notes.append(f"{domain}: {len(found)} {heuristic} baselines found, using {directory}")
    return col


def mean_std(values: Sequence[float], ddof: int = 1) -> tuple[float, float]:
    """Mean and standard deviation (sample std with ddof=1; 0 for a single value)."""
    n = len(values)
    mean = math.fsum(values) / n
    if n - ddof <= 0:
        return mean, 0.0
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - ddof))


def problem_results(eval_dir: Path, summary: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The per-problem results of an evaluation: the first ``summary["problems"]`` files by name
    (`agents.evaluate` evaluates the first N problems of a sorted split), or all when no summary."""
    files = sorted((eval_dir / "problems").glob("*.json"))
    if summary is not None and isinstance(summary.get("problems"), int):
        files = files[: summary["problems"]]
    results = []
    for f in files:
        value = read_json(f)
        if value is not None and "solved" in value and "evaluations" in value:
            results.append(value)
    return results
