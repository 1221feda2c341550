"""Optional dependency groups: without [learn] the learning code names the extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pddlgym_sl.errors import MissingExtraError
from pddlgym_sl.extras import EXTRAS, require_extra
from tests.hide_modules import hide_modules
from tests.problems import ROOT

# Hides the given top-level modules from the import system, as if they were not installed.
HIDE = (
    hide_modules("sys.argv[1]")
    + """
sys.argv = sys.argv[2:]
import runpy
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""
)


def _run_hiding(hidden: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", HIDE, hidden, *argv], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_importing_the_learning_code_without_torch_names_the_learn_extra() -> None:
    """From a script (here runpy, as a program importing `agents` would) the import raises
    `MissingExtraError`; ``python -m agents.<command>`` prints it as one line instead
    (tests/test_cli.py)."""
    out = _run_hiding("torch,torch_geometric", "agents.supervised", "--help")
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    # the hint fits this install, a source checkout (the package is on no index there)
    assert "MissingExtraError" in last and 'pip install -e ".[learn]"' in last, out.stderr[-2000:]
    assert "torch, torch_geometric are not installed" in last


def test_core_cli_runs_without_the_learning_extras() -> None:
    """The planner needs none of [learn] or [rl]."""
    hidden = ",".join(m for modules in EXTRAS.values() for m in modules)
    out = _run_hiding(hidden, "pddlgym_sl.plan", "ferry", "--param", "locations=3", "--param", "cars=2")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "plan (4 steps):" in out.stdout


def test_help_works_without_the_extra_and_running_names_it() -> None:
    """``python -m agents.rl --help`` prints its help without [rl]; running it names the extra
    with the install command of a source checkout (issue 60)."""
    helped = _run_hiding("stable_baselines3,sb3_contrib", "agents.rl", "--help")
    assert helped.returncode == 0 and "--policy" in helped.stdout, helped.stderr[-2000:]
    ran = _run_hiding("stable_baselines3,sb3_contrib", "agents.rl", "--total-timesteps", "8")
    assert ran.returncode == 2 and "needs the [rl] extra" in ran.stderr, ran.stderr[-2000:]
    assert 'pip install -e ".[rl]"' in ran.stderr


def test_the_install_hint_fits_how_the_package_was_installed(tmp_path, monkeypatch) -> None:
    import pddlgym_sl.extras as extras

    assert extras.install_hint("rl") == 'pip install -e ".[rl]"'  # this checkout, from its root
    monkeypatch.chdir(tmp_path)
    assert extras.install_hint("rl") == f'pip install -e "{ROOT}[rl]"'
    monkeypatch.setattr(extras, "__file__", str(tmp_path / "site-packages" / "pddlgym_sl" / "extras.py"))
    assert extras.install_hint("rl") == "pip install 'pddlgym-sl[rl]'"  # a wheel: from the index


def test_require_extra_reports_the_missing_modules(monkeypatch) -> None:
    monkeypatch.setitem(EXTRAS, "fake", ("json", "no_such_module_xyz"))
    with pytest.raises(MissingExtraError, match=r"needs the \[fake\] extra, and no_such_module_xyz is not"):
        require_extra("fake", "this feature")
    require_extra("learn", "the learning code")  # installed in the test environment


CORE_MODULES = {"numpy", "numba", "llvmlite", "gymnasium", "tqdm", "tyro"}  # llvmlite: numba's own
"""The top-level modules of the core install's dependencies that the learning code imports."""


def test_every_library_the_learning_code_imports_is_in_an_extra() -> None:
    """A fresh ``pip install -e .[learn]`` once lacked scipy (the confidence metrics' Kendall τ):
    every third-party module imported anywhere under ``agents/`` is the core's or an extra's."""
    import ast

    root = ROOT
    first_party = {"agents", "pddlgym_sl", "domains"}
    found: dict[str, str] = {}
    for path in sorted((root / "agents").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in first_party and not top.startswith("_"):
                    found.setdefault(top, str(path.relative_to(root)))
    allowed = CORE_MODULES | set(EXTRAS["learn"]) | set(EXTRAS["rl"])
    assert {m: f for m, f in found.items() if m not in allowed} == {}
