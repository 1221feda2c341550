"""agents.report --confidence: Tables 1-3 of Heller et al. and the reliability diagram from
hand-made run directories."""

from __future__ import annotations

import json
from pathlib import Path

from agents.apps.report import main as report_main
from agents.reporting.confidence import collect_confidence, table1, table2, table3


def _run(root: Path, name: str, ood: str, ratio: float, seed: int, metrics: dict, evals: dict) -> None:
    run = root / name
    (run / "eval").mkdir(parents=True)
    args = {"domain": "ferry", "model": "nlm", "dist": "tn", "sigma": "learn", "residual": "hff"}
    args |= {"seed": seed, "ood": ood, "ood_ratio": ratio}
    (run / "args.json").write_text(json.dumps(args))
    (run / "confidence.json").write_text(json.dumps(metrics))
    for (search, config), (coverage, evaluations) in evals.items():
        directory = (
            run / "eval" / ("test" if (search, config) == ("gbfs", "Base") else f"test-{search}-{config}")
        )
        directory.mkdir()
        summary = {"split": "test", "clip": False, "coverage": coverage, "mean_evaluations": evaluations}
        if (search, config) != ("gbfs", "Base"):  # old summaries have no search / config fields
            summary |= {"search": search, "config": config}
        (directory / "summary.json").write_text(json.dumps(summary))


def _metrics(conf_in: float, tau: float) -> dict:
    bins = [
        {"states": 10, "confidence": 0.25, "accuracy": 0.2},
        {"states": 0, "confidence": None, "accuracy": None},
    ]
    return {
        "confidence_in": conf_in,
        "confidence_uniform": 0.1,
        "confidence_weighted": 0.3,
        "kendall_tau": tau,
        "reliability": {"bins": bins, "ece": 0.05},
    }


def test_confidence_tables(tmp_path):
    evals = {("gbfs", "Base"): (0.8, 4000), ("gbfs", "A5"): (0.9, 3000), ("dual", "Base"): (0.9, 2000)}
    evals |= {("dual", "A40"): (1.0, 1500)}
    _run(tmp_path, "w50-s0", "weighted", 0.5, 0, _metrics(0.5, 0.8), evals)
    _run(tmp_path, "w50-s1", "weighted", 0.5, 1, _metrics(0.7, 0.9), evals)
    _run(tmp_path, "std", "none", 0.5, 0, _metrics(0.6, 0.85), {("dual", "A40"): (0.7, 5000)})
    runs, _ = collect_confidence([tmp_path])
    assert sorted(r.variant for r in runs) == ["Standard", "W50", "W50"]
    t1 = table1(runs)
    assert "| ferry nlm/TN | Standard | 60.0 | 10.0 | 30.0 | 85.0 | 5.0 | 1 |" in t1
    assert "| ferry nlm/TN | W50 | 60.0 | 10.0 | 30.0 | 85.0 | 5.0 | 2 |" in t1  # mean over the two seeds
    t2 = table2(runs, "W50")
    assert "| Single Q. | Base | 0.80 |" in t2 and "| Single Q. | A5 | +0.10 |" in t2
    assert "| Single Q. | M5 |" not in t2  # configurations nobody ran are left out
    assert "| Dual Q. | Base | 0.90 |" in t2 and "| Dual Q. | A40 | +0.10 |" in t2
    assert "| Dual Q. | A40 | -500 |" in t2  # evaluations, against the dual Base
    t3 = table3(runs, "dual", "A40")
    assert "|  | Standard | 0.70 |" in t3 and "|  | W50 | +0.30 |" in t3


def test_report_cli_writes_the_confidence_files(tmp_path, capsys):
    _run(tmp_path / "runs", "a", "uniform", 0.9, 0, _metrics(0.5, 0.8), {("dual", "A40"): (1.0, 10)})
    out = tmp_path / "report"
    assert report_main([str(tmp_path / "runs"), "--out", str(out), "--confidence", "--quiet"]) == 0
    for name in ("confidence_table1.md", "confidence_table2.md", "confidence_table3.md", "reliability.png"):
        assert (out / name).is_file()
    assert "| ferry nlm/TN | U90 |" in (out / "confidence_table1.md").read_text()


def test_the_report_finds_the_configurations_that_were_run(tmp_path):
    """Runs evaluated with A40 (single queue) and P40 (dual queue) and no OOD training: the report
    showed "–" for them unless given --confidence-heuristic Standard --confidence-search dual-P40."""
    evals = {("gbfs", "Base"): (0.5, 4000), ("gbfs", "A40"): (0.25, 6000), ("dual", "Base"): (1.0, 900)}
    evals |= {("dual", "P40"): (1.0, 700)}
    _run(tmp_path / "runs", "std", "none", 0.5, 0, _metrics(0.6, 0.85), evals)
    rl = tmp_path / "runs" / "rl__ferry__p01__maskableppo__s1__1"  # agents.rl's run: no confidence
    rl.mkdir()
    (rl / "args.json").write_text(json.dumps({"policy": "flat", "domain": "ferry", "seed": 1}))
    out = tmp_path / "report"
    assert report_main([str(tmp_path / "runs"), "--out", str(out), "--confidence", "--quiet"]) == 0
    t2, t3 = ((out / f"confidence_table{i}.md").read_text() for i in (2, 3))
    assert "### Heuristic Standard" in t2 and "| Single Q. | A40 | -0.25 |" in t2
    assert "| Dual Q. | P40 | +0.00 |" in t2 and "| Dual Q. | P40 | -200 |" in t2
    assert "### dual queue P40" in t3 and "### single queue A40" in t3 and "| Standard | 1.00 |" in t3
    assert "unreadable" not in t2 + t3  # the RL run is not a training run, not a broken one
