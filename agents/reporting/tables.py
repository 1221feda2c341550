"""The paper's Tables 1 and 2 from collected runs: cells (mean±std over seeds), bold, markdown, CSV.

`table1` (test accuracy) and `table2` (planning) build one model's block; `document` joins blocks
into a markdown file and `write_csv` writes their CSV rows (see `agents.reporting`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.reporting.collect import Collection, Config, Run, mean_std, model_label

__all__ = [
    "TABLE1_CAPTION",
    "TABLE2_CAPTION",
    "Stat",
    "Table",
    "document",
    "format_stat",
    "table1",
    "table2",
    "write_csv",
]

MISSING = "–"
PARTIAL_MARK = "†"
BOLD_GAP = 0.1
CSV_FIELDS = (
    "table",
    "model",
    "domain",
    "config",
    "sigma",
    "residual",
    "bound",
    "loss",
    "dist",
    "metric",
    "mean",
    "std",
    "n_seeds",
    "n_runs",
    "bold",
)


# ------------------------------------------------------------------ cells
@dataclass
class Stat:
    """A table entry: one value per seed that has it, out of `n_runs` seeds in the group."""

    values: list[float]
    n_runs: int
    kind: str  # "mse" | "coverage" | "evaluations"
    ddof: int = 1
    bold: bool = False

    @property
    def present(self) -> bool:
        return bool(self.values)

    @property
    def partial(self) -> bool:
        return 0 < len(self.values) < self.n_runs

    @property
    def mean(self) -> float:
        return mean_std(self.values, self.ddof)[0]

    @property
    def std(self) -> float:
        return mean_std(self.values, self.ddof)[1]

    def text(self) -> str:
        if not self.values:
            return MISSING
        body = format_stat(self.mean, self.std if len(self.values) > 1 else None, self.kind)
        body = f"**{body}**" if self.bold else body
        return body + (PARTIAL_MARK if self.partial else "")


def format_stat(mean: float, std: float | None, kind: str) -> str:
    """The paper's number style: ``3.73±0.70``, ``(8.9±1.8)e8``, ``2690±2128``, ``0.84±0.19``, ``1``."""
    if not math.isfinite(mean):
        return str(mean)
    if kind == "evaluations":
        return f"{mean:.0f}" if std is None else f"{mean:.0f}±{std:.0f}"
    if kind == "coverage":
        if mean in (0.0, 1.0) and not std:
            return f"{mean:.0f}"
        return f"{mean:.2f}" if std is None else f"{mean:.2f}±{std:.2f}"
    if abs(mean) >= 1e5:
        exponent = math.floor(math.log10(abs(mean)))
        scale = 10.0**exponent
        if std is None:
            return f"{mean / scale:.1f}e{exponent}"
        return f"({mean / scale:.1f}±{std / scale:.1f})e{exponent}"
    return f"{mean:.2f}" if std is None else f"{mean:.2f}±{std:.2f}"


def mark_best(
    stats: Sequence[Stat], key: Callable[[Stat], tuple[float, ...]], gap: float | None = None
) -> None:
    """Bold the best of `stats` under `key` (smaller is better). With `gap`, only a single best
    that beats the second best by more than `gap`; without, every entry tied with the best."""
    present = [s for s in stats if s.present]
    if len(present) < 2:
        return
    ranked = sorted(present, key=key)
    if gap is not None:
        if key(ranked[1])[0] - key(ranked[0])[0] > gap:
            ranked[0].bold = True
        return
    best = key(ranked[0])
    for s in ranked:
        if all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(key(s), best, strict=True)):
            s.bold = True


# ------------------------------------------------------------------ tables
@dataclass
class Table:
    """A markdown table (one model's block of Table 1 or 2) with its CSV rows."""

    title: str
    header: list[str]
    label_columns: int = 2
    rows: list[list[str]] = field(default_factory=list)
    csv_rows: list[dict[str, Any]] = field(default_factory=list)

    def markdown(self) -> str:
        align = ["---"] * self.label_columns + ["--:"] * (len(self.header) - self.label_columns)
        lines = [f"### {self.title}", ""]
        lines += ["| " + " | ".join(self.header) + " |", "| " + " | ".join(align) + " |"]
        for row in self.rows:
            if len(row) == 1:  # a block heading spanning the table
                lines.append("| " + row[0] + " |" + " |" * (len(self.header) - 1))
            else:
                lines.append("| " + " | ".join(row) + " |")
        return "\n".join(lines)


def _csv_row(
    table: str, model: str, domain: str, config: Config | None, dist: str, metric: str, stat: Stat
) -> dict[str, Any]:
    return {
        "table": table,
        "model": model,
        "domain": domain,
        "config": config.label if config else "",
        "sigma": config.sigma if config else "",
        "residual": config.residual if config else "",
        "bound": config.bound if config else "",
        "loss": config.loss if config else "",
        "dist": dist,
        "metric": metric,
        "mean": repr(stat.mean) if stat.present else "",
        "std": repr(stat.std) if stat.present else "",
        "n_seeds": len(stat.values),
        "n_runs": stat.n_runs,
        "bold": int(stat.bold),
    }


