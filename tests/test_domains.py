"""The `domains` package: Table 3 splits, generator semantics, determinism and the CLI."""

from __future__ import annotations

import collections
import dataclasses
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import domains
from domains.blocksworld.generator import TABLE, count_states, sample_state
from domains.generate import main as generate_main
from pddlgym_sl import load_task
from pddlgym_sl.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]

TABLE3_SIZES = {
    "blocksworld": {"train": 456, "val": 132, "test": 132},
    "ferry": {"train": 400, "val": 100, "test": 400},
    "gripper": {"train": 400, "val": 100, "test": 100},
    "visitall": {"train": 420, "val": 102, "test": 102},
}

DOMAIN_PDDL_NAMES = {
    "blocksworld": "blocksworld-4ops",
    "ferry": "ferry",
    "gripper": "gripper",
    "visitall": "visit-all",
}


def _sample_specs(name: str) -> list[domains.ProblemSpec]:
    """The first specs of each split plus the largest test problems (keeps the suite fast)."""
    specs = [spec for split in ("train", "val", "test") for spec in domains.split_specs(name, split)[:12]]
    return specs + domains.split_specs(name, "test")[-2:]


def _objects(task, prefix: str) -> list[str]:
    return [o for o in task.objects if o.startswith(prefix)]


def _body(text: str) -> str:
    """Problem text without the comment and the (split-tagged) problem name."""
    return "\n".join(text.splitlines()[2:])


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- registry -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", domains.DOMAIN_NAMES)
def test_domain_file_and_domain_name(name: str) -> None:
    path = domains.domain_file(name)
    assert path.is_file()
    assert f"(domain {DOMAIN_PDDL_NAMES[name]})" in path.read_text()
    assert f"(:domain {DOMAIN_PDDL_NAMES[name]})" in domains.problem_text(domains.split_specs(name, "val")[0])


def test_unknown_names_raise_config_error() -> None:
    with pytest.raises(ConfigError):
        domains.domain_file("sokoban")
    with pytest.raises(ConfigError):
        domains.split_specs("ferry", "holdout")
    with pytest.raises(ConfigError):
        domains.generate_problem("ferry", seed=1, locations=3)  # missing cars
    with pytest.raises(ConfigError):
        domains.generate_problem("ferry", seed=1, locations=1, cars=2)  # every draw trivial
    with pytest.raises(ConfigError):
        domains.generate_problem("visitall", seed=1, x=3, y=3, ratio=1.5)


def test_import_is_light() -> None:
    code = "import sys, domains; bad = {'numba', 'numpy', 'torch'} & set(sys.modules); assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


# --- splits ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", domains.DOMAIN_NAMES)
def test_split_sizes_match_table3(name: str) -> None:
    for split, size in TABLE3_SIZES[name].items():
        specs = domains.split_specs(name, split)
        assert len(specs) == size
        assert len({s.filename for s in specs}) == size
        assert specs == sorted(specs)
        assert all(s.domain == name and s.split == split for s in specs)


@pytest.mark.parametrize("name", domains.DOMAIN_NAMES)
def test_plan_split_is_a_fixed_sample_of_test(name: str) -> None:
    plan = domains.split_specs(name, "plan")
    assert len(plan) == 100
    assert len(set(plan)) == 100
    assert set(plan) <= set(domains.split_specs(name, "test"))
    assert plan == sorted(plan) == domains.split_specs(name, "plan")


def test_table3_parameter_ranges() -> None:
    def values(name: str, split: str, key: str) -> set:
        return {s.kwargs[key] for s in domains.split_specs(name, split)}

    def seeds(name: str, split: str) -> set:
        return {s.seed for s in domains.split_specs(name, split)}

    assert values("blocksworld", "train", "blocks") == set(range(5, 17))
    assert values("blocksworld", "test", "blocks") == set(range(11, 23))
    assert seeds("blocksworld", "train") == set(range(1, 39))
    assert values("ferry", "val", "cars") == set(range(2, 7))
    assert values("ferry", "test", "locations") == {10, 15, 20, 25, 30}
    assert values("gripper", "test", "balls") == {20, 40, 60, 80, 100}
    assert seeds("gripper", "train") == set(range(1, 81))
    assert values("visitall", "test", "x") == {5, 6, 7}
    assert values("visitall", "train", "ratio") == {0.5, 1.0}
    assert all(s.kwargs["x"] == s.kwargs["y"] for s in domains.split_specs("visitall", "test"))


def test_filenames() -> None:
    spec = domains.ProblemSpec("ferry", "test", (("locations", 10), ("cars", 15)), 3)
    assert spec.filename == "ferry-l10-c15-s3.pddl"
    spec = domains.ProblemSpec("visitall", "train", (("x", 5), ("y", 5), ("ratio", 0.5)), 7)
    assert spec.filename == "visitall-x5-y5-r0.5-s7.pddl"
    assert domains.split_specs("blocksworld", "train")[0].filename == "blocksworld-n5-s1.pddl"
    assert domains.split_specs("gripper", "test")[-1].filename == "gripper-b100-s20.pddl"


# --- generated problems ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", domains.DOMAIN_NAMES)
def test_problems_ground_nontrivial_with_their_parameters(name: str, tmp_path: Path) -> None:
    for spec in _sample_specs(name):
        path = tmp_path / spec.filename
        path.write_text(domains.problem_text(spec))
        task = load_task(domains.domain_file(name), path)
        assert not task.is_goal(task.init), spec
        p = spec.kwargs
        if name == "blocksworld":
            assert len(_objects(task, "b")) == len(task.objects) == p["blocks"]
        elif name == "ferry":
            assert len(_objects(task, "l")) == p["locations"]
            assert len(_objects(task, "c")) == p["cars"]
        elif name == "gripper":
            assert len(_objects(task, "ball")) == p["balls"]
            assert len(task.objects) == p["balls"] + 4
        else:
            assert len(task.objects) == p["x"] * p["y"]
            assert set(task.object_types.values()) == {"place"}


