"""The paper's tables and plots from run directories, as a library: `build_report` collects runs and
baselines (`collect`), writes Tables 1-2 as markdown and CSV (`tables`) and the plots (`plots`);
`confidence` writes Heller et al.'s Tables 1-3 and the reliability diagram. ``python -m
agents.report`` (`agents.apps.report`) is its command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.reporting.collect import collect
from agents.reporting.tables import TABLE1_CAPTION, TABLE2_CAPTION, document, table1, table2, write_csv

__all__ = ["Report", "build_report"]


@dataclass
class Report:
    """What `build_report` wrote."""

    table1: str
    table2: str
    files: list[Path]
    notes: list[str]


def build_report(
    runs: Sequence[Path],
    out: Path,
    split: str = "plan",
    baselines: Sequence[Path] = (),
    nll: bool = False,
    plots: bool = True,
    ddof: int = 1,
) -> Report:
    """Collect runs and baselines, write the tables (markdown + CSV) and plots to `out`."""
    col = collect(runs, split, baselines)
    out.mkdir(parents=True, exist_ok=True)
    t1_tables, t2_tables, t1_notes, t2_notes = [], [], list(col.notes), []
    for model in col.models():
        t1, n1 = table1(col, model, nll=nll, ddof=ddof)
        t2, n2 = table2(col, model, split, ddof=ddof)
        t1_tables.append(t1)
        t2_tables.append(t2)
        t1_notes += n1
        t2_notes += n2
    md1 = document("Table 1: test accuracy", TABLE1_CAPTION, t1_tables, t1_notes)
    md2 = document("Table 2: planning", TABLE2_CAPTION, t2_tables, t2_notes)
    files = [out / "table1.md", out / "table1.csv", out / "table2.md", out / "table2.csv"]
    files[0].write_text(md1)
    write_csv(files[1], [r for t in t1_tables for r in t.csv_rows])
    files[2].write_text(md2)
    write_csv(files[3], [r for t in t2_tables for r in t.csv_rows])
    plot_notes: list[str] = []
    if plots and col.groups:
        from agents.reporting.plots import plot_coverage, plot_val_mse

        for model in col.models():
            files += plot_coverage(col, model, split, out, plot_notes)
            files += plot_val_mse(col, model, out, plot_notes)
    return Report(md1, md2, files, list(dict.fromkeys(col.notes + t1_notes + t2_notes + plot_notes)))
