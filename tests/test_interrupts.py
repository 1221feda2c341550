"""Interrupting the parallel commands: kill -9 and Ctrl-C of ``generate --jobs 2`` and ``evaluate
--jobs 2`` while they run leave no process of theirs (workers, Fast Downward, multiprocessing's
resource tracker) 2 s later, Ctrl-C ends with one line and no traceback, and the same command
then finishes the work without redoing or losing a finished unit (issue 29)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import parallel_helpers as helpers
from tests.problems import ROOT

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")


def _start(cmd: list[str], env: dict[str, str]) -> subprocess.Popen:
    """The command in a process group of its own, as a shell starts a foreground job."""
    return subprocess.Popen(
        [sys.executable, "-m", *cmd], env=env, cwd=ROOT, start_new_session=True,
        preexec_fn=helpers.as_foreground_job,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _files(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.glob("*.json"))}


def _interrupt_mid_run(cmd: list[str], results: Path, signum: int) -> tuple[subprocess.Popen, str]:
    """Start `cmd`, wait until it has finished one more unit (a file in `results`) and is busy with
    others, send `signum` (SIGINT: to its whole group, as Ctrl-C at a terminal does; SIGKILL: to
    the command alone), and check that nothing of it runs 2 s later; return it and its stderr."""
    env = helpers.new_marker()
    before = len(list(results.glob("*.json"))) if results.is_dir() else 0
    proc = _start(cmd, env)
    deadline = time.time() + 900  # a cold numba cache compiles the kernels first
    while time.time() < deadline and proc.poll() is None:
        if results.is_dir() and len(list(results.glob("*.json"))) > before and len(helpers.ours(env)) >= 4:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the command ended before it could be interrupted: give it more work"
    running = helpers.ours(env)
    assert len(running) >= 4, running  # the command, the resource tracker, two workers (and planners)
    sent = time.time()
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signum)
    else:
        os.kill(proc.pid, signum)
    left = helpers.left_after(env, sent)
    _, err = proc.communicate(timeout=60)
    assert left == [], f"still running 2 s after {signal.Signals(signum).name}: {left}"
    return proc, err


def _check_one_line(proc: subprocess.Popen, err: str, what: str) -> None:
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    lines = [line for line in err.splitlines() if line.strip() and "it/s" not in line and "%|" not in line]
    assert len(lines) == 1 and lines[0].startswith("interrupted (SIGINT): "), err[-3000:]
    assert what in lines[0] and lines[0].endswith("run the same command again to resume"), lines[0]


def _given_problems(directory: Path, n: int) -> Path:
    """`n` gripper tasks that Fast Downward solves in about a second each."""
    import domains

    directory.mkdir(parents=True)
    for i in range(n):
        text = domains.generate_problem("gripper", seed=i + 1, balls=12 + i % 3)
        (directory / f"p{i:02d}.pddl").write_text(text)
    return directory


def test_generate_jobs_2_kill_9_then_ctrl_c_then_resume(tmp_path):
    n = 14
    problems = _given_problems(tmp_path / "tasks", n)
    out = tmp_path / "data"
    cmd = ["pddlgym_sl.data.generate", "--problems", str(problems), "--domain", "gripper", "--split", "mine"]
    cmd += ["--jobs", "2", "--time-limit", "120", "--out", str(out)]
    records = out / "gripper" / "mine" / "records"

    _interrupt_mid_run(cmd, records, signal.SIGKILL)
    killed = _files(records)
    assert 0 < len(killed) < n

    proc, err = _interrupt_mid_run(cmd, records, signal.SIGINT)
    _check_one_line(proc, err, f"of {n} problems of gripper/mine are finished, kept in {records.parent}")
    stopped = _files(records)
    assert len(killed) < len(stopped) < n and f"{len(stopped)} of {n}" in err
    assert {k: stopped[k] for k in killed} == killed  # not redone

    done = subprocess.run(
        [sys.executable, "-m", *cmd, "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    final = _files(records)
    assert len(final) == n and {k: final[k] for k in stopped} == stopped  # nothing lost, nothing redone
    manifest = json.loads((records.parent / "manifest.json").read_text())
    assert manifest["summary"]["finished"] == n and manifest["summary"]["solved"] == n
    assert len(manifest["problems"]) == n and len(manifest["runs"]) == 1  # the interrupted runs wrote none
    assert not list((records.parent / "scratch").glob("*")) and not list(records.parent.rglob("*.tmp"))


def test_evaluate_jobs_2_kill_9_then_ctrl_c_then_resume(tmp_path):
    n = 16
    out = tmp_path / "eval"
    cmd = ["agents.evaluate", "--heuristic", "hff", "--domain", "blocksworld", "--split", "plan"]
    cmd += ["--problems", str(n), "--jobs", "2", "--out", str(out)]
    results = out / "problems"

    _interrupt_mid_run(cmd, results, signal.SIGKILL)
    killed = _files(results)
    assert 0 < len(killed) < n

    proc, err = _interrupt_mid_run(cmd, results, signal.SIGINT)
    _check_one_line(proc, err, f"of {n} problems are evaluated, kept in {results}")
    stopped = _files(results)
    assert len(killed) < len(stopped) < n and {k: stopped[k] for k in killed} == killed

    done = subprocess.run(
        [sys.executable, "-m", *cmd, "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    final = _files(results)
    assert len(final) == n and {k: final[k] for k in stopped} == stopped
    summary = json.loads((out / "summary.json").read_text())
    assert summary["problems"] == n