def _metric_stat(runs: list[Run], key: str, ddof: int) -> Stat:
    values = [v for r in runs if (v := r.metric(key)) is not None]
    return Stat(values, len(runs), "mse", ddof)


def _constant(values: list[float], kind: str) -> str:
    if not values:
        return MISSING
    return format_stat(sum(values) / len(values), None, kind)


def table1(col: Collection, model: str, nll: bool = False, ddof: int = 1) -> tuple[Table, list[str]]:
    """Table 1 (test accuracy) of one model."""
    configs = col.configs(model)
    header = ["domain", "metric", "hFF", "hLMcut"]
    header += [f"{c.label} {d}" for c in configs for d in ("N", "TN")]
    table = Table(f"{model_label(model)}: test MSE (smaller is better)", header)
    notes: list[str] = []
    for domain in col.domains(model):
        runs = [r for c in configs for d in ("n", "tn") for r in col.runs(model, domain, c, d)]
        baseline_stats = {}
        for name, key in (("hFF", "test_hff_mse"), ("hLMcut", "test_lmcut_mse")):
            values = [v for r in runs if (v := r.metric(key)) is not None]
            baseline_stats[name] = Stat(values, len(runs), "mse", ddof)
            if values and max(values) - min(values) > 1e-6 * max(1.0, abs(max(values))):
                notes.append(f"{model} {domain}: {name} test MSE differs across runs (different test sets?)")
        mse_row = [domain, "MSE", *(_constant(s.values, "mse") for s in baseline_stats.values())]
        clip_row, nll_row = ["", "+clip", "", ""], ["", "NLL", "", ""]
        pair_row = ["", "pairs ranked", "", ""]  # a ranking run's test pairwise accuracy (larger is better)
        for name, stat in baseline_stats.items():
            table.csv_rows.append(_csv_row("table1", model, domain, None, name, "mse", stat))
        for config in configs:
            n_runs, tn_runs = col.runs(model, domain, config, "n"), col.runs(model, domain, config, "tn")
            n, clip, tn = (
                _metric_stat(n_runs, "test_mse", ddof),
                _metric_stat(n_runs, "test_mse_clip", ddof),
                _metric_stat(tn_runs, "test_mse", ddof),
            )
            mark_best([n, clip, tn], key=lambda s: (s.mean,), gap=BOLD_GAP)
            n_nll, tn_nll = _metric_stat(n_runs, "test_nll", ddof), _metric_stat(tn_runs, "test_nll", ddof)
            n_pairs = _metric_stat(n_runs, "test_pair_accuracy", ddof)
            tn_pairs = _metric_stat(tn_runs, "test_pair_accuracy", ddof)
            mse_row += [n.text(), tn.text()]
            clip_row += [clip.text(), ""]
            nll_row += [n_nll.text(), tn_nll.text()]
            pair_row += [n_pairs.text() if n_pairs.values else "", tn_pairs.text() if tn_pairs.values else ""]
            for dist, group in (("N", n_runs), ("TN", tn_runs)):
                what = f"{model} {domain} {config.label} {dist}"
                missing = ", ".join(r.path.name for r in group if r.metrics is None)
                if missing:
                    notes.append(f"{what}: no metrics.json (unfinished) in {missing}")
                elif not group:
                    notes.append(f"{what}: no runs")
            table.csv_rows += [
                _csv_row("table1", model, domain, config, "N", "mse", n),
                _csv_row("table1", model, domain, config, "N+clip", "mse", clip),
                _csv_row("table1", model, domain, config, "TN", "mse", tn),
                _csv_row("table1", model, domain, config, "N", "nll", n_nll),
                _csv_row("table1", model, domain, config, "TN", "nll", tn_nll),
            ]
            table.csv_rows += [
                _csv_row("table1", model, domain, config, dist, "pair_accuracy", stat)
                for dist, stat in (("N", n_pairs), ("TN", tn_pairs))
                if stat.values
            ]
        ranked = any(cell for cell in pair_row[2:])
        table.rows += [mse_row, clip_row] + ([nll_row] if nll else []) + ([pair_row] if ranked else [])
    return table, notes


def _budget(limit: Any) -> str:
    if isinstance(limit, int) and limit > 0 and 10 ** round(math.log10(limit)) == limit:
        return f"10^{round(math.log10(limit))}"
    return str(limit)


