"""Plan cost over evaluations: anytime search against plain GBFS, from `agents.evaluate` results.

    python -m agents.apps.anytime_curves --optimal data/ferry/test-reduced --name ferry \\
        --curves "GBFS hFF=runs/baselines/ferry__hff/eval/test-reduced" \\
                 "anytime hFF=runs/baselines/ferry__hff/eval/test-reduced-anytime"

Each of ``--curves LABEL=DIR ...`` is an evaluation directory of `agents.evaluate` (``DIR/problems/*.json``;
any ``--search``): a plain search contributes its one plan at its evaluation count, an anytime
search every improved plan (``improvements``). ``--optimal`` is a labelled split
(`pddlgym_sl.data`) whose records give each problem's optimal cost C*. At a budget of b
evaluations a problem scores C*/C for the cheapest plan (cost C) found within b evaluations, and 0
without one (the IPC's quality score); the curve is the mean score over the problems. Writes
``<name>.png`` (against evaluations, log scale: the score, and the problems whose plan is optimal
and, dashed, proved optimal) and ``<name>.md`` (the score at each of ``--budgets``, and at the end:
problems with a plan, with an optimal plan, and proved optimal).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pddlgym_sl.cli import Command, tyro_parse
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.io import atomic_write_text

__all__ = ["Curve", "load_curve", "main", "quality"]


@dataclass
class Curve:
    """One configuration's plans per problem: (evaluations, cost) pairs in order, and for the
    problems whose last plan was proved optimal, the evaluations the proof took."""

    label: str
    plans: dict[str, list[tuple[int, int]]]
    limit: int
    proved: dict[str, int] = field(default_factory=dict)


def load_curve(label: str, eval_dir: Path) -> Curve:
    """The plans of the per-problem results in ``eval_dir/problems``."""
    files = sorted((eval_dir / "problems").glob("*.json"))
    if not files:
        raise ConfigError(f"no results in {eval_dir / 'problems'} (run python -m agents.evaluate)")
    plans, proved, limits = {}, {}, set()
    for path in files:
        r = json.loads(path.read_text())
        limits.add(r["limit"])
        if "improvements" in r:
            plans[r["problem"]] = [(i["evaluations"], i["cost"]) for i in r["improvements"]]
        else:
            plans[r["problem"]] = [(r["evaluations"], r["plan_length"])] if r["solved"] else []
        if r["status"] == "optimal":
            proved[r["problem"]] = r["evaluations"]
    if len(limits) != 1:
        raise ConfigError(f"results under different budgets {sorted(limits)}", file=eval_dir)
    return Curve(label, plans, limits.pop(), proved)


def optimal_costs(split_dir: Path) -> dict[str, int]:
    """Problem file -> optimal plan cost, from a labelled split's records."""
    records = [json.loads(p.read_text()) for p in sorted((split_dir / "records").glob("*.json"))]
    costs = {r["problem"]: int(r["plan_length"]) for r in records if r["status"] == "solved"}
    if not costs:
        raise ConfigError(f"no solved records in {split_dir / 'records'}")
    return costs


def quality(curve: Curve, optimal: dict[str, int], budgets: np.ndarray) -> np.ndarray:
    """Mean over the curve's problems of C*/C (0 without a plan) within each budget."""
    missing = sorted(set(curve.plans) - set(optimal))
    if missing:
        raise ConfigError(f"{curve.label}: no optimal cost for {', '.join(missing[:3])}")
    scores = np.zeros((len(curve.plans), len(budgets)))
    for k, (problem, plans) in enumerate(sorted(curve.plans.items())):
        for evaluations, cost in plans:  # costs decrease: a later plan overwrites
            scores[k, budgets >= evaluations] = optimal[problem] / cost if cost else 1.0
    return scores.mean(axis=0)


def optimal_found(curve: Curve, optimal: dict[str, int], budgets: np.ndarray) -> np.ndarray:
    """Problems whose cheapest plan within each budget is optimal."""
    first = [next((e for e, c in plans if c == optimal[q]), None) for q, plans in curve.plans.items()]
    return np.array([sum(e is not None and e <= b for e in first) for b in budgets])


def table(curves: list[Curve], optimal: dict[str, int], budgets: list[int]) -> str:
    """Markdown: the mean score at each budget, then plans, optimal plans and proofs at the end."""
    head = ["configuration", *(f"score at {b:,}" for b in budgets), "plan", "optimal", "proved optimal"]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|--:" * (len(head) - 1) + "|"]
    for c in curves:
        scores = quality(c, optimal, np.array(budgets))
        n = len(c.plans)
        found = sum(bool(p) for p in c.plans.values())
        best = optimal_found(c, optimal, np.array([c.limit]))[0]
        cells = [
            c.label,
            *(f"{s:.3f}" for s in scores),
            f"{found}/{n}",
            f"{best}/{n}",
            f"{len(c.proved)}/{n}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(curves: list[Curve], optimal: dict[str, int], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    limit = max(c.limit for c in curves)
    budgets = np.unique(np.geomspace(1, limit, 400).astype(int))
    fig, (score_ax, count_ax) = plt.subplots(1, 2, figsize=(11, 4.2))
    for k, c in enumerate(curves):
        style = {
            "where": "post",
            "color": f"C{k}",
            "linewidth": 1.2 + 2.4 * (len(curves) - 1 - k) / len(curves),
        }
        score_ax.step(budgets, quality(c, optimal, budgets), label=c.label, **style)  # later lines thinner:
        count_ax.step(budgets, optimal_found(c, optimal, budgets), **style)  # equal curves stay visible
        if c.proved:
            proofs = [sum(e <= b for e in c.proved.values()) for b in budgets]
            count_ax.step(budgets, proofs, linestyle="--", **style)
    score_ax.set_ylabel("mean C*/C (0 without a plan)")
    count_ax.set_ylabel(f"problems of {len(curves[0].plans)} with an optimal plan (dashed: proved)")
    for ax in (score_ax, count_ax):
        ax.set_xscale("log")
        ax.set_xlabel("node evaluations")
        ax.grid(alpha=0.3)
    score_ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


@dataclass
class Args:
    """Plan-cost-over-evaluations curves and table of agents.evaluate results (see the module docstring)."""

    curves: list[str]
    """LABEL=EVAL_DIR, one per configuration"""
    optimal: Path
    """labelled split directory whose records hold the optimal costs"""
    out: Path = Path("runs/anytime")
    """output directory"""
    name: str = "anytime"
    """file name stem (and plot title)"""
    budgets: list[int] = field(default_factory=lambda: [100, 1000, 10_000])
    """budgets of the table's score columns"""


def run(args: Args) -> int:
    """Read the curves, write the table and the plot."""
    pairs = [c.split("=", 1) for c in args.curves]
    if any(len(p) != 2 for p in pairs):
        raise ConfigError("--curves expects LABEL=EVAL_DIR ...")
    curves = [load_curve(label, Path(d)) for label, d in pairs]
    problems = {frozenset(c.plans) for c in curves}
    if len(problems) != 1:
        raise ConfigError("the curves were evaluated on different problems")
    optimal = optimal_costs(args.optimal)
    text = table(curves, optimal, args.budgets)
    plot(curves, optimal, args.out / f"{args.name}.png", args.name)
    atomic_write_text(args.out / f"{args.name}.md", text)
    print(text, end="")
    return 0


COMMAND = Command("python -m agents.anytime_curves", tyro_parse(Args, __doc__), run, extra="learn")


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
