"""Training CLI: smoke runs of every model x distribution, run-directory contents, checkpoints that
load without unpickling, resume == uninterrupted, config presets, and learning beyond hFF."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from agents.apps.supervised import Args, load_config_defaults, train
from agents.checkpoint import CheckpointError
from pddlgym_sl.data.dataset import load_split
from pddlgym_sl.errors import ConfigError

_FAST_SMOKE = {("nlm", "tn"), ("linear", "tn"), ("wl", "tn")}  # the rest: -m slow (the N head and the HGN
# train in many other tests)


@pytest.mark.parametrize(
    ("model", "dist"),
    [
        pytest.param(m, d, id=f"{d}-{m}", marks=() if (m, d) in _FAST_SMOKE else pytest.mark.slow)
        for m in ("nlm", "hgn", "linear", "wl")
        for d in ("n", "tn")
    ],
)
def test_cli_smoke(model, dist, tiny_dataset, tmp_path):
    cmd = [sys.executable, "-m", "agents.supervised", "--model", model, "--dist", dist]
    cmd += ["--data", str(tiny_dataset), "--steps", "4", "--val-every", "2", "--batch-size", "16"]
    cmd += ["--runs", str(tmp_path), "--quiet", "--name", "run"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "hFF" in out.stdout and "LM-cut" in out.stdout and "test MSE" in out.stdout
    run = tmp_path / "run"
    assert {"args.json", "model.json", "best.safetensors", "last.pt", "metrics.json"} <= {
        p.name for p in run.iterdir()
    }
    metrics = json.loads((run / "metrics.json").read_text())
    for key in ("test_mse", "test_mse_clip", "test_nll", "test_hff_mse", "test_lmcut_mse"):
        assert np.isfinite(metrics[key])
    config = json.loads((run / "model.json").read_text())
    assert config["head"]["dist"] == dist and config["model"]["name"] == model


def test_run_directory_logs_and_checkpoints(tiny_dataset, tmp_path):
    run = train(Args(data=tiny_dataset, runs=tmp_path, steps=20, val_every=10, batch_size=32, quiet=True))
    assert run.name.startswith("ferry__nlm__tn__learn__hff__s0__")
    events = EventAccumulator(str(run))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    expected = {"train/nll", "train/mse", "train/sigma", "train/lr", "train/steps_per_s"}
    expected |= {"val/mse", "val/mse_clip", "val/nll", "test/mse"}
    assert expected <= tags
    assert "hyperparameters/text_summary" in events.Tags()["tensors"]
    # the HParams plugin: flags and final metrics in the run's own event file
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    content = events.PluginTagToContent("hparams")
    data = [HParamsPluginData.FromString(c) for c in content.values()]
    experiment = next(d.experiment for d in data if d.HasField("experiment"))
    session = next(d.session_start_info for d in data if d.HasField("session_start_info"))
    assert session.hparams["dist"].string_value == "tn" and session.hparams["steps"].number_value == 20
    metric_tags = {m.name.tag for m in experiment.metric_infos}
    assert {"hparams/test_mse", "hparams/test_nll", "hparams/best_val_mse"} <= metric_tags
    assert {"hparams/test_mse", "hparams/best_val_mse"} <= tags
    assert [p.name for p in run.iterdir() if p.is_dir()] == []  # no timestamped hparams subdirectory
    state = torch.load(run / "last.pt", weights_only=True)  # no pickled code needed
    assert state["step"] == 20 and "optimizer" in state
    weights = load_file(run / "best.safetensors")
    assert set(weights) == set(state["model"])


def test_resume_gives_the_same_result(tiny_dataset, tmp_path):
    common = {"data": tiny_dataset, "batch_size": 32, "val_every": 5, "quiet": True, "model": "nlm"}
    straight = train(Args(**common, steps=20, runs=tmp_path / "a", name="run"))
    interrupted = train(Args(**common, steps=10, runs=tmp_path / "b", name="run"))
    resumed = train(Args(resume=interrupted, steps=20, quiet=True))
    assert resumed == interrupted
    a, b = load_file(straight / "best.safetensors"), load_file(resumed / "best.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)
    ma = json.loads((straight / "metrics.json").read_text())
    mb = json.loads((resumed / "metrics.json").read_text())
    assert ma.pop("wall_seconds") > 0 and mb.pop("wall_seconds") > 0  # timings differ
    assert ma == mb


def test_wall_seconds_add_up_across_resumes(tiny_dataset, tmp_path):
    """metrics.json's wall_seconds counts every call: the seconds stored at the last checkpoint
    plus the resuming call's; a state saved before the clock existed makes the total unknown."""
    from agents.checkpoint import RunClock, load_training_state, save_training_state

    common = {"data": tiny_dataset, "batch_size": 32, "val_every": 5, "quiet": True, "model": "linear"}
    run = train(Args(**common, steps=10, runs=tmp_path, name="run"))
    state = load_training_state(run / "last.pt")
    assert 0 < state[RunClock.KEY] <= json.loads((run / "metrics.json").read_text())["wall_seconds"]
    save_training_state(run / "last.pt", {**state, RunClock.KEY: 1000.0})  # as if the first call was long
    train(Args(resume=run, steps=20, quiet=True))
    assert 1000.0 < json.loads((run / "metrics.json").read_text())["wall_seconds"] < 1000.0 + 300
    del state[RunClock.KEY]
    save_training_state(run / "last.pt", state)  # a run from before the clock
    train(Args(resume=run, steps=20, quiet=True))
    assert json.loads((run / "metrics.json").read_text())["wall_seconds"] is None


