"""Shared fixtures: tiny hand-written problems compiled into tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.problems import DOMAINS, FERRY_3_2, GRIPPER_2


@pytest.fixture
def write_problem(tmp_path):
    """Write PDDL problem text to a file and return its path."""

    def write(text: str, name: str = "problem.pddl") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture
def ferry_task(write_problem):
    from pddlgym_sl import load_task

    return load_task(DOMAINS / "ferry" / "domain.pddl", write_problem(FERRY_3_2))


@pytest.fixture
def gripper_task(write_problem):
    from pddlgym_sl import load_task

    return load_task(DOMAINS / "gripper" / "domain.pddl", write_problem(GRIPPER_2))


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory) -> Path:
    """A labelled ferry dataset small enough for tests: data/ferry/{train,val,test} (about 10 s)."""
    import domains
    from domains import ProblemSpec
    from pddlgym_sl.data.build import build_split
    from pddlgym_sl.data.solve import SolveConfig

    root = tmp_path_factory.mktemp("tiny-data")
    ferry = domains.domain_file("ferry")
    train = domains.split_specs("ferry", "train")
    splits = {
        "train": train[:: len(train) // 16][:16],
        "val": domains.split_specs("ferry", "val")[-20::4],  # 6 locations, 2..6 cars: hFF errs here
        "test": [ProblemSpec("ferry", "test", (("locations", 7), ("cars", 7)), seed) for seed in (1, 2, 3)],
    }
    for split, specs in splits.items():
        build_split(
            "ferry", ferry, split, specs, root / "ferry" / split, SolveConfig(time_limit=60), progress=False
        )
    return root
