"""The Fast Downward wrapper: plans and statistics parsed, limits, errors, and no files left behind."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import domains
from pddlgym_sl import fd
from pddlgym_sl.errors import SolverError
from pddlgym_sl.fd import fast_downward_version, fd_initial_heuristic, run_fast_downward
from pddlgym_sl.heuristics import make_heuristic

FERRY = Path(__file__).resolve().parents[1] / "domains" / "ferry" / "domain.pddl"
GRIPPER = FERRY.parents[1] / "gripper" / "domain.pddl"
GRIPPER_DEAD_END = """(define (problem gripper-dead) (:domain gripper)
 (:objects rooma roomb left ball0)
 (:init (room rooma) (gripper left) (ball ball0) (free left) (at ball0 rooma) (at-robby rooma))
 (:goal (and (at ball0 roomb))))
"""


@pytest.fixture(autouse=True)
def private_tmp(tmp_path, monkeypatch):
    """A private temp root, so that leftover checks do not see parallel tests' planner runs."""
    root = tmp_path / "tmp-root"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))


def _leftovers() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("pddlgym_sl_fd_*")}


def test_optimal_plan_parsed(ferry_task, tmp_path, monkeypatch):
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)  # the driver writes to its working directory: must not be ours
    before, files_before = _leftovers(), set(workdir.iterdir())
    run = run_fast_downward(ferry_task.domain_file, ferry_task.problem_file, "astar(lmcut())", time_limit=60)
    assert run.returncode == 0 and run.solved
    assert not (run.timed_out or run.out_of_memory or run.unsolvable)
    assert all(a.startswith("(") and a.endswith(")") for a in run.plan)
    states = ferry_task.validate_plan(run.plan)  # the plan parses into our action names and works
    assert run.cost == len(run.plan) == len(states) - 1
    assert isinstance(run.evaluations, int) and isinstance(run.expansions, int)
    assert run.evaluations >= run.expansions > 0 and run.search_time >= 0
    assert run.initial_h == {"lmcut": make_heuristic("lmcut", ferry_task)(ferry_task.init)}
    assert "Solution found" in run.log
    assert set(workdir.iterdir()) == files_before and _leftovers() == before


def test_initial_heuristic(ferry_task, write_problem):
    assert fd_initial_heuristic(ferry_task.domain_file, ferry_task.problem_file) == make_heuristic(
        "lmcut", ferry_task
    )(ferry_task.init)
    assert fd_initial_heuristic(ferry_task.domain_file, ferry_task.problem_file, "hmax") == make_heuristic(
        "hmax", ferry_task
    )(ferry_task.init)
    assert fd_initial_heuristic(GRIPPER, write_problem(GRIPPER_DEAD_END, "dead.pddl")) == math.inf


def test_unsolvable_is_reported(write_problem):
    run = run_fast_downward(GRIPPER, write_problem(GRIPPER_DEAD_END, "dead.pddl"), "astar(lmcut())")
    assert run.unsolvable and not run.solved and run.plan is None and run.cost is None


def test_time_limit_gives_timed_out(tmp_path):
    problem = tmp_path / "gripper30.pddl"
    problem.write_text(domains.generate_problem("gripper", seed=1, balls=30))
    before = _leftovers()
    run = run_fast_downward(domains.domain_file("gripper"), problem, "astar(blind())", time_limit=2)
    assert run.timed_out and not run.solved and not run.out_of_memory
    assert run.wall_time < 30
    assert _leftovers() == before


def test_errors_become_solver_errors(ferry_task, write_problem, tmp_path):
    with pytest.raises(SolverError, match="Could not parse"):
        run_fast_downward(GRIPPER, write_problem("(define (problem p", "bad.pddl"), "astar(blind())")
    with pytest.raises(SolverError, match="exit code 33"):  # unknown search component
        run_fast_downward(ferry_task.domain_file, ferry_task.problem_file, "astar(no_such_heuristic())")
    with pytest.raises(SolverError, match="not found"):
        run_fast_downward(FERRY, tmp_path / "missing.pddl", "astar(blind())")
    with pytest.raises(SolverError, match="positive"):
        run_fast_downward(ferry_task.domain_file, ferry_task.problem_file, "astar(blind())", time_limit=0)


def test_missing_driver_names_the_package(monkeypatch, ferry_task):
    monkeypatch.delenv(fd.DRIVER_ENV, raising=False)
    monkeypatch.setattr(fd.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SolverError, match="up-fast-downward"):
        fd.driver_path()
    with pytest.raises(SolverError, match="up-fast-downward"):
        run_fast_downward(ferry_task.domain_file, ferry_task.problem_file, "astar(blind())")
    monkeypatch.setenv(fd.DRIVER_ENV, "/nonexistent/fast-downward.py")
    with pytest.raises(SolverError, match="not a file"):
        fd.driver_path()


def test_version():
    version = fast_downward_version()
    assert version is not None and version[0].isdigit()


def test_log_parsing_helpers():
    log = "Initial heuristic value for lmcut: 6\nInitial heuristic value for ff: infinity\n"
    assert fd.parse_initial_h(log) == {"lmcut": 6.0, "ff": math.inf}
    assert fd._killed_by(232) == 24 and fd._killed_by(-9) == 9 and fd._killed_by(23) is None


def _group_members(pgid: int) -> list[int]:
    members = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(stat_file.parent.name))
    return members


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_kill_9_of_the_process_group_leaves_no_planner_and_the_next_run_no_workdir(tmp_path):
    """The planner runs in its caller's process group, so kill -9 of the group ends it; the
    working directory the killed run could not remove is removed by the next run."""
    root = Path(tempfile.gettempdir())
    problem = tmp_path / "hard.pddl"
    problem.write_text(domains.generate_problem("gripper", seed=1, balls=60))
    code = (
        "import tempfile, sys; tempfile.tempdir = sys.argv[1]\n"
        "from pddlgym_sl.fd import run_fast_downward\n"
        "run_fast_downward(sys.argv[2], sys.argv[3], 'astar(lmcut())', time_limit=120)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(root), str(domains.domain_file("gripper")), str(problem)],
        start_new_session=True,  # its own group, so that killing the group spares pytest
    )
    deadline = time.time() + 60
    while time.time() < deadline and len(_group_members(proc.pid)) < 3:  # caller, driver, planner
        time.sleep(0.05)
    assert len(_group_members(proc.pid)) >= 3 and _leftovers()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 10
    while time.time() < deadline and _group_members(proc.pid):
        time.sleep(0.05)
    assert _group_members(proc.pid) == []
    assert _leftovers()  # the killed run had no chance to clean up ...
    ferry = domains.domain_file("ferry")
    problem.write_text(domains.generate_problem("ferry", seed=1, locations=2, cars=1))
    assert run_fast_downward(ferry, problem, "astar(blind())", time_limit=60).solved
    assert not _leftovers()  # ... the next run did