def table2(col: Collection, model: str, split: str, ddof: int = 1) -> tuple[Table, list[str]]:
    """Table 2 (planning: coverage and average node evaluations) of one model."""
    configs = col.configs(model)
    variants = (("N", "n", False), ("N+clip", "n", True), ("TN", "tn", False))
    header = ["domain", "problems", "hFF"] + [f"{c.label} {v[0]}" for c in configs for v in variants]
    limits: set[Any] = set()
    problem_counts: dict[str, set[Any]] = {}
    coverage_rows: list[list[str]] = []
    evaluation_rows: list[list[str]] = []
    csv_rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for domain in col.domains(model):
        baseline = col.baseline(domain)
        counts = problem_counts.setdefault(domain, set())
        if baseline is None:
            cov_row, eval_row = [domain, MISSING], [domain, MISSING]
            notes.append(
                f"{domain}: no hFF baseline for split {split!r} (python -m agents.evaluate --heuristic hff "
                f"--domain {domain.split(' (', 1)[0]} --split {split})"
            )
        else:
            limits.add(baseline.get("limit"))
            counts.add(baseline.get("problems"))
            cov_row = [domain, format_stat(float(baseline["coverage"]), None, "coverage")]
            eval_row = [domain, format_stat(float(baseline["mean_evaluations"]), None, "evaluations")]
            for metric, kind in (("coverage", "coverage"), ("mean_evaluations", "evaluations")):
                stat = Stat([float(baseline[metric])], 1, kind, ddof)
                csv_rows.append(_csv_row("table2", model, domain, None, "hFF", metric, stat))
        for config in configs:
            coverage, evaluations = [], []
            for label, dist, clip in variants:
                runs = col.runs(model, domain, config, dist)
                summaries = [s for r in runs if (s := r.summary(split, clip)) is not None]
                limits.update(s.get("limit") for s in summaries)
                counts.update(s.get("problems") for s in summaries)
                coverage.append(Stat([float(s["coverage"]) for s in summaries], len(runs), "coverage", ddof))
                evaluations.append(
                    Stat([float(s["mean_evaluations"]) for s in summaries], len(runs), "evaluations", ddof)
                )
                missing = ", ".join(r.path.name for r in runs if r.summary(split, clip) is None)
                if missing:
                    where = f"eval/{split}{'-clip' if clip else ''}"
                    notes.append(f"{model} {domain} {config.label} {label}: no {where} in {missing}")
            pairs = zip(coverage, evaluations, strict=True)
            tie_break = {id(c): e.mean for c, e in pairs if e.present}  # same summaries: present together
            mark_best(coverage, key=lambda s, t=tie_break: (-s.mean, t[id(s)]))
            mark_best(evaluations, key=lambda s: (s.mean,))
            for (label, _, _), cov, evals in zip(variants, coverage, evaluations, strict=True):
                csv_rows.append(_csv_row("table2", model, domain, config, label, "coverage", cov))
                csv_rows.append(_csv_row("table2", model, domain, config, label, "mean_evaluations", evals))
            cov_row += [s.text() for s in coverage]
            eval_row += [s.text() for s in evaluations]
        counts.discard(None)
        # on how many problems each figure of the row stands (a range: the runs differ, see the notes)
        size = "–" if not counts else "–".join(map(str, sorted({min(counts), max(counts)})))
        coverage_rows.append([cov_row[0], size, *cov_row[1:]])
        evaluation_rows.append([eval_row[0], size, *eval_row[1:]])
        if len(counts) > 1:
            notes.append(f"{model} {domain}: evaluations over different numbers of problems {sorted(counts)}")
    limits.discard(None)
    if len(limits) > 1:
        notes.append(f"{model}: evaluations under different budgets {sorted(limits)}")
    budget = _budget(next(iter(limits))) if len(limits) == 1 else "the budget"
    table = Table(f"{model_label(model)}: planning on split {split!r}", header, label_columns=1)
    table.rows = [
        [f"**Ratio of solved instances under {budget} evaluations (higher the better)**"],
        *coverage_rows,
        ["**Average node evaluations (smaller the better)**"],
        *evaluation_rows,
    ]
    table.csv_rows = csv_rows
    return table, notes


# ------------------------------------------------------------------ output
TABLE1_CAPTION = (
    "Test MSE: mean±std over seeds (one value: a single seed). Rows +clip: N with μ clipped below "
    "by the admissible bound. For each configuration, the best mean among N, N+clip and TN is bold "
    f"when the second best trails it by more than {BOLD_GAP}. hFF and hLMcut: the MSE of those "
    "heuristics on the same test states."
)
TABLE2_CAPTION = (
    "GBFS with the best-validation-MSE weights: the ratio of solved instances within the evaluation "
    "budget and the average number of evaluated nodes (an unsolved instance counts the budget), "
    "mean±std over seeds. hFF: the symbolic baseline. For each configuration, the best of N, N+clip "
    "and TN is bold (coverage: highest, ties broken by fewer evaluations)."
)
PARTIAL_NOTE = f"{PARTIAL_MARK} computed over fewer seeds than the configuration has (see the notes)."


def document(title: str, caption: str, tables: list[Table], notes: list[str]) -> str:
    parts = [f"# {title}", "", caption, ""]
    for table in tables:
        parts += [table.markdown(), ""]
    if any(cell.endswith(PARTIAL_MARK) for t in tables for row in t.rows for cell in row):
        parts += [PARTIAL_NOTE, ""]
    if not tables:
        parts += ["No runs found.", ""]
    if notes:
        parts += ["Notes:", "", *(f"- {n}" for n in dict.fromkeys(notes)), ""]
    return "\n".join(parts)


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