def test_time_budget_stops_training_with_its_best_checkpoint(tiny_dataset, tmp_path):
    """--time-budget ends training before its steps, validating at the stop: the last checkpoint's
    step is the metrics' steps, the best weights exist, and metrics.json says what stopped it."""
    from agents.checkpoint import load_training_state

    common = {"data": tiny_dataset, "batch_size": 32, "val_every": 10**6, "quiet": True, "model": "linear"}
    run = train(Args(**common, steps=10**6, time_budget=1.0, runs=tmp_path, name="budget"))
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["stopped"] == "time_budget" and 0 < metrics["steps"] < 10**6
    assert load_training_state(run / "last.pt")["step"] == metrics["steps"]
    assert (run / "best.safetensors").is_file() and np.isfinite(metrics["test_mse"])
    short = train(Args(**common, steps=3, time_budget=600.0, runs=tmp_path, name="steps"))
    assert json.loads((short / "metrics.json").read_text())["stopped"] == "steps"


def test_learning_beats_hff_on_validation(tiny_dataset, tmp_path):
    """The TN NLM with the hFF residual learns a heuristic more accurate than hFF itself."""
    run = train(Args(data=tiny_dataset, runs=tmp_path, steps=150, val_every=25, batch_size=64, quiet=True))
    metrics = json.loads((run / "metrics.json").read_text())
    val = load_split(tiny_dataset / "ferry" / "val")
    hff_val_mse = float(np.mean((val.values["hff"] - val.h_star) ** 2))
    assert metrics["best_val_mse"] < hff_val_mse


def test_config_presets(tmp_path):
    args = load_config_defaults(["--config", "configs/gripper-hgn.yaml"])
    assert (args.domain, args.model, args.lr, args.steps) == ("gripper", "hgn", 1e-3, 40_000)
    bad = tmp_path / "bad.yaml"
    bad.write_text("dist: tn\nlearning_rate: 3\n")
    with pytest.raises(ConfigError, match="learning_rate"):
        load_config_defaults(["--config", str(bad)])
    for path in Path("configs").glob("*-*.yaml"):
        load_config_defaults(["--config", str(path)])  # every preset is valid


def test_missing_dataset_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no labelled train/val/test split in"):
        train(Args(data=tmp_path / "nothing", runs=tmp_path, steps=1, quiet=True))


def test_resume_refuses_broken_run_files(tiny_dataset, tmp_path):
    """A directory where last.pt belongs, or an args.json that is not the run's, is a
    CheckpointError naming the file, never a silent restart from step 0."""
    common = {"data": tiny_dataset, "batch_size": 32, "val_every": 5, "quiet": True, "model": "linear"}
    run = train(Args(**common, steps=5, runs=tmp_path, name="run"))
    (run / "last.pt").unlink()
    (run / "last.pt").mkdir()
    with pytest.raises(CheckpointError, match="is a directory") as info:
        train(Args(resume=run, steps=10, quiet=True))
    assert info.value.file == str(run / "last.pt")
    (run / "args.json").write_text('{"no_such_field": 1}')
    with pytest.raises(CheckpointError, match=r"args\.json"):
        train(Args(resume=run, steps=10, quiet=True))


def test_the_command_ends_by_planning_test_problems_beside_hff(tiny_dataset, tmp_path, capsys):
    """``--plan N`` (the quick start's default on its data) plans N test problems with the trained
    model and with hFF and prints both; the figures are the evaluations' summaries."""
    from agents.apps.supervised import main

    argv = [
        "--model",
        "wl",
        "--dist",
        "n",
        "--sigma",
        "fixed",
        "--residual",
        "hff",
        "--data",
        str(tiny_dataset),
    ]
    argv += [
        "--steps",
        "100",
        "--val-every",
        "50",
        "--runs",
        str(tmp_path),
        "--quiet",
        "--name",
        "run",
        "--plan",
        "2",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    learned = json.loads((tmp_path / "run" / "eval" / "test" / "summary.json").read_text())
    hff = json.loads((tmp_path / "run" / "eval" / "test-hff" / "summary.json").read_text())
    assert learned["problems"] == hff["problems"] == 2
    assert "planning 2 test problems (GBFS, at most 10,000 evaluations each):" in out
    for name, summary in (("the trained model", learned), ("hFF", hff)):
        assert f"{name:<20} solved {summary['solved']}/2" in out
    assert main([*argv[:-2], "--name", "quiet-run"]) == 0  # not the quick start's data: no planning
    assert "planning" not in capsys.readouterr().out
