"""Heuristic kernels against references: pyperplan (hmax, hadd), Fast Downward (LM-cut, optimal
costs), the theory's orderings, hand-checked values, and the command-line interface."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pyperplan.heuristics.relaxation import hAddHeuristic, hMaxHeuristic
from pyperplan.search.searchspace import make_root_node

import domains
from pddlgym_sl import CompiledTask, State, load_task
from pddlgym_sl.data.sampling import random_walk
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.fd import run_fast_downward
from pddlgym_sl.heuristics import FEATURE_NAMES, HEURISTICS, HFF, make_heuristic
from tests.problems import pyperplan_task

DOMAINS = Path(__file__).resolve().parents[1] / "domains"
# roomb is not a room: the robot can never get there, so the goal is unreachable even relaxed.
GRIPPER_DEAD_END = """(define (problem gripper-dead) (:domain gripper)
 (:objects rooma roomb left ball0)
 (:init (room rooma) (gripper left) (ball ball0) (free left) (at ball0 rooma) (at-robby rooma))
 (:goal (and (at ball0 roomb))))
"""
NAMES = ("blind", "goal_count", "hmax", "hadd", "hff", "lmcut")
# From a, one road leads on to the goal b, another into the dead end c.
ONE_WAY_DOMAIN = """(define (domain one-way)
 (:requirements :strips)
 (:predicates (at ?x) (road ?x ?y))
 (:action go :parameters (?x ?y)
  :precondition (and (at ?x) (road ?x ?y))
  :effect (and (at ?y) (not (at ?x)))))
"""
ONE_WAY_PROBLEM = """(define (problem one-way-1) (:domain one-way)
 (:objects a b c)
 (:init (at a) (road a b) (road a c))
 (:goal (at b)))