@pytest.mark.parametrize("name", domains.DOMAIN_NAMES)
def test_generation_is_deterministic_across_processes(name: str) -> None:
    spec = domains.split_specs(name, "train")[5]
    here = domains.problem_text(spec)
    assert here == domains.problem_text(spec)
    code = (
        "import sys, domains; s = domains.split_specs(sys.argv[1], 'train')[5]; "
        "sys.stdout.write(domains.problem_text(s))"
    )
    for hash_seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", code, name], check=True, capture_output=True, text=True, env=env, cwd=REPO
        )
        assert out.stdout == here


@pytest.mark.parametrize("name", domains.DOMAIN_NAMES)
def test_train_and_test_with_equal_parameters_differ(name: str) -> None:
    test_specs = domains.split_specs(name, "test")
    train_keys = {(s.params, s.seed) for s in domains.split_specs(name, "train")}
    shared = [s for s in test_specs if (s.params, s.seed) in train_keys]
    if not shared:  # disjoint grids (ferry, gripper): compare against a train-tagged copy
        shared = test_specs[:3]
    for spec in shared[:5]:
        train = dataclasses.replace(spec, split="train")
        assert _body(domains.problem_text(spec)) != _body(domains.problem_text(train))
    adhoc = domains.generate_problem(name, seed=shared[0].seed, **shared[0].kwargs)
    assert _body(adhoc) != _body(domains.problem_text(shared[0]))


def test_ferry_static_facts() -> None:
    text = domains.generate_problem("ferry", seed=1, locations=5, cars=3)
    assert text.count("(not-eq ") == 5 * 4
    assert text.count("(location ") == 5
    assert text.count("(car ") == 3
    assert "(empty-ferry)" in text
    assert text.count("(at-ferry ") == 1


def test_visitall_start_cell_is_visited_and_ratio_one_asks_for_every_cell() -> None:
    text = domains.generate_problem("visitall", seed=4, x=4, y=4, ratio=1.0)
    goal = text.split("(:goal")[1]
    assert goal.count("(visited ") == 16
    start = text.split("(at-robot ")[1].split(")")[0]
    assert f"(visited {start})" in text.split("(:goal")[0]
    assert text.count("(connected ") == 2 * (2 * 4 * 3)  # both directions of every grid edge


def test_gripper_balls_are_spread_over_both_rooms() -> None:
    all_one_room, robot_rooms = 0, set()
    specs = domains.split_specs("gripper", "train")
    for spec in specs:
        init = domains.problem_text(spec).split("(:goal")[0]
        rooms = {line.split()[-1].rstrip(")") for line in init.splitlines() if "(at ball" in line}
        all_one_room += len(rooms) == 1
        robot_rooms.add(init.split("(at-robby ")[1].split(")")[0])
    assert robot_rooms == {"rooma", "roomb"}
    assert all_one_room < len(specs) // 4  # only 2-ball problems are often in one room


# --- blocksworld sampler --------------------------------------------------------------------------


def test_blocksworld_state_counts() -> None:
    assert [count_states(n) for n in range(1, 7)] == [1, 3, 13, 73, 501, 4051]


def test_blocksworld_sampler_is_uniform_over_states() -> None:
    rng = random.Random("test-uniform")
    draws = 3900
    counts = collections.Counter(sample_state(3, rng) for _ in range(draws))
    assert len(counts) == 13
    for state in counts:  # a valid state: each block under at most one block, no cycles
        supported = [b for b in state if b != TABLE]
        assert len(supported) == len(set(supported))
        for i in range(3):
            seen, b = set(), i
            while b != TABLE:
                assert b not in seen
                seen.add(b)
                b = state[b]
    expected = draws / 13  # 300, standard deviation about 17
    assert all(abs(c - expected) < 75 for c in counts.values()), counts


# --- writing and CLI ------------------------------------------------------------------------------


def test_write_split_is_atomic_and_skips_identical_files(tmp_path: Path) -> None:
    paths = domains.write_split("gripper", "val", tmp_path, limit=5)
    assert [p.name for p in paths] == [s.filename for s in domains.split_specs("gripper", "val")[:5]]
    inodes = [p.stat().st_ino for p in paths]
    assert domains.write_split("gripper", "val", tmp_path, limit=5) == paths
    assert [p.stat().st_ino for p in paths] == inodes  # not rewritten
    paths[0].write_text("stale")
    domains.write_split("gripper", "val", tmp_path, limit=5)
    assert paths[0].read_text() == domains.problem_text(domains.split_specs("gripper", "val")[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)  # no temp files


def test_cli_runs_twice_to_identical_trees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    args = ["--domain", "all", "--split", "all", "--limit", "3"]
    assert generate_main([*args, "--out", str(first)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 16
    assert lines[0].startswith("blocksworld/train: 3 problems")
    env = {**os.environ, "PYTHONHASHSEED": "7"}
    cmd = [sys.executable, "-m", "domains.generate", *args, "--out", str(second)]
    subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=REPO)
    tree = _tree(first)
    assert len(tree) == 48
    assert tree == _tree(second)
    assert "ferry/train/ferry-l2-c2-s1.pddl" in tree
