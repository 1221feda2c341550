"""``experiments/paper_tables.py`` runs the paper's main cells with the stated budget, seeds
outermost, through commands that our command lines accept, and goes on past a failed step."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import paper_tables as experiment


def _args(tmp_path: Path, **kw) -> argparse.Namespace:
    base = dict(domains=["ferry", "gripper"], models=["nlm", "hgn"], jobs=2, backend="local", address=None,
                data=tmp_path / "data", out=tmp_path / "runs")  # fmt: skip
    return argparse.Namespace(**{**base, **kw})


def _flag(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


def test_labels_come_per_domain_as_train_val_and_test_reduced(tmp_path):
    cmds = experiment.label_commands(_args(tmp_path))
    assert [(_flag(c, "--domain"), c[3:5]) for c in cmds] == [
        (d, stage) for d in ("ferry", "gripper") for stage in (["--split", "train"], ["--split", "val"],
                                                                ["--preset", "test-reduced"])
    ]  # fmt: skip
    assert all(_flag(c, "--out") == str(tmp_path / "data") and _flag(c, "--jobs") == "2" for c in cmds)


def test_every_cell_runs_with_its_models_budget_seed_zero_first(tmp_path):
    cmds = experiment.cell_commands(_args(tmp_path))
    seeds = [int(_flag(c, "--seeds")) for c in cmds]
    assert seeds == sorted(seeds) and seeds.count(0) == 8 and seeds.count(1) == 8 and seeds.count(2) == 4
    for c in cmds:
        steps, n_seeds = experiment.BUDGETS[_flag(c, "--models")]
        assert int(_flag(c, "--steps")) == steps and int(_flag(c, "--seeds")) < n_seeds
        assert _flag(c, "--split") == "plan" and _flag(c, "--test-split") == "test-reduced"
        assert "--problems" not in c  # all 100 plan problems
    cells = {(_flag(c, "--sigmas"), _flag(c, "--residuals"), _flag(c, "--dists")) for c in cmds}
    assert cells == set(experiment.CELLS.values())


def test_ray_backend_is_passed_on(tmp_path):
    cmd = experiment.cell_commands(_args(tmp_path, backend="ray", address="auto"))[0]
    assert cmd[cmd.index("--backend") :][:4] == ["--backend", "ray", "--address", "auto"]
    assert "--jobs" not in cmd


def test_the_sweep_accepts_the_commands(tmp_path):
    cmd = experiment.cell_commands(_args(tmp_path, models=["linear"]))[0]
    cmd = [*cmd, "--dry-run"]
    out = subprocess.run([sys.executable, "-m", *cmd], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "linear" in out.stdout and "ferry" in out.stdout


def test_a_failed_step_does_not_stop_the_others_and_finished_ones_are_stored(monkeypatch, tmp_path, capsys):
    ran: list[list[str]] = []
    data, store = tmp_path / "data", tmp_path / "store"
    earlier = tmp_path / "earlier" / "ferry" / "val" / "records" / "kept.json"  # an earlier checkout's
    earlier.parent.mkdir(parents=True)
    earlier.write_text("{}")
    experiment.results_store.save(store, data=tmp_path / "earlier")

    def fake_run_command(cmd, cwd, env):
        ran.append(cmd)
        assert (data / "ferry" / "val" / "records" / "kept.json").is_file()  # restored before the first
        record = data / "ferry" / "train" / "records" / f"slot{len(ran)}.json"
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text("{}")
        return 1 if len(ran) == 1 else 0

    monkeypatch.setattr(experiment, "run_command", fake_run_command)
    argv = [
        "paper_tables.py",
        "--domains",
        "ferry",
        "--labels-only",
        "--data",
        str(data),
        "--store",
        str(store),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as stop:
        experiment.main()
    assert stop.value.code == 1 and len(ran) == 3
    assert (
        "failed: python -m pddlgym_sl.data.generate --domain ferry --split train" in capsys.readouterr().err
    )
    stored = sorted(p for p in experiment.results_store.read_area(store, "data") if "/train/" in p)
    assert stored == [f"ferry/train/records/slot{i}.json" for i in (1, 2, 3)]  # the failed step's work too


def test_the_report_has_the_nll_and_sets_ours_beside_the_paper(tmp_path):
    table, beside = experiment.report_commands(_args(tmp_path))
    assert (
        table[0] == "agents.report"
        and "--nll" in table
        and _flag(table, "--out") == str(tmp_path / "runs/report")
    )
    assert beside[:2] == ["experiments.paper_compare", str(tmp_path / "runs/report")]
    assert _flag(beside, "--out") == str(tmp_path / "runs/report/beside_paper.md")


def test_blocksworld_is_labelled_up_to_13_blocks():
    import domains

    cmds = experiment.label_commands(_args(Path("x"), domains=["blocksworld", "ferry"]))
    limits = {(_flag(c, "--domain"), c[4]): _flag(c, "--limit") if "--limit" in c else None for c in cmds}
    assert limits == {
        ("blocksworld", "train"): "342", ("blocksworld", "val"): "99", ("blocksworld", "test-reduced"): None,
        ("ferry", "train"): None, ("ferry", "val"): None, ("ferry", "test-reduced"): None,
    }  # fmt: skip
    for split in ("train", "val"):
        specs = domains.split_specs("blocksworld", split)
        kept = {dict(s.params)["blocks"] for s in specs[: experiment.LABEL_LIMITS[("blocksworld", split)]]}
        assert kept == set(range(5, 14)) and dict(specs[len(specs) - 1].params)["blocks"] == 16


def test_a_signal_during_a_steps_save_still_leaves_the_step_in_the_store(monkeypatch, tmp_path):
    data, store = tmp_path / "data", tmp_path / "store"
    saves: list[bool] = []
    real_save = experiment.results_store.save

    def fake_run_command(cmd, cwd, env):
        record = data / "ferry" / "train" / "records" / "slot1.json"
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text("{}")
        return 0

    def save_cut_short_once(*args, **kw):  # the signal lands inside the first step's copy
        saves.append(True)
        if len(saves) == 1:
            raise KeyboardInterrupt
        return real_save(*args, **kw)

    def interrupted(exc, kept, *a, now=False):  # the real one ends the process with os._exit
        raise SystemExit(130)

    monkeypatch.setattr(experiment, "run_command", fake_run_command)
    monkeypatch.setattr(experiment.results_store, "save", save_cut_short_once)
    monkeypatch.setattr(experiment, "interrupted", interrupted)
    argv = ["paper_tables.py", "--domains", "ferry", "--labels-only", "--data", str(data), "--store"]
    monkeypatch.setattr(sys, "argv", [*argv, str(store)])
    with pytest.raises(SystemExit) as stop:
        experiment.main()
    assert stop.value.code == 130 and len(saves) == 2  # the step's cut-short save, then the handler's
    assert "ferry/train/records/slot1.json" in experiment.results_store.read_area(store, "data")
