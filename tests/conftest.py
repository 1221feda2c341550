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
