"""The paper's tables and plots from run directories: ``python -m agents.report RUN_DIRS...``.

    python -m agents.report runs/sweep [--out runs/report] [--split plan] [--baselines runs/baselines]

RUN_DIRS are run directories of `agents.supervised` or directories containing them (searched
recursively). Runs are grouped by (model, domain, data set, σ, residual, bound, loss, dist) from
their args.json;
the seeds of a group are its repetitions, reported as mean±std (sample std, ``--ddof 1``). One
table block per model (the paper's Table 1 is NLM; appendices E and F give STRIPS-HGN and LR):

- **Table 1** (``table1.md``/``.csv``, test accuracy from ``metrics.json``): rows domain × {MSE,
  +clip}; columns hFF and hLMcut (per-dataset constants), then N and TN for each configuration
  present (``learn/hFF``, ``learn/none``, ``fixed/hFF``, ``fixed/none``, ...); +clip only under N.
  The lowest mean among N, N+clip and TN of a configuration is bold when the second best trails
  it by more than 0.1 (the paper's caption).
- **Table 2** (``table2.md``/``.csv``, planning from ``eval/<split>[-clip]/summary.json``):
  "Ratio of solved instances under <limit> evaluations" and "Average node evaluations" blocks;
  rows are domains; columns hFF (a baseline summary of ``agents.evaluate --heuristic hff``) then
  N, N+clip, TN per configuration; the best of each configuration is bold (coverage: highest,
  ties broken by fewer evaluations; evaluations: fewest).
- **Plots**: ``coverage_<model>.png`` (fraction of problems solved within b evaluations against
  b, log x from 10 to the limit, mean over seeds; one panel per domain, hFF included) and
  ``val_mse_<model>.png`` (``val/mse`` of the TensorBoard events against the step, mean±std band
  over seeds, log y, as the paper's Figure 2).
- **Confidence** (``--confidence``): Tables 1-3 of Heller et al. (SoCS 2022) and a reliability
  diagram (`agents.reporting.confidence`).

CSV rows: one per (model, domain, config, dist, metric) with mean, std, n_seeds (seeds that have
the value), n_runs (seeds in the group) and bold. Missing values (an unevaluated run, a domain
without a baseline) are "–" in the tables and empty in the CSV, with a note; a value computed
from fewer seeds than its group has is marked "†". The tables are printed to stdout as well.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import tyro

from agents.reporting import Report, build_report
from agents.reporting.tables import format_stat
from pddlgym_sl.cli import Command, tyro_parse

__all__ = ["Args", "Report", "build_report", "format_stat", "main"]


@dataclass
class Args:
    """Tables 1-2 of the paper (mean±std over seeds) and plots from training runs."""

    runs: tyro.conf.Positional[list[Path]]
    """run directories, or directories containing them (searched recursively)"""
    out: Path = Path("runs/report")
    """output directory: table1.md/.csv, table2.md/.csv, *.png"""
    split: str = "plan"
    """evaluation split of Table 2 (<run>/eval/<split>[-clip]/summary.json)"""
    baselines: list[Path] = field(default_factory=list)
    """more places to look for hFF baseline summaries (RUN_DIRS are always searched)"""
    nll: bool = False
    """add a test-NLL row to Table 1 (appendix F shows it for linear regression)"""
    plots: bool = True
    """write the PNG plots"""
    ddof: int = 1
    """delta degrees of freedom of the std over seeds (1: sample std; 0: population std)"""
    quiet: bool = False
    """do not print the tables"""
    confidence: bool = False
    """also Heller et al.'s Tables 1-3 and the reliability diagram (agents/reporting/confidence.py)"""
    confidence_heuristic: str | None = None
    """heuristic of the confidence Table 2: Standard, U50, U90, W50, W90 (default: every one with
    confidence-aware evaluations, the paper's W50 first)"""
    confidence_search: str | None = None
    """search of the confidence Table 3: <gbfs|dual>-<config> (default: every confidence-aware search
    evaluated, the paper's dual-A40 first)"""


def run(args: Args) -> int:
    """Write the report, print the tables and the files written."""
    report = build_report(args.runs, args.out, args.split, args.baselines, args.nll, args.plots, args.ddof)
    if not args.quiet:
        print(report.table1)
        print(report.table2)
    files = report.files
    if args.confidence:
        from agents.reporting.confidence import write_confidence_report

        more, text = write_confidence_report(
            args.runs, args.out, args.confidence_heuristic, args.confidence_search, args.plots
        )
        files = files + more
        if not args.quiet:
            print(text)
    print(f"report: {', '.join(str(f) for f in files)}")
    return 0


COMMAND = Command("python -m agents.report", tyro_parse(Args, __doc__), run, extra="learn")


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
