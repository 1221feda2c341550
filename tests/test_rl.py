"""Smoke tests of `python -m agents.rl`: MaskablePPO for a few hundred steps, on one problem with the
flat MLP policy (the default) and on a split with the relational policy."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.problems import ROOT


def test_maskable_ppo_smoke(tmp_path):
    env = {**os.environ, "PDDLGYM_SL_CACHE": str(tmp_path / "cache")}
    cmd = [
        sys.executable,
        "-m",
        "agents.rl",
        "--total-timesteps",
        "256",
        "--num-envs",
        "2",
        "--n-steps",
        "64",
        "--batch-size",
        "32",
        "--n-epochs",
        "2",
        "--eval-episodes",
        "2",
        "--max-episode-steps",
        "50",
        "--log-dir",
        str(tmp_path / "runs"),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "MaskablePPO" in out.stderr and "256/256" in out.stderr, "no progress bar"
    (run,) = (tmp_path / "runs").iterdir()
    assert run.name.startswith("rl__ferry__ferry-l3-c3-s1__maskableppo__s1__")
    assert re.fullmatch(r".*__s1__\d{8}-\d{6}", run.name)  # every command's run-name format (issue 60)
    assert list(run.glob("events.out.tfevents.*")), "no TensorBoard events"
    assert (run / "model.zip").is_file()
    args = json.loads((run / "args.json").read_text())
    assert args["total_timesteps"] == 256
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["timesteps"] >= 256
    assert 0.0 <= metrics["success_rate"] <= 1.0


def test_unknown_problem_is_a_message_with_close_names_not_a_traceback(tmp_path, capsys):
    from agents.apps.rl import cli

    runs = tmp_path / "runs"
    assert cli(["--problem", "ferry-l3-c3-s99", "--log-dir", str(runs), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown problem 'ferry-l3-c3-s99'; close names: ferry-l3-c3-s9")
    assert "Traceback" not in err
    assert not runs.exists()  # checked before the run directory is made


@pytest.mark.slow  # half a minute; test_maskable_ppo_smoke runs the command
def test_relational_policy_over_a_split_smoke(tmp_path):
    """--policy relational trains on problems of different sizes, evaluates the greedy policy on
    held-out ones against optimal plan lengths, and --load evaluates the saved policy again."""
    from pddlgym_sl.fd import run_fast_downward

    env = {**os.environ, "PDDLGYM_SL_CACHE": str(tmp_path / "cache")}
    common = ["--policy", "relational", "--eval-problems", "3", "--log-dir", str(tmp_path / "runs")]
    train = [
        *("--train-problems", "6", "--total-timesteps", "256", "--num-envs", "2", "--n-steps", "64"),
        *("--batch-size", "32", "--n-epochs", "2", "--hidden", "16", "--layers", "2", "--quiet"),
    ]
    cmd = [sys.executable, "-m", "agents.rl", *common, *train]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    (run,) = (tmp_path / "runs").iterdir()
    assert run.name.startswith("rl__ferry__train__relational-maskableppo__s1__")
    assert list(run.glob("events.out.tfevents.*")), "no TensorBoard events"
    assert json.loads((run / "policy.json").read_text())["hidden"] == 16
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["timesteps"] >= 256 and metrics["train_problems"] == 6 and metrics["eval_problems"] == 3
    assert 0.0 <= metrics["success_rate"] <= 1.0
    episodes = json.loads((run / "episodes-val.json").read_text())
    assert len(episodes) == 3
    problems = tmp_path / "cache" / "ferry" / "val"
    for e in episodes:  # the optimal lengths are Fast Downward's A* + LM-cut plan lengths
        fd = run_fast_downward(
            ROOT / "domains" / "ferry" / "domain.pddl", problems / e["problem"], "astar(lmcut())"
        )
        assert e["optimal"] == len(fd.plan)
        assert e["solved"] is False or e["length"] >= e["optimal"]

    again = subprocess.run(
        [sys.executable, "-m", "agents.rl", *common, "--load", str(run)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    reloaded = json.loads((run / "metrics-val.json").read_text())
    assert {k: reloaded[k] for k in ("success_rate", "mean_plan_length")} == {
        k: metrics[k] for k in ("success_rate", "mean_plan_length")
    }
