"""Labels for a directory of given tasks (``python -m pddlgym_sl.data.generate --problems DIR``):
the domain file found in or beside the directory, a held-out val split, stopping after failures in
a row (also when resumed), and a crash on one task recorded instead of ending the split."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import domains
from pddlgym_sl.data import build
from pddlgym_sl.data.build import build_split
from pddlgym_sl.data.generate import main as generate_main
from pddlgym_sl.data.solve import SolveConfig
from tests.problems import GRIPPER_UNSOLVABLE

IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"


def _ferry(n: int) -> str:
    return domains.generate_problem("ferry", seed=n, locations=2, cars=1)


def _manifest(split_dir: Path) -> dict:
    return json.loads((split_dir / "manifest.json").read_text())


def test_a_domain_file_inside_the_directory_is_found_and_not_labelled(tmp_path):
    tasks = tmp_path / "myferry"
    tasks.mkdir()
    shutil.copy(domains.domain_file("ferry"), tasks / "domain.pddl")
    for k in range(1, 4):
        (tasks / f"p{k}.pddl").write_text(_ferry(k))
    args = ["--problems", str(tasks), "--split", "train", "--out", str(tmp_path / "out"), "--quiet"]
    assert generate_main([*args, "--val-every", "3", "--time-limit", "30", "--jobs", "1"]) == 0
    train, val = (
        _manifest(tmp_path / "out" / "myferry" / "train"),
        _manifest(tmp_path / "out" / "myferry" / "val"),
    )
    assert [r["slot"] for r in train["problems"]] == ["p1", "p2"] and train["summary"]["solved"] == 2
    assert [r["slot"] for r in val["problems"]] == ["p3"] and val["summary"]["solved"] == 1


def test_no_domain_file_is_a_clear_error(tmp_path, capsys):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "p1.pddl").write_text(_ferry(1))
    assert generate_main(["--problems", str(tasks), "--split", "train", "--out", str(tmp_path)]) == 2
    assert "--domain-file" in capsys.readouterr().err


@pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")
def test_ipc_layout_takes_the_domain_from_the_parent_directory(tmp_path):
    args = ["--problems", str(IPC / "ferry" / "training"), "--split", "train", "--limit", "2"]
    assert generate_main([*args, "--out", str(tmp_path), "--quiet", "--jobs", "1", "--time-limit", "30"]) == 0
    manifest = _manifest(tmp_path / "ferry" / "train")
    assert manifest["summary"]["solved"] == 2 and manifest["domain_file"] == str(
        IPC / "ferry" / "domain.pddl"
    )


def test_stop_after_consecutive_failures_also_when_resumed(tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    easy = domains.generate_problem("gripper", seed=1, balls=2)
    for name, text in [("p1", easy), ("p2", GRIPPER_UNSOLVABLE), ("p3", easy), ("p4", GRIPPER_UNSOLVABLE)]:
        (tasks / f"{name}.pddl").write_text(text)
    (tasks / "p5.pddl").write_text(GRIPPER_UNSOLVABLE)
    (tasks / "p6.pddl").write_text(easy)
    files = sorted(tasks.glob("*.pddl"))
    gripper, out = domains.domain_file("gripper"), tmp_path / "out"
    config = SolveConfig(time_limit=30)
    manifest = build_split("gripper", gripper, "train", files, out, config, progress=False, stop_after=2)
    assert [r["slot"] for r in manifest["problems"]] == ["p1", "p2", "p3", "p4", "p5"]  # p6 not tried
    assert manifest["summary"]["finished"] == 5 and manifest["summary"]["slots"] == 6
    again = build_split("gripper", gripper, "train", files, out, config, progress=False, stop_after=2)
    assert again["problems"] == manifest["problems"]
    with pytest.raises(ValueError, match="jobs=1"):
        build_split("gripper", gripper, "train", files, out, config, jobs=2, progress=False, stop_after=2)


def test_a_crash_on_one_task_is_a_recorded_failure(tmp_path, monkeypatch):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for k in (1, 2):
        (tasks / f"p{k}.pddl").write_text(_ferry(k))
    real = build.solve_slot

    def crash_on_p1(slot, *args):
        if Path(slot).stem == "p1":
            raise RuntimeError("a library bug")
        return real(slot, *args)

    monkeypatch.setattr(build, "solve_slot", crash_on_p1)
    files = sorted(tasks.glob("*.pddl"))
    manifest = build_split(
        "ferry",
        domains.domain_file("ferry"),
        "t",
        files,
        tmp_path / "out",
        SolveConfig(time_limit=30),
        progress=False,
    )
    (p1, p2) = manifest["problems"]
    assert p1["status"] == "failed" and p1["failures"][0]["reason"] == "crash: RuntimeError: a library bug"
    assert p2["status"] == "solved"
