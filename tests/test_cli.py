"""Every ``python -m`` command goes through one wrapper (`pddlgym_sl.cli.Command`): its usage names it
as typed, every user error is one line on stderr with exit status 2 (a bad flag, a device that is
not there, a missing extra), and it parses an argument list without running (issue 28)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap

import pytest

from pddlgym_sl.cli import Command, UsageError, one_line
from tests.commands import COMMANDS
from tests.hide_modules import hide_modules
from tests.problems import ROOT


def command_of(module: str) -> Command:
    """The `Command` that ``python -m <module>`` runs."""
    mod = importlib.import_module(module)
    if not hasattr(mod, "COMMAND"):  # a package run through its __main__
        mod = importlib.import_module(f"{module}.__main__")
    return mod.COMMAND


@pytest.mark.parametrize("module", COMMANDS)
def test_every_command_is_a_wrapped_command_named_as_typed(module):
    command = command_of(module)
    assert isinstance(command, Command)
    assert command.prog == f"python -m {module}"


@pytest.mark.parametrize("module", COMMANDS)
def test_an_unknown_flag_is_one_line_and_status_2(module, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert command_of(module).main(["--no-such-flag"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert ("--no-such-flag" in err or "required" in err) and f"python -m {module} --help" in err


@pytest.mark.parametrize(
    ("module", "argv", "what"),
    [
        ("agents.supervised", ["--dist", "gauss"], "'gauss'"),
        ("agents.evaluate", ["--search", "dfs"], "'dfs'"),
        ("pddlgym_sl.plan", ["ferry", "--search", "dfs"], "'dfs'"),
        ("domains.generate", ["--domain", "ferry"], "--split"),
    ],
)
def test_a_bad_value_or_missing_argument_is_one_line(module, argv, what, capsys):
    assert command_of(module).main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and what in err, err


def test_help_usage_names_the_command_not_a_file():
    """tyro's usage line showed ``/…/agents/supervised.py``; argparse's the file name."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for module in ("agents.supervised", "pddlgym_sl.data.summary"):
        out = subprocess.run(
            [sys.executable, "-m", module, "--help"], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.startswith(f"usage: python -m {module} "), out.stdout[:200]


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("agents.supervised", ["--device", "cuda"]),
        ("agents.supervised", ["--device", "cuda:0", "--model", "linear"]),
        ("agents.evaluate", ["--heuristic", "hff", "--domain", "ferry", "--device", "cuda"]),
        ("agents.rl_value", ["--device", "cuda"]),
        ("agents.rl", ["--device", "cuda"]),  # SB3 fell back to the CPU without a word
        ("agents.supervised", ["--device", "gpu"]),
    ],
)
def test_a_device_that_is_not_there_is_refused_before_any_work(module, argv, capsys, tmp_path, monkeypatch):
    """``--device cuda`` without CUDA was a 13-frame traceback (supervised, evaluate, rl_value)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.chdir(tmp_path)
    assert command_of(module).main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: device ") and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []  # no dataset, run or problem was made


def test_the_library_refuses_a_missing_device_too(monkeypatch):
    import torch

    from agents.devices import resolve_device
    from agents.errors import AgentError

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(AgentError, match="CUDA is not available"):
        resolve_device("cuda")
    assert resolve_device("auto") == torch.device("cpu")


# Hides the given top-level modules from the import system, as if they were not installed, in a
# real ``python -m`` (sitecustomize runs before the command's package is imported).
SITECUSTOMIZE = hide_modules('os.environ["HIDE_MODULES"]')


@pytest.mark.parametrize(
    ("hidden", "argv", "extra"),
    [
        ("torch,torch_geometric", ["agents.supervised", "--help"], "[learn]"),
        ("torch,torch_geometric", ["agents.evaluate", "--heuristic", "hff", "--domain", "ferry"], "[learn]"),
        ("stable_baselines3,sb3_contrib", ["agents.rl"], "[rl]"),
    ],
)
def test_a_missing_extra_is_one_line(hidden, argv, extra, tmp_path):
    """A core-only install, then ``python -m agents.supervised``: a raw traceback around
    `MissingExtraError` (raised while the package ``agents`` is imported, before any command code)."""
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent(SITECUSTOMIZE))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "HIDE_MODULES": hidden}
    out = subprocess.run(
        [sys.executable, "-m", *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 2, out.stderr[-2000:]
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: "), out.stderr[-2000:]
    # run from this checkout, the hint installs the checkout's extra (`pddlgym_sl.extras.install_hint`)
    assert f'pip install -e "{ROOT}{extra}"' in out.stderr, out.stderr


def test_parse_runs_nothing_and_returns_the_configuration(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = command_of("agents.supervised").parse(["--dist", "n", "--sigma", "fixed", "--steps", "5"])
    assert (args.dist, args.sigma, args.steps) == ("n", "fixed", 5)
    assert args.training_config().steps == 5
    plan = command_of("pddlgym_sl.plan").parse(["domains/ferry/domain.pddl", "p.pddl", "--search", "astar"])
    assert (plan.search, plan.max_evaluations) == ("astar", None)  # unset: 10,000 without a time limit
    with pytest.raises(UsageError, match="--no-such-flag"):
        command_of("agents.evaluate").parse(["--no-such-flag"])
    assert list(tmp_path.iterdir()) == []


def test_one_line():
    assert one_line("a\n  b\n\nc ") == "a b c"
