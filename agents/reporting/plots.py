"""The report's figures: coverage against evaluation budget, and validation MSE during training.

matplotlib (Agg backend) and TensorBoard's event reader are imported inside the functions, so
importing this module (or `agents.reporting`) costs nothing and never touches a display.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np

from agents.reporting.collect import Collection, Run, model_label, problem_results

# N dashed, N+clip dotted, TN solid; one colour per configuration.
_STYLES = {"N": "--", "N+clip": ":", "TN": "-"}
_VARIANTS = (("N", "n", False), ("N+clip", "n", True), ("TN", "tn", False))


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _panels(plt, n: int):
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _mark_empty(ax) -> None:
    if not ax.lines:
        ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center", color="gray")


def coverage_curve(results: list[dict], budgets: np.ndarray) -> np.ndarray:
    """Fraction of problems solved with at most b evaluations, for each b in `budgets`."""
    if not results:
        return np.full(len(budgets), np.nan)
    evaluations = np.array([r["evaluations"] for r in results if r["solved"]], dtype=float)
    return (evaluations[None, :] <= budgets[:, None]).sum(axis=1) / len(results)


def plot_coverage(col: Collection, model: str, split: str, out: Path, notes: list[str]) -> list[Path]:
    """``coverage_<model>.png``: coverage(b) for b from 10 to the budget, one panel per domain."""
    domains = col.domains(model)
    configs = col.configs(model)
    limits = [
        s["limit"]
        for r in col.all_runs()
        for clip in (False, True)
        if r.model == model and (s := r.summary(split, clip)) and isinstance(s.get("limit"), int)
    ]
    limits += [b.get("limit", 0) for d in domains if (b := col.baseline(d)) is not None]
    if not limits:
        notes.append(f"{model}: no evaluations of split {split!r}, no coverage plot")
        return []
    budgets = np.logspace(1, math.log10(max(max(limits), 11)), 200)
    plt = _pyplot()
    fig, axes = _panels(plt, len(domains))
    colors = plt.get_cmap("tab10")
    for ax, domain in zip(axes, domains, strict=True):
        baseline, where = col.baseline(domain), col.baseline_dir(domain)
        if baseline is not None and where is not None:
            results = problem_results(where, baseline)
            if results:
                curve = coverage_curve(results, budgets)
                ax.plot(budgets, curve, color="black", lw=1.5, drawstyle="steps-post", label="hFF")
        for i, config in enumerate(configs):
            for label, dist, clip in _VARIANTS:
                curves = []
                for run in col.runs(model, domain, config, dist):
                    summary = run.summary(split, clip)
                    results = problem_results(run.eval_dir(split, clip), summary) if summary else []
                    if results:
                        curves.append(coverage_curve(results, budgets))
                if curves:
                    ax.plot(
                        budgets,
                        np.mean(curves, axis=0),
                        _STYLES[label],
                        color=colors(i % 10),
                        drawstyle="steps-post",
                        label=f"{config.label} {label}",
                    )
        _mark_empty(ax)
        ax.set_xscale("log")
        ax.set_xlim(budgets[0], budgets[-1])
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(domain)
        ax.set_xlabel("node evaluations")
        ax.set_ylabel("ratio of solved instances")
        ax.grid(alpha=0.3)
    title = f"{model_label(model)}: coverage under an evaluation budget ({split})"
    return [_save(plt, fig, axes, title, out / f"coverage_{_file_part(model)}.png")]


def val_curve(run: Run, tag: str = "val/mse") -> tuple[np.ndarray, np.ndarray] | None:
    """(steps, values) of a scalar in the run's TensorBoard events, or None when absent."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    try:
        events = EventAccumulator(str(run.path), size_guidance={"scalars": 0})
        events.Reload()
        if tag not in events.Tags().get("scalars", []):
            return None
        scalars = {e.step: e.value for e in events.Scalars(tag)}  # a resumed run rewrites steps
    except Exception:  # a corrupt or foreign event file must not stop the report
        return None
    steps = np.array(sorted(scalars), dtype=float)
    return steps, np.array([scalars[s] for s in sorted(scalars)], dtype=float)


def plot_val_mse(col: Collection, model: str, out: Path, notes: list[str]) -> list[Path]:
    """``val_mse_<model>.png``: validation MSE against step, mean±std band over seeds, log y."""
    domains = col.domains(model)
    configs = col.configs(model)
    plt = _pyplot()
    fig, axes = _panels(plt, len(domains))
    colors = plt.get_cmap("tab10")
    drawn = 0
    for ax, domain in zip(axes, domains, strict=True):
        for i, config in enumerate(configs):
            for label, dist in (("N", "n"), ("TN", "tn")):
                curves = []
                for run in col.runs(model, domain, config, dist):
                    curve = val_curve(run)
                    if curve is None:
                        notes.append(f"{run.path}: no val/mse in its TensorBoard events")
                    else:
                        curves.append(curve)
                if not curves:
                    continue
                steps = np.array(sorted({s for c in curves for s in c[0]}))
                grid = np.full((len(curves), len(steps)), np.nan)
                for row, (s, v) in enumerate(curves):
                    grid[row, np.searchsorted(steps, s)] = v
                with np.errstate(all="ignore"):
                    mean = np.nanmean(grid, axis=0)
                    std = np.nanstd(grid, axis=0)
                color = colors(i % 10)
                ax.plot(steps, mean, _STYLES[label], color=color, label=f"{config.label} {label}")
                if len(curves) > 1:
                    lower = np.maximum(mean - std, mean / 10)  # keep the band on the log axis
                    ax.fill_between(steps, lower, mean + std, color=color, alpha=0.15, lw=0)
                drawn += 1
        _mark_empty(ax)
        ax.set_yscale("log")
        ax.set_title(domain)
        ax.set_xlabel("training step")
        ax.set_ylabel("validation MSE")
        ax.grid(alpha=0.3)
    title = f"{model_label(model)}: validation MSE (mean±std over seeds)"
    return [_save(plt, fig, axes if drawn else [], title, out / f"val_mse_{_file_part(model)}.png")]


def _save(plt, fig, legend_axes: list, title: str, path: Path) -> Path:
    """Legend on the first of ``legend_axes`` (none when empty), title, layout, PNG; closes ``fig``."""
    if legend_axes:
        legend_axes[0].legend(fontsize=7)
    fit_title(fig, title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def fit_title(fig, title: str):
    """``fig.suptitle(title)``, wrapped onto lines that fit the figure's width (one panel, one
    domain, is narrower than a model's title)."""
    text = fig.suptitle(title)
    fig.canvas.draw()
    too_wide = text.get_window_extent().width / fig.bbox.width
    if too_wide > 0.95:
        per_line = max(10, int(len(title) * 0.95 / too_wide))
        text.set_text(textwrap.fill(title, per_line))
    return text


def _file_part(model: str) -> str:
    """A model name as a file-name part: ``nlm RL+clip`` -> ``nlm-RL-clip`` (value-learning runs)."""
    return "-".join("".join(c if c.isalnum() or c in "._" else " " for c in model).split())
