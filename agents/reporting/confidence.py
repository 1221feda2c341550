"""Heller et al.'s (SoCS 2022) Tables 1-3 and a reliability diagram from run directories.

Written by ``python -m agents.report RUNS --confidence`` beside the core paper's tables:

- ``confidence_table1.md``: per setting (domain, model/head) and heuristic (``Standard``, ``U50``,
  ``U90``, ``W50``, ``W90``: no OOD training, or uniform / weighted noise at Y = 50 / 90%) the mean
  confidence (%) on the test states (In), on uniform and on weighted noise (Out-U, Out-W), Kendall's
  τ between labels and predictions, and the expected calibration error, from each run's
  ``confidence.json`` (`agents.confidence`);
- ``confidence_table2.md``: coverage of the confidence-unaware Base and the change of every
  confidence-aware configuration against it, single queue (Base, M5, M40, A5, A40) and dual queue
  (Base, M40, M80, A40, A80, P20, P80, and any other found), then the same for the average
  evaluations: one block per heuristic that has confidence-aware evaluations (the paper's W50
  first), or only ``--confidence-heuristic``'s;
- ``confidence_table3.md``: coverage (and evaluations) of a search for every heuristic, as changes
  against Standard: one block per confidence-aware search found (the paper's dual-queue A40
  first), or only ``--confidence-search``'s;
- ``reliability.png``: accuracy (label in the unit bucket around the prediction) against
  confidence, one panel per setting, one line per heuristic.

Runs are grouped by (domain, model, dist, OOD variant); seeds are averaged. An evaluation belongs to
a table through its summary.json (``search``, ``config``, ``split``; plain GBFS summaries written
before those fields count as single-queue Base). Missing values are "–".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.reporting.collect import domain_key, is_training_run, model_key, read_json, walk_runs

__all__ = [
    "ConfidenceRun",
    "collect_confidence",
    "found_heuristics",
    "found_searches",
    "write_confidence_report",
]

VARIANTS = ("Standard", "U50", "U90", "W50", "W90")
SINGLE = ("Base", "M5", "M40", "A5", "A40")
DUAL = ("Base", "M40", "M80", "A40", "A80", "P20", "P80")
MISSING = "–"


@dataclass
class ConfidenceRun:
    """A training run with its Table 1 metrics and its evaluations by (split, search, config)."""

    path: Path
    domain: str
    model: str
    dist: str
    variant: str
    seed: int
    metrics: dict[str, Any] | None
    evaluations: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)

    @property
    def setting(self) -> tuple[str, str, str]:
        return (self.domain, self.model, self.dist)


def variant_name(args: dict[str, Any]) -> str:
    """``Standard``, or ``U<Y>`` / ``W<Y>`` for OOD training with uniform / weighted noise at Y%."""
    ood = args.get("ood") or "none"
    if ood == "none":
        return "Standard"
    return f"{ood[0].upper()}{round(100 * float(args.get('ood_ratio', 0.5)))}"


def _evaluations(run_dir: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    out = {}
    for path in sorted((run_dir / "eval").glob("*/summary.json")):
        summary = read_json(path)
        if summary is None or summary.get("clip") or "coverage" not in summary:
            continue
        key = (
            str(summary.get("split")),
            str(summary.get("search", "gbfs")),
            str(summary.get("config", "Base")),
        )
        out[key] = summary
    return out


def collect_confidence(paths: Sequence[Path]) -> tuple[list[ConfidenceRun], list[str]]:
    """Every run under `paths` with a ``confidence.json`` or a confidence-aware evaluation."""
    run_dirs, _, notes = walk_runs(list(paths))
    runs = []
    for path in run_dirs:
        args = read_json(path / "args.json")
        if args is None or not is_training_run(args):  # another command's run (agents.rl): no confidence
            continue
        try:
            run = ConfidenceRun(
                path=path,
                domain=str(args["domain"]),
                model=str(args["model"]),
                dist=str(args["dist"]),
                variant=variant_name(args),
                seed=int(args["seed"]),
                metrics=read_json(path / "confidence.json"),
                evaluations=_evaluations(path),
            )
        except (KeyError, TypeError, ValueError):
            notes.append(f"{path}: unreadable args.json, skipped")
            continue
        if run.metrics is not None or any(k[1] != "gbfs" or k[2] != "Base" for k in run.evaluations):
            runs.append(run)
    return runs, notes


def _settings(runs: list[ConfidenceRun]) -> list[tuple[str, str, str]]:
    return sorted({r.setting for r in runs}, key=lambda s: (domain_key(s[0]), model_key(s[1]), s[2]))


def _label(setting: tuple[str, str, str]) -> str:
    domain, model, dist = setting
    return f"{domain} {model}/{dist.upper()}"


def _variants(runs: list[ConfidenceRun]) -> list[str]:
    found = {r.variant for r in runs}
    return [v for v in VARIANTS if v in found] + sorted(found - set(VARIANTS))


def _mean(values: list[float]) -> float | None:
    values = [v for v in values if v is not None and math.isfinite(v)]
    return sum(values) / len(values) if values else None


def _percent(value: float | None) -> str:
    return MISSING if value is None else f"{100 * value:.1f}"


def table1(runs: list[ConfidenceRun]) -> str:
    """Markdown Table 1 (mean over seeds, in %)."""
    header = "| setting | heuristic | In | Out-U | Out-W | Kendall τ | ECE | seeds |"
    lines = [header, "|---|---|--:|--:|--:|--:|--:|--:|"]
    for setting in _settings(runs):
        group = [r for r in runs if r.setting == setting and r.metrics is not None]
        for variant in _variants(group):
            members = [r.metrics for r in group if r.variant == variant]
            cells = [
                _percent(_mean([m.get(k) for m in members]))
                for k in ("confidence_in", "confidence_uniform", "confidence_weighted", "kendall_tau")
            ]
            ece = _mean([m.get("reliability", {}).get("ece") for m in members])
            lines.append(
                f"| {_label(setting)} | {variant} | {' | '.join(cells)} | {_percent(ece)} | {len(members)} |"
            )
    return "\n".join(lines)


def _search_stats(
    runs: list[ConfidenceRun], key: tuple[str, str, str]
) -> tuple[float | None, float | None, int]:
    summaries = [r.evaluations[key] for r in runs if key in r.evaluations]
    coverage = _mean([float(s["coverage"]) for s in summaries])
    evaluations = _mean([float(s["mean_evaluations"]) for s in summaries])
    return coverage, evaluations, len(summaries)


def _splits(runs: list[ConfidenceRun]) -> dict[tuple[str, str, str], str]:
    """The evaluation split of each setting (the one with the most confidence-aware evaluations)."""
    out = {}
    for setting in _settings(runs):
        counts: dict[str, int] = {}
        for r in runs:
            if r.setting == setting:
                for split, search, config in r.evaluations:
                    counts[split] = counts.get(split, 0) + (search != "gbfs" or config != "Base")
        if counts:
            out[setting] = max(counts, key=lambda s: (counts[s], s))
    return out


def _change(value: float | None, base: float | None, kind: str) -> str:
    if value is None:
        return MISSING
    if base is None:
        return f"{value:.2f}" if kind == "coverage" else f"{value:.0f}"
    delta = value - base
    return f"{delta:+.2f}" if kind == "coverage" else f"{delta:+.0f}"


def _absolute(value: float | None, kind: str) -> str:
    if value is None:
        return MISSING
    return f"{value:.2f}" if kind == "coverage" else f"{value:.0f}"


def _block(
    title: str,
    rows: list[tuple[str, str, list[tuple[float | None, float | None, int]]]],
    settings: list[tuple[str, str, str]],
) -> list[str]:
    """Rows (group, name, per-setting stats; the first row of a group is its reference)."""
    lines = []
    for kind, index in (("coverage", 0), ("evaluations", 1)):
        heading = (
            "Coverage"
            if kind == "coverage"
            else "Average evaluations (an unsolved problem counts the budget)"
        )
        lines += [f"| **{heading}** |" + " |" * (len(settings) + 1)]
        reference: dict[str, list[float | None]] = {}
        for group, name, stats in rows:
            values = [s[index] for s in stats]
            if group not in reference:
                reference[group] = values
                cells = [_absolute(v, kind) for v in values]
            else:
                cells = [_change(v, b, kind) for v, b in zip(values, reference[group], strict=True)]
            lines.append(f"| {group} | {name} | " + " | ".join(cells) + " |")
    return [
        f"### {title}",
        "",
        "| | | " + " | ".join(map(_label, settings)) + " |",
        "|---|---|" + "--:|" * len(settings),
        *lines,
    ]


def table2(runs: list[ConfidenceRun], heuristic: str) -> str:
    """Markdown Table 2: the search configurations of one heuristic against the Base of each queue."""
    splits = _splits(runs)
    settings = [s for s in _settings(runs) if s in splits]
    chosen = [r for r in runs if r.variant == heuristic]
    rows = []
    for search, group, configs in (("gbfs", "Single Q.", SINGLE), ("dual", "Dual Q.", DUAL)):
        found = {k[2] for r in chosen for k in r.evaluations if k[1] == search}
        for config in [*configs, *sorted(found - set(configs))]:
            stats = [
                _search_stats([r for r in chosen if r.setting == s], (splits[s], search, config))
                for s in settings
            ]
            if any(n for _, _, n in stats) or config == "Base":
                rows.append((group, config, stats))
    return "\n".join(_block(f"Heuristic {heuristic}", rows, settings))


def table3(runs: list[ConfidenceRun], search: str, config: str) -> str:
    """Markdown Table 3: one search configuration for every heuristic, against Standard."""
    splits = _splits(runs)
    settings = [s for s in _settings(runs) if s in splits]
    rows = []
    for variant in _variants(runs):
        stats = [
            _search_stats(
                [r for r in runs if r.setting == s and r.variant == variant], (splits[s], search, config)
            )
            for s in settings
        ]
        rows.append(("", variant, stats))
    label = "single queue" if search == "gbfs" else "dual queue"
    return "\n".join(_block(f"{label} {config}", rows, settings))


def plot_reliability(runs: list[ConfidenceRun], out: Path) -> Path | None:
    """``reliability.png``: accuracy against confidence (bins with states), one panel per setting."""
    settings = [s for s in _settings(runs) if any(r.metrics for r in runs if r.setting == s)]
    if not settings:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(settings), figsize=(4.2 * len(settings), 3.8), squeeze=False)
    for ax, setting in zip(axes[0], settings, strict=True):
        group = [r for r in runs if r.setting == setting and r.metrics is not None]
        for variant in _variants(group):
            bins: dict[int, list[tuple[float, float, int]]] = {}
            for r in group:
                if r.variant != variant:
                    continue
                for b, row in enumerate(r.metrics.get("reliability", {}).get("bins", [])):
                    if row.get("states"):
                        bins.setdefault(b, []).append((row["confidence"], row["accuracy"], row["states"]))
            xs = [sum(c * n for c, _, n in v) / sum(n for *_, n in v) for _, v in sorted(bins.items())]
            ys = [sum(a * n for _, a, n in v) / sum(n for *_, n in v) for _, v in sorted(bins.items())]
            ax.plot(xs, ys, marker="o", label=variant)
        ax.plot([0, 1], [0, 1], color="gray", linestyle=":", linewidth=1)
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="confidence", ylabel="accuracy (h* in [ĥ−½, ĥ+½])")
        ax.set_title(_label(setting))
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "reliability.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


PAPER_HEURISTIC, PAPER_SEARCH = "W50", "dual-A40"
"""The heuristic of the paper's Table 2 and the search of its Table 3 (listed first when found)."""


