"""The README and the reports in ``docs/`` run verbatim: every ``python -m`` command they show parses
with its command line (nothing run), and the short ones run (issue 28: a WL line lacked
``--test-split val``, an example's ``--split test-reduced`` was refused, placeholders stood where a
path would do).

Commands come from ``bash`` code blocks (continuation lines joined, comments dropped, ``for`` loops
and ``NAME=...`` assignments of the block expanded with their first value) and from inline code
that starts with ``python -m``."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pddlgym_sl.cli import UsageError
from pddlgym_sl.errors import PDDLError
from tests.problems import ROOT
from tests.test_cli import COMMANDS, command_of

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXPERIMENTS = {
    f"experiments.{p.stem}"
    for p in (ROOT / "experiments").glob("*.py")
    if "def build_parser(" in p.read_text()
}
"""The experiment drivers run as ``python -m experiments.<name>`` (argparse, `build_parser`)."""
PLACEHOLDERS = {"<id>": "ferry-tn"}
"""Run names a document may leave to the reader, and what the test puts there."""
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_SPAN = re.compile(r"(`+)([^`].*?)\1(?!`)", re.S)  # a code span: a run of backticks to the same run
_VAR = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def _expand(text: str, variables: dict[str, str]) -> str:
    return _VAR.sub(lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), text)


def _block_commands(block: str) -> list[str]:
    """The ``python -m`` commands of a bash block, variables of the block expanded."""
    lines = block.replace("\\\n", " ").splitlines()
    variables: dict[str, str] = {}
    found = []
    for line in lines:
        words = shlex.split(line, comments=True)
        if not words:
            continue
        for i in range(len(words) - 3):  # for x in a b c; do ... (the first value)
            if words[i] == "for" and words[i + 2] == "in":
                variables[words[i + 1]] = _expand(words[i + 3].rstrip(";"), variables)
        if len(words) == 1 and re.fullmatch(r"\w+=.*", words[0]):  # R="--steps 2000 ..."
            name, value = words[0].split("=", 1)
            variables[name] = _expand(value, variables)
        for part in re.split(r"&&|;|\bdo\b", _expand(line.split(" #")[0], variables)):
            if "python -m " in part:
                found.append("python -m " + part.split("python -m ", 1)[1].strip())
    return found


def document_commands(path: Path) -> list[str]:
    """Every ``python -m`` command of a markdown document, in order."""
    text = path.read_text()
    commands = []
    for language, body in _FENCE.findall(text):
        if language in ("bash", "sh", ""):
            commands += _block_commands(body)
    for _, span in _SPAN.findall(_FENCE.sub("", text)):
        span = " ".join(span.split())
        if "python -m " in span and "..." not in span:  # "python -m ..." speaks of every command
            commands.append("python -m " + span.split("python -m ", 1)[1])
    return commands


ALL = [(path.relative_to(ROOT), command) for path in DOCUMENTS for command in document_commands(path)]


def _argv(command: str) -> tuple[str, list[str]]:
    for placeholder, value in PLACEHOLDERS.items():
        command = command.replace(placeholder, value)
    words = shlex.split(command)
    assert words[:2] == ["python", "-m"], command
    return words[2], words[3:]


def test_code_spans_pair_up_whatever_their_backticks(tmp_path):
    """A ``double-backtick`` span is one span: read as two single-backtick ones, it shifted the
    pairing of every later span of the document, and its later commands went unchecked."""
    doc = tmp_path / "doc.md"
    doc.write_text("A ``[facts, states]`` layout, then `python -m agents.evaluate --run R`.\n")
    assert document_commands(doc) == ["python -m agents.evaluate --run R"]


def test_the_documents_have_commands_of_every_kind():
    modules = {_argv(command)[0] for _, command in ALL}
    assert len(ALL) > 100
    assert set(COMMANDS) - modules <= {"agents.apps.presets"}  # every command is shown somewhere
    assert len(Path(ROOT / "README.md").read_text().splitlines()) <= 400


@pytest.mark.parametrize(("document", "command"), ALL, ids=[f"{d}:{c[10:60]}" for d, c in ALL])
def test_every_command_parses(document, command, monkeypatch, tmp_path):
    """Parsed by the command's own `Command.parse`: flags, choices, ranges and the rules between
    them; nothing runs (relative files such as ``--config configs/...`` are read from the root).
    An experiment driver's line is parsed by its argparse parser."""
    module, argv = _argv(command)
    if module in EXPERIMENTS:  # an experiment driver: its own argparse line, parsed without running
        parser = importlib.import_module(module).build_parser()
        parser.exit = lambda status=0, message=None: pytest.fail(f"{document}: {command}\n  {message}")
        if "--help" not in argv:
            parser.parse_args(argv)
        return
    assert module in COMMANDS, f"{document}: {module} is not a command"
    if not argv and f"`{command}`" in (ROOT / document).read_text():
        return  # inline prose naming the command, not a command line to run
    monkeypatch.chdir(ROOT)
    if "--help" in argv:
        with pytest.raises(SystemExit) as exc:
            command_of(module).parse(argv)
        assert exc.value.code == 0
        return
    try:
        command_of(module).parse(argv)
    except (UsageError, PDDLError) as exc:
        if "ray" in argv and importlib.util.find_spec("ray") is None and "[cluster] extra" in str(exc):
            return  # refused for the missing [cluster] extra only: a check made after every flag parsed
        pytest.fail(f"{document}: {command}\n  refused: {exc}")


