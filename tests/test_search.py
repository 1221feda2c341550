"""GBFS and A*: Fast Downward's semantics (eager, goal test at expansion, no re-evaluation, FIFO
ties, its successor order; node for node against Fast Downward itself), the budget, both ways of
evaluating (compiled and batched), and plan correctness (every plan validated by replay; optimal
costs against breadth-first search)."""

from __future__ import annotations

import json
from collections import deque

import numpy as np
import pytest

import domains
from pddlgym_sl import load_task
from pddlgym_sl.fd import run_fast_downward
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.plan import main as plan_main
from pddlgym_sl.search import astar, gbfs
from tests.problems import DOMAINS, GRIPPER_UNSOLVABLE


class Recorder:
    """A goal-count heuristic that records every batch it is asked to evaluate."""

    def __init__(self, task, value=None):
        self.task = task
        self.value = value
        self.batches: list[list[bytes]] = []

    def batch(self, states: np.ndarray) -> np.ndarray:
        self.batches.append([row.tobytes() for row in states])
        if self.value is not None:
            return np.full(len(states), self.value, dtype=float)
        t = self.task
        return np.array(
            [sum(int(g) not in t.state_from_words(row) for g in t.goal) for row in states], dtype=float
        )


def optimal_cost(task) -> int:
    """Breadth-first search: the optimal plan length of a unit-cost task (independent reference)."""
    frontier, seen = deque([(task.init, 0)]), {task.init}
    while frontier:
        state, depth = frontier.popleft()
        if task.is_goal(state):
            return depth
        for _, succ in task.successors(state):
            if succ not in seen:
                seen.add(succ)
                frontier.append((succ, depth + 1))
    raise AssertionError("unsolvable")


def test_gbfs_finds_a_valid_plan(ferry_task):
    result = gbfs(ferry_task, Recorder(ferry_task))
    assert result.solved and result.status == "solved"
    assert ferry_task.is_goal(ferry_task.validate_plan(result.plan)[-1])
    assert result.cost == len(result.plan) == len(result.plan_indices)


def test_gbfs_never_evaluates_a_state_twice_and_batches_each_expansion(ferry_task):
    h = Recorder(ferry_task)
    result = gbfs(ferry_task, h)
    evaluated = [key for batch in h.batches for key in batch]
    assert len(evaluated) == len(set(evaluated)) == result.evaluations
    # one call for the initial state, then at most one call per expansion
    assert len(h.batches) <= 1 + result.expansions
    goal_states = [
        k for k in evaluated if ferry_task.is_goal(ferry_task.state_from_words(np.frombuffer(k, "<u8")))
    ]
    # goal test at expansion: the goal is evaluated when generated, and found when expanded
    assert len(goal_states) >= 1


def test_gbfs_with_constant_heuristic_is_breadth_first(ferry_task, gripper_task):
    # FIFO tie-breaking + goal test at expansion + constant h = breadth-first search: optimal plans.
    for task in (ferry_task, gripper_task):
        assert gbfs(task, Recorder(task, value=0.0)).cost == optimal_cost(task)


def test_astar_is_optimal(ferry_task, gripper_task):
    for task in (ferry_task, gripper_task):
        result = astar(task, Recorder(task))  # goal count is admissible here (one goal per action)
        assert result.solved and result.cost == optimal_cost(task)
        task.validate_plan(result.plan)


def test_gbfs_respects_the_evaluation_budget(ferry_task):
    for budget in (1, 2, 5):
        result = gbfs(ferry_task, Recorder(ferry_task, value=0.0), max_evaluations=budget)
        assert result.evaluations <= budget
        assert not result.solved and result.status == "evaluation_limit"


def test_dead_ends_are_pruned_and_unsolvable_tasks_exhaust(write_problem):
    task = load_task(DOMAINS / "gripper" / "domain.pddl", write_problem(GRIPPER_UNSOLVABLE))
    result = gbfs(task, Recorder(task, value=0.0))
    assert not result.solved and result.status == "exhausted"
    result = gbfs(task, Recorder(task, value=float("inf")))
    assert result.expansions == 0 and result.evaluations == 1 and result.status == "exhausted"