def found_heuristics(runs: list[ConfidenceRun]) -> list[str]:
    """The heuristics (variants) with a confidence-aware evaluation, the paper's first."""
    found = {r.variant for r in runs if any(k[1] != "gbfs" or k[2] != "Base" for k in r.evaluations)}
    order = [PAPER_HEURISTIC, *VARIANTS]
    return [v for v in dict.fromkeys(order) if v in found] + sorted(found - set(order))


def found_searches(runs: list[ConfidenceRun]) -> list[str]:
    """The confidence-aware searches evaluated (``<gbfs|dual>-<config>``), the paper's first."""
    found = {f"{k[1]}-{k[2]}" for r in runs for k in r.evaluations if k[1] != "gbfs" or k[2] != "Base"}
    return [s for s in (PAPER_SEARCH,) if s in found] + sorted(found - {PAPER_SEARCH})


def write_confidence_report(
    paths: Sequence[Path],
    out: Path,
    heuristic: str | None = None,
    search: str | None = None,
    plots: bool = True,
) -> tuple[list[Path], str]:
    """Write the three tables (and the reliability diagram) for the runs under `paths`; return the
    files and the markdown of the tables. `heuristic` and `search` pick Table 2's heuristic and Table
    3's search; None: every one found (`found_heuristics`, `found_searches`), else the paper's."""
    runs, notes = collect_confidence(paths)
    out.mkdir(parents=True, exist_ok=True)
    heuristics = [heuristic] if heuristic else (found_heuristics(runs) or [PAPER_HEURISTIC])
    searches = [search] if search else (found_searches(runs) or [PAPER_SEARCH])
    blocks3 = [table3(runs, *s.split("-", 1)) if "-" in s else table3(runs, s, "Base") for s in searches]
    parts = {
        "confidence_table1.md": ("Table 1: confidence (%) and rank correlation", table1(runs)),
        "confidence_table2.md": (
            "Table 2: confidence-aware search",
            "\n\n".join(table2(runs, h) for h in heuristics),
        ),
        "confidence_table3.md": ("Table 3: OOD-trained heuristics in one search", "\n\n".join(blocks3)),
    }
    files, texts = [], []
    for name, (title, body) in parts.items():
        text = "\n".join(
            [f"# {title}", "", body if runs else "No runs found.", "", *(f"- {n}" for n in notes), ""]
        )
        (out / name).write_text(text)
        files.append(out / name)
        texts.append(text)
    if plots and runs:
        path = plot_reliability(runs, out)
        if path is not None:
            files.append(path)
    return files, "\n".join(texts)