"""
SMALL = {
    "blocksworld": {"blocks": 5},
    "ferry": {"locations": 4, "cars": 3},
    "gripper": {"balls": 4},
    "visitall": {"x": 3, "y": 3, "ratio": 1.0},
}
# Initial states compared with Fast Downward's LM-cut (tie-breaking can make single states differ
# on larger problems; these all agree).
FD_LMCUT_PROBLEMS = [
    ("blocksworld", {"blocks": 4}, 0),
    ("blocksworld", {"blocks": 6}, 1),
    ("blocksworld", {"blocks": 8}, 2),
    ("ferry", {"locations": 3, "cars": 3}, 0),
    ("ferry", {"locations": 5, "cars": 5}, 1),
    ("ferry", {"locations": 10, "cars": 10}, 2),
    ("gripper", {"balls": 2}, 0),
    ("gripper", {"balls": 10}, 1),
    ("gripper", {"balls": 20}, 2),
    ("visitall", {"x": 3, "y": 3, "ratio": 1.0}, 0),
    ("visitall", {"x": 4, "y": 4, "ratio": 0.5}, 1),
    ("visitall", {"x": 6, "y": 6, "ratio": 1.0}, 2),
]


@pytest.fixture(scope="module")
def problem_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("problems")


def generated(problem_dir: Path, domain: str, params: dict, seed: int) -> Path:
    path = problem_dir / f"{domain}-{'-'.join(map(str, params.values()))}-s{seed}.pddl"
    if not path.exists():
        path.write_text(domains.generate_problem(domain, seed=seed, **params))
    return path


def random_walk_states(task: CompiledTask, n: int, seed: int, max_length: int = 25) -> list[State]:
    rng = np.random.default_rng(seed)
    return [random_walk(task, task.init, int(rng.integers(0, max_length + 1)), rng) for _ in range(n)]


@pytest.fixture(scope="module", params=list(SMALL))
def small(request, problem_dir):
    """(domain file, problem file, task, random-walk states) of a small problem of each domain."""
    domain = request.param
    problem = generated(problem_dir, domain, SMALL[domain], seed=3)
    task = load_task(domains.domain_file(domain), problem)
    return domains.domain_file(domain), problem, task, random_walk_states(task, 40, seed=7)


# ----------------------------------------------------------------------------- registry
def test_registry_and_unknown_name(ferry_task):
    assert tuple(HEURISTICS) == NAMES
    for name in NAMES:
        assert make_heuristic(name, ferry_task).name == name
    with pytest.raises(ConfigError, match=r"hmax.*lmcut") as info:
        make_heuristic("h_star", ferry_task)
    assert "unknown heuristic 'h_star'" in str(info.value)
    assert all(name in str(info.value) for name in NAMES)


def test_batch_shape_is_checked(ferry_task):
    h = make_heuristic("hmax", ferry_task)
    with pytest.raises(ConfigError, match="state batch"):
        h.batch(np.zeros((2, ferry_task.n_words + 1), dtype=np.uint64))
    assert h.batch(np.zeros((0, ferry_task.n_words), dtype=np.uint64)).shape == (0,)


# ----------------------------------------------------------------------------- references
def test_hmax_hadd_equal_pyperplan(small):
    domain_file, problem_file, task, states = small
    pp_task = pyperplan_task(domain_file, problem_file)
    pp_hmax, pp_hadd = hMaxHeuristic(pp_task), hAddHeuristic(pp_task)
    batch = task.states_to_array(states)
    hmax = make_heuristic("hmax", task).batch(batch)
    hadd = make_heuristic("hadd", task).batch(batch)
    # atoms that never change are static to Fast Downward's translator (visitall's first cell)
    constant = set(task.static_atoms) & pp_task.facts
    for i, state in enumerate(states):
        node = make_root_node(frozenset(task.true_facts(state)) | constant)
        assert hmax[i] == pp_hmax(node)
        assert hadd[i] == pp_hadd(node)


@pytest.mark.parametrize(("domain", "params", "seed"), FD_LMCUT_PROBLEMS)
def test_lmcut_equals_fast_downward_on_initial_states(problem_dir, domain, params, seed):
    problem = generated(problem_dir, domain, params, seed)
    task = load_task(domains.domain_file(domain), problem)
    run = run_fast_downward(domains.domain_file(domain), problem, "eager_greedy([lmcut()], bound=0)")
    assert make_heuristic("lmcut", task)(task.init) == run.initial_h["lmcut"]


def test_admissible_heuristics_bounded_by_optimal_cost(small):
    """Along an optimal plan (FD's A* + LM-cut), the state i steps in has h* = cost - i."""
    domain_file, problem_file, task, _ = small
    run = run_fast_downward(domain_file, problem_file, "astar(lmcut())", time_limit=60)
    assert run.plan is not None
    states = task.validate_plan(run.plan)
    batch = task.states_to_array(states)
    h_star = run.cost - np.arange(len(states))
    values = {name: make_heuristic(name, task).batch(batch) for name in ("blind", "hmax", "lmcut")}
    assert values["lmcut"][0] == run.initial_h["lmcut"]
    for name, v in values.items():
        assert np.all(v <= h_star), name
    assert np.all(values["hmax"] <= values["lmcut"])
    assert values["lmcut"][-1] == 0


def test_theoretical_orderings(small):
    """hmax <= lmcut <= h+ <= hff <= hadd on every state (and batch == one state at a time)."""
    _, _, task, states = small
    batch = task.states_to_array(states)
    values = {name: make_heuristic(name, task).batch(batch) for name in NAMES}
    assert np.all(values["hmax"] <= values["lmcut"])
    assert np.all(values["lmcut"] <= values["hff"])
    assert np.all(values["hff"] <= values["hadd"])
    assert np.all(values["blind"] <= values["hmax"] + (values["hmax"] == 0))
    for name in NAMES:
        h = make_heuristic(name, task)
        assert [h(s) for s in states] == values[name].tolist(), name


def test_relaxed_plan_is_valid_and_has_hff_actions(small):
    _, _, task, states = small
    hff = make_heuristic("hff", task)
    assert isinstance(hff, HFF)
    for state in states:
        plan = hff.relaxed_plan(state)
        assert plan.dtype == np.int32
        assert len(plan) == hff(state) == len(set(plan.tolist()))
        reached = set(state.fact_indices().tolist())
        for a in plan:  # executable in this order, ignoring deletes
            assert set(task.pre_idx[task.pre_ptr[a] : task.pre_ptr[a + 1]].tolist()) <= reached
            reached |= set(task.add_idx[task.add_ptr[a] : task.add_ptr[a + 1]].tolist())
        assert set(task.goal.tolist()) <= reached


# ----------------------------------------------------------------------------- special states
def test_goal_states_are_zero(small):
    _, _, task, _ = small
    only_goal = task.state_from_indices(task.goal.astype(np.int64))
    for name in NAMES:
        assert make_heuristic(name, task)(only_goal) == 0, name
    assert make_heuristic("hff", task).relaxed_plan(only_goal).tolist() == []


def test_dead_end_is_inf(write_problem):
    """The translator proves this task unsolvable (its goal is relaxed unreachable): every
    heuristic says inf on every state, as Fast Downward reports a dead end."""
    task = load_task(DOMAINS / "gripper" / "domain.pddl", write_problem(GRIPPER_DEAD_END))
    assert not task.solvable and not task.is_goal(task.init)
    values = {name: make_heuristic(name, task)(task.init) for name in NAMES}
    assert all(math.isinf(v) for v in values.values()), values
    hff = make_heuristic("hff", task)
    assert hff.relaxed_plan(task.init) is None
    assert np.all(np.isinf(hff.features(task.init)))


def test_relaxed_dead_end_inside_a_solvable_task(write_problem):
    """A reachable state from which the goal is relaxed unreachable (a wrong turn into a dead
    end) in a solvable task: inf for the relaxation heuristics, finite for blind and goal_count."""
    domain = write_problem(ONE_WAY_DOMAIN, name="one-way-domain.pddl")
    task = load_task(domain, write_problem(ONE_WAY_PROBLEM))
    assert task.solvable
    wrong_turn = task.successor(task.init, "(go a c)")
    for name in ("hmax", "hadd", "hff", "lmcut"):
        assert math.isinf(make_heuristic(name, task)(wrong_turn)), name
        assert math.isfinite(make_heuristic(name, task)(task.init)), name
    assert (
        make_heuristic("blind", task)(wrong_turn) == 1 and make_heuristic("goal_count", task)(wrong_turn) == 1
    )


def test_linear_features_hand_checked(ferry_task):
    """conftest's FERRY_3_2: ferry at l0, c0 at l0 -> l2, c1 at l1 -> l0. FF's relaxed plan: board c0 l0,
    sail l0 l2, debark c0 l2, sail l0 l1, board c1 l1, debark c1 l0 (6 actions); deletes: board 2,
    sail 1, debark 1 each, so 8 in total and 8/6 per action."""
    hff = make_heuristic("hff", ferry_task)
    plan = {ferry_task.actions[a] for a in hff.relaxed_plan(ferry_task.init)}
    assert plan == {
        "(board c0 l0)",
        "(sail l0 l2)",
        "(debark c0 l2)",
        "(sail l0 l1)",
        "(board c1 l1)",
        "(debark c1 l0)",
    }
    assert FEATURE_NAMES == ("goal_count", "hff", "ignored_deletes_total", "ignored_deletes_mean")
    np.testing.assert_allclose(hff.features(ferry_task.init), [2, 6, 8, 8 / 6])
    goal = ferry_task.state(["(at c0 l2)", "(at c1 l0)", "(at-ferry l0)", "(empty-ferry)"])
    np.testing.assert_array_equal(hff.features(goal), [0, 0, 0, 0])
    batch = ferry_task.states_to_array([ferry_task.init, goal, ferry_task.init])
    features = hff.features_batch(batch)
    assert features.shape == (3, 4) and features.dtype == np.float64
    np.testing.assert_array_equal(features[:, 1], hff.batch(batch))
    np.testing.assert_array_equal(features[0], features[2])


# ----------------------------------------------------------------------------- command line
def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pddlgym_sl.heuristics", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_json(ferry_task):
    """ferry_task is conftest's FERRY_3_2, loaded from a file."""
    domain, problem = ferry_task.domain_file, ferry_task.problem_file
    result = _cli(domain, problem, "--json")
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert list(values) == list(NAMES)
    for name in NAMES:
        assert values[name] == make_heuristic(name, ferry_task)(ferry_task.init)
    assert values["goal_count"] == 2 and values["hff"] == 6

    table = _cli(domain, problem)
    assert table.returncode == 0 and all(name in table.stdout for name in NAMES)


def test_cli_dead_end_and_bad_file(write_problem, tmp_path):
    gripper = DOMAINS / "gripper" / "domain.pddl"
    values = json.loads(_cli(gripper, write_problem(GRIPPER_DEAD_END), "--json").stdout)
    assert values["lmcut"] == values["hmax"] == "inf" and float(values["hff"]) == math.inf

    bad = _cli(gripper, write_problem("(define (problem p", name="bad.pddl"))
    assert bad.returncode == 2
    assert "bad.pddl" in bad.stderr and "Traceback" not in bad.stderr
    missing = _cli(gripper, tmp_path / "missing.pddl")
    assert missing.returncode == 2 and "file not found" in missing.stderr
