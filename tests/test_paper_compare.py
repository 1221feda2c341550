"""``experiments/paper_compare.py``: the paper's transcribed numbers cover its whole grid, and our
report is set beside them cell by cell."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from experiments import paper_compare as compare
from experiments.paper_tables import DOMAINS

ROOT = Path(__file__).resolve().parents[1]
HEADER = "table,model,domain,config,sigma,residual,bound,loss,dist,metric,mean,std,n_seeds,n_runs,bold\n"


def test_the_published_numbers_cover_every_cell_of_the_papers_appendix_tables():
    paper = compare.read(compare.PUBLISHED)
    configs = ("learn/hFF", "learn/none", "fixed/hFF", "fixed/none")
    for model in compare.MODELS:
        for domain in DOMAINS:
            assert ("table1", model, domain, "", "hLMcut", "mse") in paper
            assert ("table2", model, domain, "", "hFF", "coverage") in paper
            for config in configs:
                for dist in ("N", "N+clip", "TN"):
                    assert ("table1", model, domain, config, dist, "mse") in paper
                    for metric in ("coverage", "mean_evaluations"):
                        assert ("table2", model, domain, config, dist, metric) in paper
    assert len(paper) == 3 * 4 * (14 + 2 * 13) + 4 * 12  # and linear regression's NLL (Table 8)


@pytest.mark.parametrize(
    ("key", "mean", "std"),
    [  # typed from the paper's appendix, independently of the transcription
        (("table1", "nlm", "ferry", "fixed/none", "N", "mse"), 118.59, 10.4),  # Table 4
        (("table1", "nlm", "gripper", "fixed/none", "N+clip", "mse"), 13.38, 14.5),
        (("table2", "nlm", "blocksworld", "", "hFF", "mean_evaluations"), 9309, None),  # Table 5
        (("table2", "nlm", "gripper", "learn/hFF", "TN", "mean_evaluations"), 1637, 244),
        (("table2", "nlm", "visitall", "learn/none", "TN", "coverage"), 1, None),
        (("table1", "hgn", "ferry", "learn/hFF", "N", "mse"), 8.9e8, 1.8e8),  # Table 6
        (("table2", "hgn", "gripper", "fixed/none", "TN", "coverage"), 0.63, 0.40),  # Table 7
        (("table1", "linear", "visitall", "learn/none", "TN", "nll"), 1.5, 0.1),  # Table 8
        (("table2", "linear", "ferry", "fixed/hFF", "TN", "mean_evaluations"), 7652, 0),  # Table 9
    ],
)
def test_transcribed_values_match_the_paper(key, mean, std):
    got_mean, got_std, _, _ = compare.read(compare.PUBLISHED)[key]
    assert got_mean == pytest.approx(mean) and (got_std is None) == (std is None)
    assert std is None or got_std == pytest.approx(std)


def _report(folder: Path, rows: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for table in ("table1", "table2"):
        lines = [r for r in rows if r.startswith(table + ",")]
        (folder / f"{table}.csv").write_text(HEADER + "".join(line + "\n" for line in lines))
    return folder


def test_cells_read_ours_beside_the_papers(tmp_path):
    report = _report(
        tmp_path / "report",
        [
            "table1,nlm,ferry,,,,,,hFF,mse,8.2971,0.0,2,2,0",
            "table1,nlm,ferry,learn/hFF,learn,hff,lmcut,nll,TN,mse,1.4962,0.0,1,1,0",
            "table1,nlm,ferry,fixed/hFF,fixed,hff,lmcut,nll,N,mse,1.25,0.5,3,3,0",
            "table1,nlm,ferry,fixed/none,fixed,none,lmcut,nll,TN,mse,,,0,0,0",
            "table2,nlm,ferry,learn/hFF,learn,hff,lmcut,nll,TN,mean_evaluations,770.6,0.0,1,1,0",
        ],
    )
    out = tmp_path / "beside.md"
    cmd = [
        sys.executable,
        "-m",
        "experiments.paper_compare",
        str(report),
        "--domains",
        "ferry",
        "--out",
        str(out),
    ]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    nlm_mse = next(line for line in text.splitlines() if line.startswith("| ferry | MSE |"))
    cells = [c.strip() for c in nlm_mse.strip("|").split("|")][2:]
    assert cells[0] == "8.30 · 9.77"  # a baseline: no std (it does not depend on the seed)
    assert cells[2] == "1.50 · 3.45±.8"  # one seed: no std of ours; the paper's as it prints it
    assert cells[3] == "1.25±0.50 · 2.98±1.4"  # three seeds
    assert cells[-1] == "– · 9.58±1.5"  # a cell with no finished run
    assert "| ferry | evaluations | – · 5152 | 771 · 2477±369 |" in text
    assert "STRIPS-HGN" in text and "linear regression" in text
    only_nlm = compare.compare(report, domains=["ferry"], models=["nlm"])
    assert "**NLM, Table 1" in only_nlm and "**NLM, Table 2" in only_nlm and "STRIPS-HGN" not in only_nlm


def test_the_paper_page_holds_what_the_stored_report_gives():
    """docs/paper.md's comparison is `paper_compare`'s output for the store's report, as committed
    (regenerated with ``python -m experiments.paper_compare --into docs/paper.md``)."""
    page = (ROOT / "docs" / "paper.md").read_text()
    block = page.split(compare.BEGIN)[1].split(compare.END)[0]
    assert block.strip() == compare.compare(ROOT / "experiments/results/paper-v2/report").strip()


def test_the_readme_holds_the_nlm_and_strips_hgn_tables_of_the_stored_report():
    """The README's "Reproducing the paper" block is the NLM's and STRIPS-HGN's part of the same
    comparison (``python -m experiments.paper_compare --models nlm hgn --into README.md``)."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split(compare.BEGIN)[1].split(compare.END)[0]
    report = ROOT / "experiments/results/paper-v2/report"
    assert block.strip() == compare.compare(report, models=["nlm", "hgn"]).strip()
    assert "**NLM, Table 2" in block and "**STRIPS-HGN, Table 2" in block and "Linear" not in block


