"""Optimal labels: Fast Downward plans, replay validation, label invariants, determinism, resume
after kill -9, and failures recorded in the manifest instead of aborting the run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import domains
from pddlgym_sl.data.build import build_split
from pddlgym_sl.data.dataset import facts_digest, load_split
from pddlgym_sl.data.labels import load_labels
from pddlgym_sl.data.solve import SolveConfig
from pddlgym_sl.errors import IncompleteSplitWarning
from pddlgym_sl.fd import run_fast_downward
from pddlgym_sl.task import load_task
from tests.problems import GRIPPER_UNSOLVABLE

FERRY = domains.domain_file("ferry")
TIMINGS = {"solver_seconds", "label_seconds"}


def _specs(n: int = 6):
    return domains.split_specs("ferry", "train")[:n]


def _strip_timings(record: dict) -> dict:
    out = {k: v for k, v in record.items() if k not in TIMINGS}
    out["failures"] = [{k: v for k, v in f.items() if k not in TIMINGS} for f in record["failures"]]
    return out


def _snapshot(split_dir: Path) -> dict:
    """Everything deterministic in a split directory: label arrays, problem texts, records."""
    snap = {}
    for path in sorted((split_dir / "labels").glob("*.npz")):
        with np.load(path, allow_pickle=False) as z:
            snap[path.name] = {k: z[k].tolist() for k in z.files}
    for path in sorted((split_dir / "problems").glob("*.pddl")):
        snap[path.name] = path.read_text()
    for path in sorted((split_dir / "records").glob("*.json")):
        snap[path.name] = _strip_timings(json.loads(path.read_text()))
    return snap


@pytest.fixture(scope="module")
def ferry_split(tmp_path_factory):
    split_dir = tmp_path_factory.mktemp("labels") / "ferry" / "train"
    manifest = build_split(
        "ferry", FERRY, "train", _specs(), split_dir, SolveConfig(time_limit=60), progress=False
    )
    return split_dir, manifest


def test_labels_are_optimal_valid_and_admissible(ferry_split):
    split_dir, manifest = ferry_split
    assert manifest["summary"]["solved"] == 6 and manifest["summary"]["failed"] == 0
    assert manifest["solver"]["search"] == "astar(lmcut())" and manifest["solver"]["version"]
    for record in manifest["problems"]:
        labels = load_labels(split_dir / "labels" / f"{record['slot']}.npz")
        problem = split_dir / "problems" / record["problem"]
        task = load_task(split_dir / "domain.pddl", problem)
        # h* of the initial state is Fast Downward's optimal cost (an independent run)
        fd = run_fast_downward(FERRY, problem, "astar(lmcut())", time_limit=60)
        assert labels.h_star[0] == fd.cost > 0  # > 0: no trivial problem
        # the plan validates by replay and the stored states are the replayed ones
        replayed = task.states_to_array(task.validate_plan(labels.plan))
        assert np.array_equal(replayed, labels.states)
        assert list(labels.h_star) == list(range(len(labels.plan), -1, -1))
        v = labels.values
        assert np.all(v["lmcut"] <= labels.h_star) and np.all(v["hmax"] <= v["lmcut"])
        assert np.all(v["blind"] <= v["hmax"] + 1) and np.all(v["hff"] >= v["hmax"])
        assert np.array_equal(labels.features[:, 1], v["hff"])
        assert np.array_equal(labels.features[:, 0], v["goal_count"])


def test_same_seed_gives_the_same_dataset(ferry_split, tmp_path):
    split_dir, _ = ferry_split
    again = tmp_path / "ferry" / "train"
    build_split("ferry", FERRY, "train", _specs(), again, SolveConfig(time_limit=60), jobs=2, progress=False)
    assert _snapshot(again) == _snapshot(split_dir)


def test_loading_a_split(ferry_split):
    split_dir, manifest = ferry_split
    data = load_split(split_dir)
    assert len(data) == manifest["summary"]["states"] == len(data.problem_of)
    assert data.offsets[-1] == len(data) and len(data.problems) == 6
    i = int(data.problem_of[-1])
    assert facts_digest(data.task(i).facts) == data.facts_digest[i]
    # the consolidated file holds exactly what the per-problem files hold
    for k, path in enumerate(data.problems):
        labels = load_labels(split_dir / "labels" / f"{path.stem}.npz")
        rows = data.problem_of == k
        assert np.array_equal(data.states[k], labels.states)
        assert np.array_equal(data.h_star[rows], labels.h_star)
        assert np.array_equal(data.values["lmcut"][rows], labels.values["lmcut"])
    sample = load_split(split_dir, max_problems=3)
    assert len(sample.problems) == 3 and len(sample) == sum(len(s) for s in sample.states)
    assert set(np.unique(sample.problem_of)) == {0, 1, 2}


def test_a_split_whose_labelling_has_not_finished_loads_with_a_warning(ferry_split, tmp_path):
    split_dir, _ = ferry_split
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a finished split loads without one
        finished = load_split(split_dir)
    partial = tmp_path / "ferry" / "train"
    shutil.copytree(split_dir, partial)
    (partial / "manifest.json").unlink()
    for label_file in sorted((partial / "labels").glob("*.npz"))[3:]:
        label_file.unlink()  # as if the labelling had been killed after three problems
    with pytest.warns(IncompleteSplitWarning, match=r"no manifest\.json.*the 3 problems labelled so far"):
        data = load_split(partial)
    assert len(data.problems) == 3 < len(finished.problems)


def test_a_run_with_nothing_left_to_label_leaves_the_manifest_as_it_was(ferry_split, tmp_path):
    split_dir, manifest = ferry_split
    again = tmp_path / "ferry" / "train"
    shutil.copytree(split_dir, again)
    rerun = build_split("ferry", FERRY, "train", _specs(), again, SolveConfig(time_limit=60), progress=False)
    assert rerun["runs"] == manifest["runs"] and len(rerun["runs"]) == 1
    assert rerun == json.loads((again / "manifest.json").read_text()) == manifest


def test_rerun_after_kill_equals_an_uninterrupted_run(tmp_path):
    cmd = [sys.executable, "-m", "pddlgym_sl.data.generate", "--domain", "ferry", "--split", "train"]
    cmd += ["--limit", "8", "--jobs", "1", "--quiet", "--time-limit", "60"]
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [*cmd, "--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    records = killed / "ferry" / "train" / "records"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(records.glob("*.json"))) < 3 and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 0 < len(list(records.glob("*.json"))) < 8, "the run should have been killed mid-way"
    subprocess.run([*cmd, "--out", str(killed)], check=True, capture_output=True)
    clean = tmp_path / "clean"
    subprocess.run([*cmd, "--out", str(clean)], check=True, capture_output=True)
    assert _snapshot(killed / "ferry" / "train") == _snapshot(clean / "ferry" / "train")
    assert not list((killed / "ferry" / "train").rglob("*.tmp"))
    manifest = json.loads((killed / "ferry" / "train" / "manifest.json").read_text())
    assert manifest["summary"]["finished"] == 8 and len(manifest["runs"]) == 1  # the killed run wrote none


def test_failures_are_recorded_not_fatal(tmp_path, monkeypatch):
    problems = tmp_path / "mine"
    problems.mkdir()
    (problems / "a-unsolvable.pddl").write_text(GRIPPER_UNSOLVABLE)
    (problems / "b-hard.pddl").write_text(domains.generate_problem("gripper", seed=1, balls=60))
    (problems / "c-easy.pddl").write_text(domains.generate_problem("gripper", seed=1, balls=2))
    gripper = domains.domain_file("gripper")
    config = SolveConfig(time_limit=4, memory_limit_mb=2048)
    manifest = build_split(
        "gripper", gripper, "mine", sorted(problems.glob("*.pddl")), tmp_path / "out", config, progress=False
    )
    reasons = {r["slot"]: [f["reason"] for f in r["failures"]] for r in manifest["problems"]}
    assert reasons["a-unsolvable"] == ["unsolvable"]
    assert reasons["b-hard"] in (["time_limit"], ["memory_limit"])
    assert manifest["summary"]["solved"] == 1 and manifest["summary"]["failed"] == 2

    # a crashing solver: every attempt of a generated slot fails, each regenerated with a new seed
    crash = tmp_path / "fast-downward.py"
    crash.write_text("import sys\nprint('segmentation fault')\nsys.exit(35)\n")
    monkeypatch.setenv("PDDLGYM_SL_FD_DRIVER", str(crash))
    spec = domains.split_specs("gripper", "train")[0]
    out = tmp_path / "crash"
    manifest = build_split("gripper", gripper, "train", [spec], out, SolveConfig(retries=3), progress=False)
    (record,) = manifest["problems"]
    assert record["status"] == "failed" and record["retries"] == 3
    assert [f["seed"] for f in record["failures"]] == [spec.seed, spec.seed + 1000, spec.seed + 2000]
    assert all("exit code 35" in f["reason"] for f in record["failures"])
    assert not list((out / "problems").glob("*")) if (out / "problems").exists() else True


def test_summary_table_reads_the_manifests(ferry_split, capsys):
    from pddlgym_sl.data import summary

    split_dir, manifest = ferry_split
    root = split_dir.parent.parent
    (row,) = summary.summarize(root)
    assert (row["domain"], row["split"], row["states"]) == ("ferry", "train", manifest["summary"]["states"])
    assert row["solved"] == f"{manifest['summary']['solved']}/6"
    assert summary.main([str(root)]) == 0
    assert "| ferry | train | 6/6 |" in capsys.readouterr().out
    assert summary.main([str(root / "nothing")]) == 2


def test_unreadable_files_and_tiny_memory_limits_are_recorded_failures(tmp_path):
    """A non-UTF-8 file among the user's problems is one failure naming that file (never fatal
    to the split, never the scratch copy); a memory limit too small for the planner to start is
    a memory_limit failure, not a crash."""
    problems = tmp_path / "mine"
    problems.mkdir()
    (problems / "a-binary.pddl").write_bytes(b"(define \xff\xfe")
    (problems / "b-easy.pddl").write_text(domains.generate_problem("ferry", seed=1, locations=2, cars=1))
    ferry = domains.domain_file("ferry")
    files = sorted(problems.glob("*.pddl"))
    config = SolveConfig(time_limit=30)
    manifest = build_split("ferry", ferry, "mine", files, tmp_path / "out", config, progress=False)
    reasons = {r["slot"]: [f["reason"] for f in r["failures"]] for r in manifest["problems"]}
    assert manifest["summary"]["solved"] == 1 and len(reasons["a-binary"]) == 1
    assert str(problems / "a-binary.pddl") in reasons["a-binary"][0] and "UTF-8" in reasons["a-binary"][0]
    tiny = SolveConfig(time_limit=30, memory_limit_mb=12)
    manifest = build_split("ferry", ferry, "tiny", files[1:], tmp_path / "out2", tiny, progress=False)
    assert [f["reason"] for f in manifest["problems"][0]["failures"]] == ["memory_limit"]


def test_a_second_builder_of_the_same_split_is_refused(tmp_path):
    """Two processes labelling one split would remove each other's scratch files and record the
    crashes as failed problems: the second is refused with the holder's pid instead."""
    from pddlgym_sl.errors import ConfigError
    from pddlgym_sl.io import exclusive_lock

    split_dir = tmp_path / "ferry" / "train"
    config = SolveConfig(time_limit=60)
    busy = pytest.raises(ConfigError, match=rf"in use by another process \(pid {os.getpid()}")
    with exclusive_lock(split_dir / ".lock", "the split"), busy:
        build_split("ferry", FERRY, "train", _specs(1), split_dir, config, progress=False)
    assert not (split_dir / "records").exists()
    manifest = build_split("ferry", FERRY, "train", _specs(1), split_dir, config, progress=False)
    assert manifest["summary"]["solved"] == 1
    assert (split_dir / ".lock").read_bytes() == b""  # released: no pid left behind
