"""The built wheel, installed without extras into a fresh virtual environment, is the planning
core: `python -m pddlgym_sl.plan` solves a problem and `gym.make("pddl/ferry-v1")` plays, with no
torch installed; the learning CLIs name the extra to install; the presets ship in the wheel.

Slow (it builds a wheel and installs numpy, numba, gymnasium and Fast Downward's wheel into a new
venv): deselected by default, run by CI (`.ci/run`).
"""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.problems import ROOT

pytestmark = pytest.mark.slow

GYM = """
import gymnasium as gym
import numpy as np
import pddlgym_sl
env = gym.make("pddl/ferry-v1", problems=[__import__("sys").argv[1]], obs="ilg")
obs, info = env.reset(seed=0)
obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
print("stepped", reward, info["bounds"]["lmcut"])
"""


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=1200)


def test_core_wheel_without_extras(tmp_path: Path) -> None:
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(ROOT)], ROOT
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("pddlgym_sl-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "agents/configs/ferry-nlm.yaml" in names and "domains/ferry/domain.pddl" in names

    venv.create(tmp_path / "venv", with_pip=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    installed = _run([python, "-m", "pip", "install", "--quiet", str(wheel)], tmp_path)
    assert installed.returncode == 0, installed.stderr[-3000:]
    assert _run([python, "-c", "import torch"], tmp_path).returncode != 0  # no extras came along

    planned = _run(
        [python, "-m", "pddlgym_sl.plan", "ferry", "--param", "locations=3", "--param", "cars=2"], tmp_path
    )
    assert planned.returncode == 0 and "plan (" in planned.stdout, planned.stderr[-3000:]
    problem = tmp_path / "p.pddl"
    from tests.problems import FERRY_3_2

    problem.write_text(FERRY_3_2)
    played = _run([python, "-c", GYM, str(problem)], tmp_path)
    assert played.returncode == 0 and played.stdout.startswith("stepped -1.0"), played.stderr[-3000:]
    learn = _run([python, "-m", "agents.supervised", "--help"], tmp_path)
    assert learn.returncode != 0 and "pip install 'pddlgym-sl[learn]'" in learn.stderr, learn.stderr[-3000:]