def test_into_replaces_only_the_marked_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"before\n{compare.BEGIN}\nold\n{compare.END}\nafter\n")
    compare.into(page, "new table")
    assert page.read_text() == f"before\n{compare.BEGIN}\nnew table\n{compare.END}\nafter\n"
    page.write_text("no markers")
    with pytest.raises(SystemExit, match="needs one"):
        compare.into(page, "x")


def test_the_cells_csv_reads_the_tracked_store():
    """``python -m experiments.paper_tables --table-only``: one row per model, domain, cell and clip of the
    tracked store, each figure the mean over its seeds' own records."""
    import csv
    import io
    import json
    import statistics

    from experiments import results_store
    from experiments.paper_tables import CSV_COLUMNS

    store = Path(__file__).resolve().parents[1] / "experiments" / "results" / "paper-v2"
    out = subprocess.run(
        [sys.executable, "-m", "experiments.paper_tables", "--table-only"],
        cwd=store.parents[2], capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert rows and list(rows[0]) == list(CSV_COLUMNS)
    cells = {(r["model"], r["domain"], r["sigma"], r["residual"], r["dist"], r["clip"]) for r in rows}
    assert len(cells) == len(rows)  # one row each
    row = next(
        r for r in rows if (r["model"], r["domain"], r["dist"], r["clip"]) == ("nlm", "ferry", "tn", "false")
    )
    stored = results_store.read_area(store, "runs")  # the packs themselves, not the script's reading
    prefix = f"ferry__nlm__tn__{row['sigma']}__{row['residual']}__s"
    seeds = sorted(p for p in stored if p.startswith(prefix) and p.endswith("/eval/plan/summary.json"))
    coverage = [json.loads(stored[p])["coverage"] for p in seeds]
    assert int(row["seeds"]) == len(coverage) >= 1
    assert float(row["coverage"]) == pytest.approx(statistics.fmean(coverage), rel=1e-3)
