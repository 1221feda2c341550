"""The planning core on the IPC 2023 Learning Track tasks (nobody here wrote them) against Fast
Downward: heuristic values on initial states, GBFS + hFF node for node, plans validated.

The tasks live in ``../shared/ipc23-lt`` next to the repository; the default tests compare with
Fast Downward's values recorded in ``tests/data/fd_reference.json`` (``python -m
tests.fd_reference``); the slow tests run Fast Downward itself on every training task.
"""

from __future__ import annotations

import json
import math

import pytest

from pddlgym_sl import load_task
from pddlgym_sl.fd import fd_initial_values, run_fast_downward
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.search import astar, gbfs
from tests.fd_reference import GBFS_TASKS, IPC, IPC_DOMAINS, RECORD, fd_gbfs, ipc_tasks

pytestmark = pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")
COMPARED = ("hmax", "hadd", "hff", "lmcut", "blind", "goal_count")


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(RECORD.read_text())


def _values(task) -> dict[str, float]:
    return {name: make_heuristic(name, task)(task.init) for name in COMPARED}


def test_the_record_covers_every_training_task(recorded):
    assert set(recorded["initial_values"]) == {key for key, _, _ in ipc_tasks()}
    assert len(recorded["initial_values"]) >= 970


@pytest.mark.parametrize("domain", IPC_DOMAINS)
def test_initial_values_equal_fast_downward(recorded, domain):
    """Six training tasks per domain (small to large) against Fast Downward's recorded values."""
    keys = sorted(k for k in recorded["initial_values"] if k.startswith(f"{domain}/"))
    for key in keys[:: max(1, len(keys) // 5)]:
        task = load_task(IPC / domain / "domain.pddl", IPC / key)
        assert _values(task) == recorded["initial_values"][key], key


@pytest.mark.parametrize("domain", IPC_DOMAINS)
def test_gbfs_hff_equals_fast_downward_node_for_node(recorded, domain):
    """GBFS + hFF evaluates, expands and generates exactly what Fast Downward's
    eager_greedy([ff()]) does, and finds the same, valid plan."""
    ref = recorded["gbfs_hff"][f"{domain}/{GBFS_TASKS[domain]}"]
    task = load_task(IPC / domain / "domain.pddl", IPC / domain / GBFS_TASKS[domain])
    result = gbfs(task, "hff", max_evaluations=None)
    assert result.solved and ref["solved"]
    task.validate_plan(result.plan)
    assert result.plan == ref["plan"]
    assert (result.evaluations, result.expansions, result.generated, result.cost) == (
        ref["evaluations"],
        ref["expansions"],
        ref["generated"],
        ref["cost"],
    )


@pytest.mark.parametrize("domain", ["childsnack", "ferry", "satellite"])
def test_astar_lmcut_is_optimal_on_negative_precondition_domains(domain):
    task = load_task(IPC / domain / "domain.pddl", IPC / domain / "training/p05.pddl")
    run = run_fast_downward(
        IPC / domain / "domain.pddl", IPC / domain / "training/p05.pddl", "astar(lmcut())"
    )
    result = astar(task, "lmcut")
    assert result.solved and result.cost == run.cost
    task.validate_plan(result.plan)
    assert (result.evaluations, result.expansions) == (run.evaluations, run.expansions)


@pytest.mark.slow
@pytest.mark.parametrize("domain", IPC_DOMAINS)
def test_every_training_task_equals_fast_downward_live(domain):
    for key, domain_file, problem_file in ipc_tasks("training/*.pddl"):
        if not key.startswith(f"{domain}/"):
            continue
        assert _values(load_task(domain_file, problem_file)) == fd_initial_values(
            domain_file, problem_file
        ), key


@pytest.mark.slow
@pytest.mark.parametrize("domain", IPC_DOMAINS)
def test_gbfs_hff_on_testing_easy_equals_fast_downward_live(domain):
    """On the shared testing-easy tasks, within 10,000 evaluations: same coverage, same counts."""
    for key, domain_file, problem_file in ipc_tasks("testing-easy/*.pddl"):
        if not key.startswith(f"{domain}/"):
            continue
        ref = fd_gbfs(domain_file, problem_file, time_limit=120)
        task = load_task(domain_file, problem_file)
        result = gbfs(task, "hff", max_evaluations=10_000, time_limit=120)
        fd_solved = ref["solved"] and ref["evaluations"] <= 10_000
        assert result.solved == fd_solved, key
        if fd_solved:
            task.validate_plan(result.plan)
            assert (result.evaluations, result.expansions, result.cost) == (
                ref["evaluations"],
                ref["expansions"],
                ref["cost"],
            ), key
        else:
            assert math.isfinite(result.evaluations)
