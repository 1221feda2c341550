"""Our Tables 1-2 beside the paper's, cell by cell (the README's and docs/paper.md's comparison).

    python -m experiments.paper_compare [REPORT] [--published experiments/paper_published.csv]
        [--domains ...] [--models nlm hgn linear] [--out FILE] [--into PAGE]

``REPORT`` is an `agents.report` output folder (default: the paper experiment's store,
``experiments/results/paper-v2/report``): its ``table1.csv`` (test MSE, NLL) and ``table2.csv``
(coverage, mean evaluations) are ours. ``experiments/paper_published.csv`` holds the paper's numbers
in the same long format, transcribed from its appendix (Tables 4-5: NLM, 6-7: STRIPS-HGN, 8-9:
linear regression; Tables 4-5 repeat the main Tables 1-2 with every configuration, Table 5's
standard deviations updated), one row per (table, model, domain, configuration, distribution,
metric) with the source table named. Per model, one markdown table for test MSE and one for
planning, with the paper's main cells (`experiments.paper_tables.CELLS`; N also with +clip) as
columns and each cell ``ours · paper``; a cell with no finished run of ours reads ``–``.
``--into PAGE`` writes it into a report page between its `BEGIN` and `END` markers (docs/paper.md;
``tests/test_paper_compare.py`` checks that the page holds what the stored report gives).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path
from typing import NamedTuple

from experiments.paper_tables import CELLS, DOMAINS
from pddlgym_sl.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]

PUBLISHED = ROOT / "experiments" / "paper_published.csv"
MODELS = {"nlm": "NLM", "hgn": "STRIPS-HGN", "linear": "linear regression"}
Key = tuple[str, str, str, str, str, str]
"""(table, model, domain, config, dist, metric); baselines have config ``""`` and dist hFF/hLMcut."""


def columns() -> list[tuple[str, str]]:
    """The compared cells as (config, dist): each of `CELLS`, an N cell also with +clip."""
    cells = []
    for name, (_, _, dist) in CELLS.items():
        config = name.rsplit(" ", 1)[0]
        cells.append((config, dist.upper()))
        if dist == "n":
            cells.append((config, "N+clip"))
    return cells


class Entry(NamedTuple):
    """One cell: its mean and std (None: not given), seeds, and the mean and std as the file
    prints them (the paper's own precision: ``.76``, ``2.0±.0``)."""

    mean: float
    std: float | None
    seeds: int
    printed: str


def read(path: Path) -> dict[Key, Entry]:
    """A long-format table (ours or the paper's) by key; rows without a mean (cells with no
    finished run) and ``#`` comment lines are left out."""
    table = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            if not row["mean"]:
                continue
            key = tuple(row[k] for k in ("table", "model", "domain", "config", "dist", "metric"))
            std = row.get("std") or None
            printed = row["mean"] + (f"±{std}" if std else "")
            table[key] = Entry(
                float(row["mean"]), float(std) if std else None, int(row.get("n_seeds") or 0), printed
            )
    return table


def number(value: float, metric: str) -> str:
    """Ours at the report's precision: evaluations whole, coverage and errors to two places."""
    if metric == "mean_evaluations":
        return f"{value:.0f}"
    if metric == "coverage":
        return f"{value:.2f}"
    return f"{value:.2e}" if abs(value) >= 1e5 else f"{value:.2f}"


def ours_cell(entry: Entry | None, metric: str, baseline: bool) -> str:
    """Our ``mean±std`` (the std over more than one seed; none for a baseline, which does not
    depend on the seed), or –."""
    if entry is None:
        return "–"
    text = number(entry.mean, metric)
    if entry.std is not None and entry.seeds > 1 and not baseline:
        text += f"±{number(entry.std, metric)}"
    return text


def paper_cell(entry: Entry | None) -> str:
    """The paper's ``mean±std`` as it prints them, or –."""
    return "–" if entry is None else entry.printed


TABLES = (
    ("table1", "Table 1: test MSE and NLL", (("mse", "MSE"), ("nll", "NLL")), ("hFF", "hLMcut")),
    (
        "table2",
        "Table 2: planning on the 100 `plan` problems, 10,000 evaluations each",
        (("coverage", "coverage"), ("mean_evaluations", "evaluations")),
        ("hFF",),
    ),
)
"""Per table: its key, title, (metric, row label) pairs and baseline columns."""


def render(
    ours: dict[Key, Entry], paper: dict[Key, Entry], domains: list[str], models: list[str] | None = None
) -> str:
    """Per model (of `MODELS`, or those of `models`) and table, a markdown table of domains x
    metrics whose cells read ``ours · paper``."""
    cells = columns()
    lines = []
    for model in models or list(MODELS):
        label = MODELS[model]
        for table, title, metrics, baselines in TABLES:
            keys = [("", b) for b in baselines] + cells
            head = [*baselines, *(f"{c} {d}" for c, d in cells)]
            lines += [f"**{label}, {title}** (ours · paper)", ""]
            lines += ["| domain | metric | " + " | ".join(head) + " |"]
            lines += ["| --- | --- | " + " | ".join("--:" for _ in head) + " |"]
            for domain in domains:
                for metric, metric_label in metrics:
                    row = []
                    for config, dist in keys:
                        key = (table, model, domain, config, dist, metric)
                        ours_text = ours_cell(ours.get(key), metric, baseline=not config)
                        row.append(f"{ours_text} · {paper_cell(paper.get(key))}")
                    lines.append(f"| {domain} | {metric_label} | " + " | ".join(row) + " |")
            lines.append("")
    return "\n".join(lines)


def seeds_note(ours: dict[Key, Entry]) -> str:
    """How many seeds our cells average (their distinct counts)."""
    counts = sorted({entry.seeds for key, entry in ours.items() if key[3]})
    return f"ours: mean over {'/'.join(map(str, counts)) or 'no'} seed(s) per cell (± over more than one)"


BEGIN, END = "<!-- paper_compare:begin -->", "<!-- paper_compare:end -->"
"""The markers of the block that ``--into FILE`` replaces."""


def compare(
    report: Path,
    published: Path = PUBLISHED,
    domains: list[str] | None = None,
    models: list[str] | None = None,
) -> str:
    """The comparison of the report folder `report` with the paper's numbers, as markdown."""
    ours = read(report / "table1.csv") | read(report / "table2.csv")
    text = render(ours, read(published), list(domains or DOMAINS), models)
    return f"{seeds_note(ours)}; paper: mean±std over 5 seeds.\n\n{text}"


def into(document: Path, text: str) -> None:
    """Replace the block between `BEGIN` and `END` in `document` (a report page) by `text`."""
    page = document.read_text()
    if page.count(BEGIN) != 1 or page.count(END) != 1 or page.index(BEGIN) > page.index(END):
        raise SystemExit(f"{document}: needs one {BEGIN} line followed by one {END} line")
    head, rest = page.split(BEGIN)
    atomic_write_text(document, f"{head}{BEGIN}\n{text.strip()}\n{END}{rest.split(END, 1)[1]}")


def build_parser() -> argparse.ArgumentParser:
    """The command line (what ``--help`` shows; the docs' commands are checked against it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", nargs="?", type=Path, default=ROOT / "experiments/results/paper-v2/report")
    parser.add_argument("--published", type=Path, default=PUBLISHED)
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--out", type=Path, help="write the markdown here (default: print it)")
    parser.add_argument("--into", type=Path, help=f"replace the block between {BEGIN} and {END} in this page")
    return parser


def main() -> None:
    parser = build_parser()
    args = parser.parse_args()
    text = compare(args.report, args.published, args.domains, args.models)
    if args.into is not None:
        into(args.into, text)
    if args.out is not None:
        atomic_write_text(args.out, text)  # its folder made if missing
    if args.out is None and args.into is None:
        print(text)


if __name__ == "__main__":
    main()