SHORT = [
    "python -m pddlgym_sl.plan ferry --param locations=10 --param cars=10 --seed 3",
    "python -m domains.generate --domain ferry --split train --out problems/",
    "python -m pddlgym_sl.plan domains/ferry/domain.pddl problems/ferry/train/ferry-l4-c3-s1.pddl "
    "--heuristic lmcut --search astar --json",
    "python -m pddlgym_sl.heuristics domains/ferry/domain.pddl problems/ferry/train/ferry-l4-c3-s1.pddl "
    "--json",
    "python -m agents.supervised --help",
]
"""Commands of the README that take seconds, in the order they are shown (later ones read what
earlier ones wrote)."""
TOUR = [
    "python -m pddlgym_sl.data.generate --preset small",
    "python -m agents.supervised --dist tn --steps 500 --name ferry-tn",
    "python -m agents.supervised --dist n --sigma fixed --residual none --steps 500 --name ferry-n",
    "python -m agents.evaluate --run runs/ferry-tn --split test --problems 4",
    "python -m agents.evaluate --heuristic hff --domain ferry --split test --data data/small --problems 4",
    "python -m agents.report runs/ferry-tn runs/ferry-n runs/baselines --split test --out runs/tour-report",
]
"""The README's tour of the learning commands, from the quick start's state (minutes)."""


def _run_in_a_fresh_checkout(commands: list[str], tmp_path: Path) -> None:
    shown = {command for _, command in ALL}
    for name in ("domains", "configs"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PDDLGYM_SL_CACHE": str(tmp_path / "cache")}
    for command in commands:
        assert " ".join(command.split()) in shown, f"not in the README or docs: {command}"
        module, argv = _argv(command)
        out = subprocess.run(
            [sys.executable, "-m", module, *argv],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert out.returncode == 0, f"{command}\n{out.stderr[-3000:]}"


def test_the_short_commands_run(tmp_path):
    _run_in_a_fresh_checkout(SHORT, tmp_path)
    code = "\n".join(
        block
        for language, block in _FENCE.findall((ROOT / "README.md").read_text())
        if language == "python" and "load_task" in block
    )
    subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True
    )


@pytest.mark.slow
def test_the_tour_runs(tmp_path):
    """The quick start's dataset, then the README's tour of the learning commands."""
    _run_in_a_fresh_checkout(TOUR, tmp_path)
    assert (tmp_path / "runs" / "tour-report" / "table2.md").is_file()
