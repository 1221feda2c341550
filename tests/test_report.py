"""Report tables and plots from fake run directories: the numbers (mean±std over seeds), the
bolding rules of Tables 1 and 2, CSV rows, PNGs, and "–" with a note for what is missing."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from agents.evaluation import summarize
from agents.reporting import build_report
from agents.reporting.collect import Config, collect, mean_std
from agents.reporting.tables import format_stat

LIMIT = 100
# (config, dist, seed) -> test metrics
METRICS = {
    ("learn", "hff", "n", 0): {"test_mse": 3.0, "test_mse_clip": 2.9, "test_nll": 1.5},
    ("learn", "hff", "n", 1): {"test_mse": 5.0, "test_mse_clip": 4.9, "test_nll": 1.7},
    ("learn", "hff", "tn", 0): {"test_mse": 2.0, "test_mse_clip": 2.0, "test_nll": 1.1},
    ("learn", "hff", "tn", 1): {"test_mse": 2.2, "test_mse_clip": 2.2, "test_nll": 1.3},
    # within 0.1 of each other: nothing bold
    ("fixed", "none", "n", 0): {"test_mse": 1.00, "test_mse_clip": 1.05, "test_nll": 2.0},
    ("fixed", "none", "n", 1): {"test_mse": 1.02, "test_mse_clip": 1.07, "test_nll": 2.0},
    ("fixed", "none", "tn", 0): {"test_mse": 1.04, "test_mse_clip": 1.04, "test_nll": 2.0},
    ("fixed", "none", "tn", 1): {"test_mse": 1.06, "test_mse_clip": 1.06, "test_nll": 2.0},
}
# (config, dist, clip, seed) -> evaluations per problem (None: unsolved)
EVALS = {
    ("learn", "hff", "n", False, 0): [40, None],
    ("learn", "hff", "n", False, 1): [20, 60],
    ("learn", "hff", "n", True, 0): [40, 90],
    ("learn", "hff", "n", True, 1): [20, 60],
    ("learn", "hff", "tn", False, 0): [30, 50],
    ("learn", "hff", "tn", False, 1): [10, 30],
    ("fixed", "none", "n", False, 0): [None, None],
    ("fixed", "none", "n", False, 1): [None, 50],
    ("fixed", "none", "n", True, 0): [80, None],
    ("fixed", "none", "n", True, 1): [70, 50],
    # fixed/none TN is not evaluated: "–"
}


def _write_eval(
    directory: Path, evaluations: list[int | None], run: Path | None, clip: bool, domain: str
) -> None:
    results = []
    for i, e in enumerate(evaluations):
        result = {
            "problem": f"p{i:02d}.pddl",
            "solved": e is not None,
            "status": "solved" if e is not None else "limit",
            "plan_length": 7 if e is not None else None,
            "evaluations": e if e is not None else LIMIT,
            "expansions": 1,
            "generated": 1,
            "seconds": 0.01,
            "plan": [],
        }
        results.append(result)
        (directory / "problems").mkdir(parents=True, exist_ok=True)
        (directory / "problems" / f"p{i:02d}.json").write_text(json.dumps(result))
    summary = {
        "run": str(run) if run else None,
        "heuristic": "hff" if run is None else ("learned+clip" if clip else "learned"),
        "domain": domain,
        "split": "test",
        "clip": clip,
        **summarize(results, LIMIT),
        "wall_seconds": 0.1,
    }
    (directory / "summary.json").write_text(json.dumps(summary))


def _write_run(
    root: Path, domain: str, sigma: str, residual: str, dist: str, seed: int, metrics: dict | None
):
    from torch.utils.tensorboard import SummaryWriter

    run = root / f"{domain}__nlm__{dist}__{sigma}__{residual}__s{seed}"
    run.mkdir(parents=True)
    args = {"dist": dist, "model": "nlm", "domain": domain, "sigma": sigma, "residual": residual}
    args |= {"bound": "lmcut", "seed": seed, "steps": 30, "data": "data/fake"}
    (run / "args.json").write_text(json.dumps(args))
    if metrics is not None:
        full = {"test_states": 10, "test_problems": 2, **metrics}
        full |= {"test_hff_mse": 9.77, "test_lmcut_mse": 11.1, "best_val_mse": 1.0, "steps": 30}
        (run / "metrics.json").write_text(json.dumps(full))
    writer = SummaryWriter(str(run))
    for step in (10, 20, 30):
        writer.add_scalar("val/mse", (2.0 + seed) / step, step)
    writer.close()
    return run


@pytest.fixture(scope="module")
def fake_runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report-runs")
    runs = {}
    for (sigma, residual, dist, seed), metrics in METRICS.items():
        runs[sigma, residual, dist, seed] = _write_run(
            root / "runs", "ferry", sigma, residual, dist, seed, metrics
        )
    for (sigma, residual, dist, clip, seed), evaluations in EVALS.items():
        run = runs[sigma, residual, dist, seed]
        _write_eval(run / "eval" / ("test-clip" if clip else "test"), evaluations, run, clip, "ferry")
    _write_eval(root / "baselines" / "ferry__hff" / "eval" / "test", [60, None], None, False, "ferry")
    # gripper: an unfinished N run (no metrics), a finished one, no evaluations, no baseline
    _write_run(root / "runs", "gripper", "learn", "hff", "n", 0, None)
    _write_run(
        root / "runs",
        "gripper",
        "learn",
        "hff",
        "n",
        1,
        {"test_mse": 3.65, "test_mse_clip": 3.6, "test_nll": 1.0},
    )
    return root


@pytest.fixture(scope="module")
def report(fake_runs):
    return build_report(
        [fake_runs / "runs"], fake_runs / "report", split="test", baselines=[fake_runs / "baselines"]
    )


def _row(markdown: str, first: str, second: str | None = None) -> list[str]:
    for line in markdown.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 1 and cells[0] == first and (second is None or cells[1] == second):
            return cells
    raise AssertionError(f"no row {first} {second} in\n{markdown}")


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def test_mean_std_and_format():
    assert mean_std([3.0, 5.0]) == (4.0, math.sqrt(2))
    assert mean_std([3.0, 5.0], ddof=0) == (4.0, 1.0)
    assert mean_std([7.0]) == (7.0, 0.0)
    assert format_stat(3.7345, 0.7, "mse") == "3.73±0.70"
    assert format_stat(8.9e8, 1.8e8, "mse") == "(8.9±1.8)e8"
    assert format_stat(2690.4, 2128.2, "evaluations") == "2690±2128"
    assert format_stat(1.0, 0.0, "coverage") == "1"
    assert (
        format_stat(0.845, 0.19, "coverage") == "0.84±0.19"
        or format_stat(0.845, 0.19, "coverage") == "0.85±0.19"
    )


def test_table1_numbers_and_bold(report):
    header = _row(report.table1, "domain", "metric")
    assert header[:4] == ["domain", "metric", "hFF", "hLMcut"]
    assert header[4:] == ["learn/hFF N", "learn/hFF TN", "fixed/none N", "fixed/none TN"]  # the paper's order
    mse = _row(report.table1, "ferry", "MSE")
    assert mse[2:4] == ["9.77", "11.10"]
    assert mse[4] == "4.00±1.41"  # N: mean and sample std of 3.0 and 5.0
    assert mse[5] == "**2.10±0.14**"  # TN beats N+clip (3.90) by more than 0.1
    assert mse[6] == "1.01±0.01" and mse[7] == "1.05±0.01"  # gap 0.04 < 0.1: nothing bold
    clip = _row(report.table1, "", "+clip")
    assert clip[4] == "3.90±1.41" and clip[5] == ""  # +clip only under N
    assert clip[6] == "1.06±0.01"


def test_table1_missing_and_unfinished(report):
    gripper = _row(report.table1, "gripper", "MSE")
    assert gripper[2:] == ["9.77", "11.10", "3.65†", "–", "–", "–"]  # one of two seeds finished
    assert "no metrics.json (unfinished) in gripper__nlm__n__learn__hff__s0" in report.table1
    assert "† computed over fewer seeds" in report.table1
    assert "gripper learn/hFF TN: no runs" in report.table1


def test_table2_numbers_and_bold(report):
    header = _row(report.table2, "domain")
    assert header[1:3] == ["problems", "hFF"]
    assert header[3:6] == ["learn/hFF N", "learn/hFF N+clip", "learn/hFF TN"]
    assert "Ratio of solved instances under 10^2 evaluations" in report.table2
    lines = report.table2.splitlines()
    split = next(i for i, line in enumerate(lines) if "Average node evaluations" in line)
    coverage = _row("\n".join(lines[:split]), "ferry")
    evaluations = _row("\n".join(lines[split:]), "ferry")
    assert coverage[1] == evaluations[1] == "2"  # the figures of the row stand on 2 problems each
    coverage, evaluations = coverage[1:], evaluations[1:]
    assert coverage[1] == "0.50" and evaluations[1] == "80"  # hFF: 60 and the limit 100
    # learn/hFF: N .5/1; N+clip 1/1; TN 1/1 -> coverage tie broken by fewer evaluations (TN)
    assert coverage[2:5] == ["0.75±0.35", "1", "**1**"]
    assert evaluations[2:5] == ["55±21", "52±18", "**30±14**"]  # (70, 40), (65, 40), (40, 20)
    # fixed/none: TN not evaluated
    assert coverage[5:8] == ["0.25±0.35", "**0.75±0.35**", "–"]
    assert evaluations[5:8] == ["88±18", "**75±21**", "–"]  # (100, 75), (90, 60)
    assert "fixed/none TN: no eval/test" in report.table2
    gripper_cov = _row("\n".join(lines[:split]), "gripper")
    assert gripper_cov[2] == "–" and "gripper: no hFF baseline" in report.table2


def test_csv_rows(report, fake_runs):
    rows = _csv(fake_runs / "report" / "table1.csv")
    assert set(rows[0]) >= {"domain", "config", "dist", "metric", "mean", "std", "n_seeds"}
    (n,) = [
        r
        for r in rows
        if (r["domain"], r["config"], r["dist"], r["metric"]) == ("ferry", "learn/hFF", "N", "mse")
    ]
    assert float(n["mean"]) == 4.0 and math.isclose(float(n["std"]), math.sqrt(2)) and n["n_seeds"] == "2"
    assert n["bold"] == "0"
    (tn,) = [
        r
        for r in rows
        if (r["domain"], r["config"], r["dist"], r["metric"]) == ("ferry", "learn/hFF", "TN", "mse")
    ]
    assert tn["bold"] == "1"
    (missing,) = [
        r
        for r in rows
        if (r["domain"], r["config"], r["dist"], r["metric"]) == ("gripper", "learn/hFF", "N", "mse")
    ]
    assert missing["mean"] == "3.65" and missing["n_seeds"] == "1" and missing["n_runs"] == "2"
    (absent,) = [
        r
        for r in rows
        if (r["domain"], r["config"], r["dist"], r["metric"]) == ("gripper", "learn/hFF", "TN", "mse")
    ]
    assert absent["mean"] == "" and absent["n_seeds"] == "0" and absent["n_runs"] == "0"
    (hff,) = [r for r in rows if (r["domain"], r["dist"]) == ("ferry", "hFF")]
    assert math.isclose(float(hff["mean"]), 9.77)
    rows2 = _csv(fake_runs / "report" / "table2.csv")
    key = ("ferry", "learn/hFF", "TN", "mean_evaluations")
    (tn2,) = [r for r in rows2 if (r["domain"], r["config"], r["dist"], r["metric"]) == key]
    assert (
        float(tn2["mean"]) == 30.0 and math.isclose(float(tn2["std"]), math.sqrt(200)) and tn2["bold"] == "1"
    )
    (base,) = [r for r in rows2 if (r["domain"], r["dist"], r["metric"]) == ("ferry", "hFF", "coverage")]
    assert float(base["mean"]) == 0.5


def test_nll_row(fake_runs, tmp_path):
    report = build_report([fake_runs / "runs"], tmp_path, split="test", nll=True, plots=False)
    nll = _row(report.table1, "", "NLL")
    assert nll[4:6] == ["1.60±0.14", "1.20±0.14"]  # N and TN test NLL; no bolding rule for NLL
    assert not list(tmp_path.glob("*.png"))


def test_files_and_plots(report, fake_runs):
    out = fake_runs / "report"
    for name in ("table1.md", "table1.csv", "table2.md", "table2.csv", "coverage_nlm.png", "val_mse_nlm.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
        assert out / name in report.files
    assert (out / "coverage_nlm.png").read_bytes()[:4] == b"\x89PNG"


def test_collect_duplicate_seed_and_missing_path(fake_runs, tmp_path):
    col = collect([fake_runs / "runs"], "test", [fake_runs / "baselines"])
    assert col.baselines["ferry"]["coverage"] == 0.5
    assert sorted(len(runs) for runs in col.groups.values()) == [2] * 5
    # the same seed twice (say, a restarted run under a new name): counted once, the finished one
    import shutil

    shutil.copytree(fake_runs / "runs" / "ferry__nlm__n__learn__hff__s0", tmp_path / "again")
    (tmp_path / "again" / "metrics.json").unlink()
    col = collect([fake_runs / "runs", tmp_path], "test")
    assert sorted(len(runs) for runs in col.groups.values()) == [2] * 5
    assert any("seed 0 also in" in note for note in col.notes)
    assert collect([tmp_path / "absent"], "test").notes  # a missing path is a note, not a crash


def test_empty_report_and_cli(tmp_path):
    cmd = [sys.executable, "-m", "agents.report", str(tmp_path), "--out", str(tmp_path / "r"), "--no-plots"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "No runs found" in out.stdout
    assert (tmp_path / "r" / "table1.csv").read_text().startswith("table,model,domain")


def test_figure_titles_fit_one_domain_panel():
    """With one domain the figure is one panel wide: the title wraps instead of being clipped."""
    from agents.reporting.plots import _panels, _pyplot, fit_title

    plt = _pyplot()
    fig, _ = _panels(plt, 1)
    text = fit_title(fig, "linear regression (LR): coverage under an evaluation budget (plan-reduced)")
    fig.tight_layout()
    fig.canvas.draw()
    box = text.get_window_extent()
    assert "\n" in text.get_text()
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width and box.y1 <= fig.bbox.height
    plt.close(fig)


def test_rl_runs_are_skipped_with_a_note_not_called_unreadable(fake_runs, tmp_path):
    rl = tmp_path / "rl__ferry__ferry-l3-c3-s1__maskableppo__s1__1"
    rl.mkdir()
    (rl / "args.json").write_text(json.dumps({"policy": "flat", "domain": "ferry", "total_timesteps": 256}))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "args.json").write_text("{not json")
    col = collect([fake_runs, tmp_path], "plan")
    assert not any(rl.name in n and "unreadable" in n for n in col.notes)
    assert any("not agents.supervised runs" in n and rl.name in n for n in col.notes)
    assert any(str(broken) in n and "unreadable" in n for n in col.notes)


def test_value_learning_runs_get_their_own_table_beside_supervised_ones(fake_runs, tmp_path):
    """An `agents.rl_value` run (args.json "app": "rl_value") is tabulated as its own model, N+clip
    apart from N, and never grouped with the supervised runs of the same model and head."""
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(fake_runs, runs)
    for clip in (False, True):
        rl = _write_run(runs / ("clip" if clip else "plain"), "ferry", "fixed", "hff", "n", 0, None)
        args = json.loads((rl / "args.json").read_text())
        (rl / "args.json").write_text(json.dumps(args | {"app": "rl_value", "clip": clip}))
    col = collect([runs], "plan")
    assert {"nlm RL", "nlm RL+clip"} <= set(col.models())
    supervised = [r for key, group in col.groups.items() if key.model == "nlm" for r in group]
    assert supervised and all("app" not in r.args for r in supervised)
    assert [r.path.parent.name for r in col.runs("nlm RL", "ferry", Config("fixed", "hff"), "n")] == ["plain"]
    from agents.reporting.plots import _file_part

    assert _file_part("nlm RL+clip") == "nlm-RL-clip"  # the plots' file names: no spaces


def test_runs_are_grouped_by_loss_and_data_set(tmp_path):
    """A rank-loss run of another data set landed in the "N" cell beside the NLL runs (and their
    hFF column), because neither the loss nor the data set was part of a group."""
    runs = tmp_path / "runs"
    plain = _write_run(runs / "a", "ferry", "fixed", "none", "n", 0, {"test_mse": 1.0, "test_mse_clip": 1.0})
    rank = _write_run(runs / "b", "ferry", "fixed", "none", "n", 0, {"test_mse": 9.0, "test_mse_clip": 9.0})
    args = json.loads((rank / "args.json").read_text())
    (rank / "args.json").write_text(json.dumps(args | {"loss": "rank", "data": "data/ipc"}))
    metrics = json.loads((rank / "metrics.json").read_text())
    (rank / "metrics.json").write_text(json.dumps(metrics | {"test_hff_mse": 2.5}))
    col = collect([runs], "test")
    assert not any("seed 0 also in" in n for n in col.notes)  # two groups, not one seed twice
    assert col.domains("nlm") == ["ferry (data/fake)", "ferry (data/ipc)"]
    assert [c.label for c in col.configs("nlm")] == ["fixed/none", "fixed/none rank"]
    assert [
        r.path for r in col.runs("nlm", "ferry (data/ipc)", Config("fixed", "none", loss="rank"), "n")
    ] == [rank]
    assert col.runs("nlm", "ferry (data/ipc)", Config("fixed", "none"), "n") == []
    report = build_report([runs], tmp_path / "report", split="test", plots=False)
    rows = [line for line in report.table1.splitlines() if line.startswith("| ferry")]
    assert rows[0].startswith("| ferry (data/fake) | MSE | 9.77 |") and "| 1.00 | – | – | – |" in rows[0]
    assert rows[1].startswith("| ferry (data/ipc) | MSE | 2.50 |") and "| – | – | 9.00 | – |" in rows[1]
    assert plain.name == rank.name  # same run names: the names alone cannot tell them apart


def test_a_ranking_run_reports_its_pairwise_accuracy(tmp_path):
    """Table 1 shows a ranking run's test pairwise accuracy ("pairs ranked") under its "rank"
    column, and no such row for NLL runs alone (issue 60)."""
    runs = tmp_path / "runs"
    _write_run(runs / "a", "ferry", "fixed", "none", "n", 0, {"test_mse": 1.0, "test_mse_clip": 1.0})
    rank = _write_run(runs / "b", "ferry", "fixed", "none", "n", 0, {"test_mse": 9.0, "test_mse_clip": 9.0})
    args = json.loads((rank / "args.json").read_text())
    (rank / "args.json").write_text(json.dumps(args | {"loss": "rank"}))
    metrics = json.loads((rank / "metrics.json").read_text())
    (rank / "metrics.json").write_text(json.dumps(metrics | {"test_pair_accuracy": 0.875}))
    report = build_report([runs], tmp_path / "report", split="test", plots=False)
    header = next(line for line in report.table1.splitlines() if line.startswith("| domain"))
    pairs = _row(report.table1, "", "pairs ranked")
    column = [c.strip() for c in header.strip("|").split("|")].index("fixed/none rank N")
    assert pairs[column] == "0.88" and not any(pairs[k] for k in range(2, len(pairs)) if k != column)
    (rank / "args.json").write_text(json.dumps(args))  # both NLL runs: no ranking row
    plain = build_report([runs / "a"], tmp_path / "plain", split="test", plots=False)
    assert "pairs ranked" not in plain.table1
