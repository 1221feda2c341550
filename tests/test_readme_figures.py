"""The README's cheap figures, rerun: the numbers it states are the numbers its commands print now
(issue 60). Each figure is read from the README's text and compared with a fresh run's output, so a
change of the code that moves a figure fails here until the README says the new one.

The quick start's main job takes about two minutes: ``-m slow``. The plan command's runs in seconds."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.problems import ROOT

README = (ROOT / "README.md").read_text()


def _stated(pattern: str) -> re.Match:
    """The README's sentence matching `pattern` (its figures as groups)."""
    found = re.search(pattern, " ".join(README.split()))
    assert found, f"the README no longer states {pattern!r}"
    return found


def _run(cmd: list[str], cwd) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", *cmd], cwd=cwd, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_the_plan_commands_evaluations_are_the_readmes(tmp_path):
    stated = _stated(r"a search of (\d[\d,]*) evaluations either time")
    command = ["pddlgym_sl.plan", "ferry", "--param", "locations=10", "--param", "cars=10", "--seed", "3"]
    printed = _run(command, tmp_path)
    assert re.search(rf"\bevaluations={stated[1].replace(',', '')}\b", printed), printed[-2000:]


@pytest.mark.slow
def test_the_quick_starts_figures_are_the_readmes(tmp_path):
    """``python -m agents.supervised --dist tn`` in an empty directory (it creates data/small there):
    the test MSEs and the planning lines the README states."""
    stated = _stated(
        r"printed test MSE ([\d.]+) for the NLM against ([\d.]+) for hFF and ([\d.]+) for LM-cut, and "
        r"solved (\d+)/(\d+) test problems with a mean of (\d+) evaluations against hFF's (\d+)/(\d+) "
        r"with (\d+)"
    )
    printed = _run(["agents.supervised", "--dist", "tn", "--quiet"], tmp_path)
    rows = re.finditer(r"^(nlm TN learn/hff|hFF|LM-cut)\s+([\d.]+)$", printed, re.M)
    mse = {m[1]: m[2] for m in rows}
    got = [f"{float(mse[k]):.2f}" for k in ("nlm TN learn/hff", "hFF", "LM-cut")]
    assert got == [stated[1], stated[2], stated[3]], printed
    plans = re.findall(r"solved (\d+)/(\d+), mean evaluations of the solved (\d+)", printed)
    assert plans == [(stated[4], stated[5], stated[6]), (stated[7], stated[8], stated[9])], printed
