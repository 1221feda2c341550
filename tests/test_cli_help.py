"""``--help`` of every command comes back without importing torch, torch-geometric, SB3, wlplan or
matplotlib (seconds of imports), and the core package never imports them (`pddlgym_sl` stays
torch-free). Each check runs in a fresh interpreter and looks at its ``sys.modules``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
HEAVY = (
    "torch",
    "torch_geometric",
    "stable_baselines3",
    "sb3_contrib",
    "matplotlib",
    "wlplan",
    "tensorboard",
)
_PROBE = """
import contextlib, importlib, io, sys
module = importlib.import_module({module!r})
if not hasattr(module, "COMMAND"):  # a package run through its __main__
    module = importlib.import_module({module!r} + ".__main__")
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        module.COMMAND.main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0, exc.code
assert out.getvalue().startswith("usage: python -m " + {module!r}), out.getvalue()[:500]
print(",".join(m for m in {heavy!r} if m in sys.modules))
"""


def _loaded_heavy(code: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [m for m in proc.stdout.strip().splitlines()[-1].split(",") if m] if proc.stdout.strip() else []


@pytest.mark.parametrize("module", COMMANDS)
def test_help_imports_no_heavy_library(module):
    assert _loaded_heavy(_PROBE.format(module=module, heavy=HEAVY)) == []


def test_core_package_imports_no_torch():
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-c",
            "import pddlgym_sl, pddlgym_sl.plan, pddlgym_sl.data.generate",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "pddlgym_sl.plan" in imported
    assert not {m for m in imported if m.split(".")[0] in HEAVY}
