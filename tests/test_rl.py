"""Smoke test of the RL example: `python -m agents.rl` trains MaskablePPO for a few hundred steps."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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
    (run,) = (tmp_path / "runs").iterdir()
    assert run.name.startswith("rl__ferry__ferry-l3-c3-s1__maskableppo__s1__")
    assert list(run.glob("events.out.tfevents.*")), "no TensorBoard events"
    assert (run / "model.zip").is_file()
    args = json.loads((run / "args.json").read_text())
    assert args["total_timesteps"] == 256
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["timesteps"] >= 256
    assert 0.0 <= metrics["success_rate"] <= 1.0