@pytest.mark.parametrize("search", [gbfs, astar])
@pytest.mark.parametrize("name", ["hff", "lmcut", "goal_count"])
def test_compiled_and_batched_evaluation_search_alike(ferry_task, gripper_task, search, name):
    """A built-in heuristic runs inside the compiled loop; the same values given as a batch
    function (as a learned heuristic is) must give the same search, node for node."""
    for task in (ferry_task, gripper_task):
        compiled = search(task, name)
        batched = search(task, make_heuristic(name, task).batch)
        assert compiled.plan == batched.plan and compiled.solved
        assert (compiled.evaluations, compiled.expansions, compiled.generated) == (
            batched.evaluations,
            batched.expansions,
            batched.generated,
        )


@pytest.mark.parametrize(
    ("domain", "params"), [("ferry", {"locations": 4, "cars": 3}), ("gripper", {"balls": 4})]
)
@pytest.mark.parametrize(("search", "config"), [(gbfs, "eager_greedy([ff()])"), (astar, "astar(lmcut())")])
def test_search_equals_fast_downward_node_for_node(write_problem, domain, params, search, config):
    problem = write_problem(domains.generate_problem(domain, seed=2, **params))
    task = load_task(DOMAINS / domain / "domain.pddl", problem)
    run = run_fast_downward(DOMAINS / domain / "domain.pddl", problem, config, time_limit=60)
    result = search(task, "hff" if search is gbfs else "lmcut", max_evaluations=None)
    assert result.plan == run.plan
    assert (result.evaluations, result.expansions, result.cost) == (run.evaluations, run.expansions, run.cost)


def test_gbfs_rejects_nan_heuristic_values(ferry_task):
    with pytest.raises(ValueError, match="NaN"):
        gbfs(ferry_task, lambda states: np.full(len(states), np.nan))


