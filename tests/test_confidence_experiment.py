"""``experiments/confidence_tables.py`` runs the commands the README names, with the paper's
configurations (Heller et al., Tables 2-3), and skips what is finished."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from experiments import confidence_tables as experiment


@pytest.fixture
def commands(monkeypatch) -> list[list[str]]:
    recorded: list[list[str]] = []
    monkeypatch.setattr(experiment, "run", lambda cmd, log=None: recorded.append(cmd))
    return recorded


def _args(tmp_path: Path) -> argparse.Namespace:
    return argparse.Namespace(
        data=tmp_path / "data", nfd_data=tmp_path / "nfd", runs=tmp_path / "runs", steps=800,
        batch_size=64, problems=18, limit=10_000,
    )  # fmt: skip


def test_training_flags_follow_head_and_variant(commands, tmp_path):
    args = _args(tmp_path)
    experiment.train("relational", "ferry", "cat", "W90", args)
    experiment.train("nfd", "gripper", "tn", "Standard", args)
    cat, tn = commands
    assert cat[0] == "agents.supervised" and cat[cat.index("--residual") + 1] == "none"
    assert cat[cat.index("--ood") + 1 :][:3] == ["weighted", "--ood-ratio", "0.9"]
    assert cat[cat.index("--model") + 1] == "nlm" and cat[cat.index("--test-split") + 1] == "test-reduced"
    assert "--ood" not in tn and tn[tn.index("--residual") + 1] == "hff"
    assert tn[tn.index("--model") + 1] == "mlp" and tn[tn.index("--data") + 1] == str(args.nfd_data)


def test_a_finished_run_is_kept_and_an_interrupted_one_resumed(commands, tmp_path):
    args = _args(tmp_path)
    done = experiment.run_dir("nfd", "ferry", "cat", "U50", args)
    done.mkdir(parents=True)
    (done / "metrics.json").write_text("{}")
    half = experiment.run_dir("nfd", "ferry", "cat", "U90", args)
    half.mkdir(parents=True)
    (half / "args.json").write_text("{}")
    experiment.train("nfd", "ferry", "cat", "U50", args)
    experiment.train("nfd", "ferry", "cat", "U90", args)
    assert commands == [["agents.supervised", "--resume", str(half), "--quiet"]]


@pytest.mark.parametrize(
    "config,flags",
    [
        (("gbfs", None, None, False), []),
        (("gbfs", "mean", 5, False), ["--prune", "mean", "--threshold", "5"]),
        (("dual", "adaptive", 20, True), ["--prune", "adaptive", "--threshold", "20", "--prioritize"]),
    ],
)
def test_search_configurations(commands, tmp_path, config, flags):
    experiment.evaluate("relational", "ferry", "tn", "W50", config, _args(tmp_path))
    (cmd,) = commands
    assert cmd[cmd.index("--search") + 1] == config[0]
    assert cmd[cmd.index("--problems") + 1] == "18"
    assert cmd[cmd.index("--problems") + 2 :] == flags


def test_the_tables_cover_the_papers_configurations():
    names = {
        ("M" if p == "mean" else "P" if prio else "A") + str(x) if p else "Base"
        for _, p, x, prio in experiment.TABLE2
    }
    assert names == {"Base", "M5", "M40", "A5", "A40", "M80", "A80", "P20", "P80"}
    assert [s for s, *_ in experiment.TABLE2].count("dual") == 7
    assert set(experiment.VARIANTS) == {"Standard", "U50", "U90", "W50", "W90"}


def test_finished_runs_are_stored_per_setting_and_table_only_reports_the_store(commands, tmp_path):
    """A finished run goes into its setting's part of the store; ``--table-only`` alone restores the
    store's runs into a temporary folder and reports them; an empty store is refused in one line."""
    from experiments import results_store

    args = _args(tmp_path)
    args.store, args.no_store, args.out = tmp_path / "store", False, None
    with pytest.raises(SystemExit, match="holds no finished run yet"):
        experiment.report_store(args)
    done = experiment.run_dir("nfd", "ferry", "cat", "U50", args)
    done.mkdir(parents=True)
    for name in ("args.json", "metrics.json"):
        (done / name).write_text("{}")
    experiment.save_store(args)
    assert set(results_store.read_area(args.store / "nfd", "runs")) == {
        "ferry-cat-U50/args.json",
        "ferry-cat-U50/metrics.json",
    }
    experiment.report_store(args)
    report = commands[-1]
    assert report[:3] == ["agents.report", report[1], "--confidence"] and report[1].endswith("/runs")


def test_table_only_with_out_copies_the_confidence_report_alone(monkeypatch, tmp_path, capsys):
    """``--table-only --out DIR`` copies the confidence tables and the reliability diagram into DIR
    (not the accuracy tables the report writes beside them) and prints each table once."""
    from experiments import results_store

    def fake_report(cmd: list[str], log=None) -> None:
        out = Path(cmd[cmd.index("--out") + 1])
        for name in (*experiment.CONFIDENCE_TABLES, "reliability.png", "table1.md"):
            (out / name).write_text(f"content of {name}\n")
        print("# Table 1: test accuracy", file=log)

    monkeypatch.setattr(experiment, "run", fake_report)
    args = _args(tmp_path)
    args.store, args.no_store, args.out = tmp_path / "store", False, tmp_path / "figures"
    done = experiment.run_dir("nfd", "ferry", "cat", "U50", args)
    done.mkdir(parents=True)
    for name in ("args.json", "metrics.json"):
        (done / name).write_text("{}")
    experiment.save_store(args)
    assert results_store.read_area(args.store / "nfd", "runs")
    experiment.report_store(args)
    assert sorted(p.name for p in args.out.iterdir()) == sorted(
        [*experiment.CONFIDENCE_TABLES, "reliability.png"]
    )
    printed = capsys.readouterr().out
    assert printed.count("content of confidence_table1.md") == 1 and "test accuracy" not in printed