def test_plan_cli_json(write_problem, capsys):
    from tests.problems import FERRY_3_2

    code = plan_main(
        [
            str(DOMAINS / "ferry" / "domain.pddl"),
            str(write_problem(FERRY_3_2)),
            "--heuristic",
            "hff",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"solved", "plan", "cost", "evaluations", "expansions", "seconds"} <= set(out)
    assert out["solved"] and out["cost"] == len(out["plan"]) and out["plan"][0].startswith("(")


def test_plan_cli_warms_up_before_the_timed_search(write_problem, capsys, monkeypatch):
    """The kernels are compiled by a small warm-up search whose time is reported apart
    (``compile_seconds``); the timed search runs after it, with the whole budget."""
    from pddlgym_sl import plan
    from pddlgym_sl.search.warm_up import WARM_UP_EVALUATIONS
    from tests.problems import FERRY_3_2

    budgets = []

    def recording_gbfs(task, heuristic, max_evaluations=None, **kwargs):
        budgets.append(max_evaluations)
        return gbfs(task, heuristic, max_evaluations=max_evaluations, **kwargs)

    monkeypatch.setitem(plan.SEARCHES, "gbfs", recording_gbfs)
    problem = str(write_problem(FERRY_3_2))
    assert plan_main([str(DOMAINS / "ferry" / "domain.pddl"), problem, "--max-evaluations", "500"]) == 0
    assert budgets == [WARM_UP_EVALUATIONS, 500]
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert " seconds=" in last and " compile_seconds=" in last
    assert plan_main([str(DOMAINS / "ferry" / "domain.pddl"), problem, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["compile_seconds"] >= 0


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_plan_cli_exits_1_without_a_plan(write_problem, capsys, json_flag):
    """Exit status 1 when no plan is found (here: a proven-unsolvable problem), with or without
    --json, as the module docstring documents."""
    problem = str(write_problem(GRIPPER_UNSOLVABLE))
    assert plan_main([str(DOMAINS / "gripper" / "domain.pddl"), problem, *json_flag]) == 1
    if json_flag:
        assert json.loads(capsys.readouterr().out)["solved"] is False


@pytest.mark.parametrize("budget", ["0", "-5", "ten"])
def test_plan_cli_rejects_bad_budgets(write_problem, capsys, budget):
    from tests.problems import FERRY_3_2

    args = [str(DOMAINS / "ferry" / "domain.pddl"), str(write_problem(FERRY_3_2))]
    assert plan_main([*args, "--max-evaluations", budget]) == 2
    assert "--max-evaluations" in capsys.readouterr().err


def test_plan_cli_reports_bad_files(tmp_path, capsys):
    bad = tmp_path / "bad.pddl"
    bad.write_text("(define (problem p) (:domain ferry")
    assert plan_main([str(DOMAINS / "ferry" / "domain.pddl"), str(bad)]) == 2
    assert str(bad) in capsys.readouterr().err


def test_a_time_limit_stops_a_search_inside_one_expansion(tmp_path):
    """The initial state of gripper with 300 balls has over 250 successors, each costing LM-cut
    milliseconds: a search whose limit passes while it values them stops between two of their
    evaluations instead of valuing them all (on childsnack's hard IPC tasks one expansion is over
    100,000 states), and reports the evaluations done."""
    problem = tmp_path / "gripper.pddl"
    problem.write_text(domains.generate_problem("gripper", seed=1, balls=300))
    task = load_task(domains.domain_file("gripper"), problem)
    gbfs(task, "lmcut", max_evaluations=2)  # compiled before the limited search
    successors = len(task.successors(task.init))
    assert successors > 250
    result = gbfs(task, "lmcut", time_limit=0.05)
    assert result.status == "time_limit"
    assert result.expansions == 1
    # about 8 ms per evaluation: the first slice is one unit of work, doubled while slices are
    # short (a first slice of 64 units overran the limit tenfold here, and by 90 s on 1,000 objects)
    assert 1 < result.evaluations < 40 < successors


def _gripper_task(tmp_path, balls: int):
    problem = tmp_path / f"gripper-{balls}.pddl"
    problem.write_text(domains.generate_problem("gripper", seed=1, balls=balls))
    return load_task(domains.domain_file("gripper"), problem)


def test_an_expansion_with_many_new_states_is_handed_out_in_slices(tmp_path, monkeypatch):
    """A Python heuristic gets an expansion's new states at most `MAX_BATCH` at a time (the time
    limit is checked between slices), and the search is the one that got them all at once."""
    import pddlgym_sl.search.driver as driver

    task = _gripper_task(tmp_path, 20)
    whole = Recorder(task)
    expected = gbfs(task, whole)
    assert max(len(b) for b in whole.batches) > 7
    monkeypatch.setattr(driver, "MAX_BATCH", 7)
    sliced = Recorder(task)
    result = gbfs(task, sliced)
    assert max(len(b) for b in sliced.batches) == 7
    assert [s for b in sliced.batches for s in b] == [s for b in whole.batches for s in b]
    same = ("evaluations", "expansions", "generated", "plan")
    assert [getattr(result, k) for k in same] == [getattr(expected, k) for k in same]


def test_a_time_limit_stops_a_python_heuristic_between_slices(tmp_path, monkeypatch):
    """The first expansion's 113 new states come in slices of 8 (80 ms each); a 0.3 s limit
    stops the search between slices, after the first and well before the last."""
    import time

    import pddlgym_sl.search.driver as driver

    task = _gripper_task(tmp_path, 100)
    successors = len(task.successors(task.init))
    # compile the engine for a Python heuristic first: a cold numba cache (a fresh CI machine)
    # spent 1.1 s of a 0.05 s limit before the initial state's evaluation
    gbfs(task, lambda states: np.zeros(len(states)), max_evaluations=2)

    def slow(states):
        time.sleep(0.01 * len(states))
        return np.zeros(len(states))

    monkeypatch.setattr(driver, "MAX_BATCH", 8)
    result = gbfs(task, slow, time_limit=0.3)
    assert result.status == "time_limit"
    assert result.expansions == 1
    assert 1 < result.evaluations < successors


def _buckets_outgrown_at_64_keys(monkeypatch) -> list:
    """Let a bucket queue hold at most 64 keys (its first size) and record each move into a heap."""
    from pddlgym_sl.search import open_lists

    moves: list = []
    to_heap = open_lists.buckets_to_heap
    monkeypatch.setattr(open_lists, "buckets_to_heap", lambda b, n: moves.append(b) or to_heap(b, n))
    monkeypatch.setattr(open_lists, "MAX_KEYS", 64)
    return moves


@pytest.mark.slow  # recompiles the engine with a small bucket limit (20 s)
def test_astar_whose_keys_outgrow_its_buckets_goes_on_in_a_heap_node_for_node(write_problem, monkeypatch):
    """A* with integer values keeps its open list in buckets keyed by (f, h); where the keys would
    exceed `open_lists.MAX_KEYS` (huge action costs), the same entries move into a heap midway.
    Both give Fast Downward's search, node for node."""
    problem = write_problem(domains.generate_problem("ferry", seed=3, locations=5, cars=5))
    task = load_task(DOMAINS / "ferry" / "domain.pddl", problem)
    run = run_fast_downward(DOMAINS / "ferry" / "domain.pddl", problem, "astar(lmcut())", time_limit=60)
    buckets = astar(task, "lmcut", max_evaluations=None)
    moves = _buckets_outgrown_at_64_keys(monkeypatch)  # the first buckets' keys: f (f + 1) / 2 + h < 64
    moved = astar(task, "lmcut", max_evaluations=None)
    assert len(moves) == 1 and run.cost >= 11  # a key of f = 11 or more asked for more keys
    expected = (run.plan, run.evaluations, run.expansions, run.cost)
    for result in (buckets, moved):
        assert (result.plan, result.evaluations, result.expansions, result.cost) == expected


@pytest.mark.slow  # recompiles the engine with a small bucket limit (20 s)
def test_gbfs_whose_values_outgrow_its_buckets_goes_on_in_a_heap_alike(write_problem, monkeypatch):
    """GBFS's buckets are keyed by h: values past `open_lists.MAX_KEYS` move the open list into
    a heap midway, and the search goes on node for node as it would have."""
    problem = write_problem(domains.generate_problem("ferry", seed=1, locations=6, cars=40))
    task = load_task(DOMAINS / "ferry" / "domain.pddl", problem)
    buckets = gbfs(task, "hff", max_evaluations=3000)
    moves = _buckets_outgrown_at_64_keys(monkeypatch)
    moved = gbfs(task, "hff", max_evaluations=3000)
    assert len(moves) == 1  # hFF > 64 at the start: 40 cars to board and debark
    assert (moved.plan, moved.evaluations, moved.expansions) == (
        buckets.plan,
        buckets.evaluations,
        buckets.expansions,
    )


def test_a_slow_warm_up_says_it_is_compiling_and_a_quick_one_says_nothing(monkeypatch, capsys):
    """The first search of a fresh cache compiles for seconds: the warm-up says so on stderr once
    it has run `ANNOUNCE_AFTER` seconds (issue 60), and a warm start stays silent."""
    import time

    from pddlgym_sl.search import warm_up as module

    monkeypatch.setattr(module, "ANNOUNCE_AFTER", 0.05)
    module.warm_up(lambda task, h, max_evaluations: time.sleep(0.3), None, None)
    assert "compiling the search kernels" in capsys.readouterr().err
    module.warm_up(lambda task, h, max_evaluations: None, None, None)
    time.sleep(0.1)
    assert capsys.readouterr().err == ""


@pytest.mark.slow  # compiles GBFS's hFF and batch kernels into an empty cache (about 40 s)
def test_kernels_compiled_in_the_background_land_in_the_disk_cache(write_problem, tmp_path):
    """`warm_up_in_background` fills numba's disk cache from a child process: the engine's loop for
    hFF and for a batch heuristic (a learned one's path) are then in the cache directory."""
    import os
    import subprocess
    import sys

    problem = write_problem(domains.generate_problem("ferry", seed=0, locations=3, cars=2))
    cache = tmp_path / "numba"
    code = (
        "import sys; from pddlgym_sl.search.warm_up import warm_up_in_background as w; "
        "from domains import domain_file; c = w(domain_file('ferry'), sys.argv[1]); c.join(); "
        "print(c.exitcode)"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", code, str(problem)], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["0"], out.stderr[-2000:]
    names = [p.name for p in cache.rglob("*.nbi")]
    kernels = ("run__pddlgym_sl_heuristics_relaxation_HFFArgs", "run__pddlgym_sl_search_engine_NoHeuristic")
    for kernel in kernels:
        assert any(kernel in name for name in names), (kernel, names)


def test_no_background_compile_without_a_disk_cache(monkeypatch, write_problem):
    import pddlgym_sl.numba_cache
    from pddlgym_sl.search.warm_up import warm_up_in_background

    monkeypatch.setattr(pddlgym_sl.numba_cache, "CACHE", False)
    problem = write_problem(domains.generate_problem("ferry", seed=0, locations=3, cars=2))
    assert warm_up_in_background(domains.domain_file("ferry"), problem) is None


def test_the_plan_command_caps_evaluations_only_without_a_time_limit():
    """``pddlgym_sl.plan``: the paper's 10,000 evaluations by default, no cap under ``--time-limit``
    (the time limit ends the search, as in the IPC), and ``--max-evaluations`` wins over both."""
    from pddlgym_sl.plan import _evaluation_budget, build_parser

    parse = build_parser("plan").parse_args
    assert _evaluation_budget(parse(["ferry"])) == 10_000
    assert _evaluation_budget(parse(["ferry", "--time-limit", "60"])) is None
    assert _evaluation_budget(parse(["ferry", "--time-limit", "60", "--max-evaluations", "5"])) == 5
