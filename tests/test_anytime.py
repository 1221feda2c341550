"""Anytime search (`pddlgym_sl.search.anytime`): strictly decreasing costs, every plan valid, never
below the optimum of A* + LM-cut and reaching it given enough evaluations (the pruning keeps the
optimal plan when l is admissible), u = C − g(s) passed to heuristics that take it, determinism,
the budget, and ``agents.evaluate --search anytime`` end to end."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import numpy as np
import pytest

import domains
from agents.apps import anytime_curves
from agents.apps.supervised import Args, train
from agents.evaluation import EvaluationConfig as EvalArgs
from agents.evaluation import evaluate
from agents.learned_heuristic import LearnedHeuristic, TrainedModel
from pddlgym_sl import load_task
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.search import SEARCHES, anytime, anytime_without_u, astar, gbfs

SMALL = [  # all but the first have a first GBFS + hFF plan above the optimum
    ("ferry", {"locations": 5, "cars": 4}, 1),
    ("ferry", {"locations": 6, "cars": 5}, 3),
    ("gripper", {"balls": 6}, 1),
    ("visitall", {"x": 4, "y": 4, "ratio": 1.0}, 2),
    ("blocksworld", {"blocks": 5}, 4),
]


def _task(tmp_path, domain, params, seed):
    path = tmp_path / f"{domain}-{seed}.pddl"
    path.write_text(domains.generate_problem(domain, seed=seed, **params))
    return load_task(domains.domain_file(domain), path)


class Recorder:
    """hFF (times 2: greedier, so there is something to improve) that takes u and records it."""

    def __init__(self, task):
        self.hff = make_heuristic("hff", task)
        self.lmcut = make_heuristic("lmcut", task)
        self.calls: list[tuple[np.ndarray, np.ndarray | None]] = []

    def batch(self, states, upper=None):
        self.calls.append((states.copy(), None if upper is None else upper.copy()))
        values = 2.0 * self.hff.batch(states)
        return values if upper is None else np.minimum(values, upper)


@pytest.mark.parametrize(("domain", "params", "seed"), SMALL, ids=lambda x: str(x))
@pytest.mark.parametrize("heuristic", [pytest.param("hff", marks=pytest.mark.slow), "goal_count", "recorder"])
def test_costs_decrease_plans_validate_and_the_optimum_is_reached(tmp_path, domain, params, seed, heuristic):
    task = _task(tmp_path, domain, params, seed)
    optimal = astar(task, "lmcut").cost
    h = Recorder(task) if heuristic == "recorder" else heuristic
    result = anytime(task, h, max_evaluations=None)
    costs = [i.cost for i in result.improvements]
    assert costs == sorted(set(costs), reverse=True)  # strictly decreasing
    evaluations = [i.evaluations for i in result.improvements]
    assert evaluations == sorted(evaluations) and evaluations[-1] <= result.evaluations
    for improvement in result.improvements:
        task.validate_plan(improvement.plan)
        assert len(improvement.plan) == improvement.cost >= optimal
    # with no budget the last restart exhausts: the pruning by g + LM-cut ≥ C kept the optimal plan
    assert result.status == "optimal" and result.cost == optimal == costs[-1]
    assert result.plan == result.improvements[-1].plan
    assert result.iterations == len(costs) + 1
    # the first plan is plain GBFS's, to the evaluation
    first = gbfs(task, h if heuristic != "recorder" else Recorder(task), max_evaluations=None)
    assert (costs[0], evaluations[0]) == (first.cost, first.evaluations)


@pytest.mark.parametrize("bound", ["hmax", "blind"])
def test_weaker_bounds_also_keep_the_optimum(tmp_path, bound):
    task = _task(tmp_path, "gripper", {"balls": 5}, 2)
    result = anytime(task, "hff", max_evaluations=None, bound=bound)
    assert result.status == "optimal" and result.cost == astar(task, "lmcut").cost


def test_heuristic_gets_u_equal_to_c_minus_g(tmp_path):
    task = _task(tmp_path, "gripper", {"balls": 6}, 1)
    h = Recorder(task)
    result = anytime(task, h, max_evaluations=None)
    assert len(result.improvements) >= 2
    first_calls = result.improvements[0].evaluations
    n_plain = next(i for i, (_, u) in enumerate(h.calls) if u is not None)
    plain, bounded = h.calls[:n_plain], h.calls[n_plain:]
    assert sum(len(s) for s, _ in plain) == first_calls  # plain GBFS first: no u
    assert all(u is not None for _, u in bounded)
    costs = [i.cost for i in result.improvements]
    init = np.array(task.init.words, dtype=np.uint64)
    roots = [u[0] for s, u in bounded if np.array_equal(s[0], init)]
    # each restart evaluates the initial state (g = 0) with u = C, unless LM-cut proves C optimal there
    assert roots == costs[: len(roots)] and len(roots) >= len(costs) - 1
    for states, upper in bounded:
        lower = h.lmcut.batch(states)
        assert np.all(lower < upper)  # the others were pruned (g + l ≥ C), not evaluated
        assert np.all(upper <= costs[0]) and np.all(upper == np.round(upper))
    # without pass_upper the heuristic is never given u (the pruning-only ablation)
    h2 = Recorder(task)
    ablation = anytime_without_u(task, h2, max_evaluations=None)
    assert all(u is None for _, u in h2.calls) and ablation.cost == result.cost


def test_deterministic_and_within_budget(tmp_path):
    task = _task(tmp_path, "visitall", {"x": 5, "y": 5, "ratio": 1.0}, 1)
    a, b = (anytime(task, "hff", max_evaluations=600) for _ in range(2))
    assert [(i.cost, i.evaluations, i.expansions, i.plan) for i in a.improvements] == [
        (i.cost, i.evaluations, i.expansions, i.plan) for i in b.improvements
    ]
    assert (a.plan, a.evaluations, a.expansions, a.pruned, a.status) == (
        b.plan,
        b.evaluations,
        b.expansions,
        b.pruned,
        b.status,
    )
    assert a.status == "evaluation_limit" and a.solved and a.evaluations <= 600


def test_no_plan_and_bad_bound(tmp_path, write_problem):
    from tests.problems import DOMAINS, GRIPPER_UNSOLVABLE

    task = load_task(DOMAINS / "gripper" / "domain.pddl", write_problem(GRIPPER_UNSOLVABLE))
    result = anytime(task, "hff")
    assert not result.solved and result.status == "exhausted" and result.improvements == []
    ferry = _task(tmp_path, "ferry", {"locations": 5, "cars": 4}, 1)
    short = anytime(ferry, "hff", max_evaluations=3)
    assert not short.solved and short.status == "evaluation_limit"
    with pytest.raises(ConfigError, match="admissible"):
        anytime(ferry, "hff", bound="hff")


def test_registered_and_on_the_plan_cli(tmp_path):
    assert SEARCHES["anytime"] is anytime and SEARCHES["anytime-no-u"] is anytime_without_u
    path = tmp_path / "p.pddl"
    path.write_text(domains.generate_problem("gripper", seed=1, balls=6))
    cmd = [sys.executable, "-m", "pddlgym_sl.plan", str(domains.domain_file("gripper")), str(path)]
    out = subprocess.run([*cmd, "--search", "anytime", "--json"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["solved"] and result["cost"] == result["improvements"][-1]["cost"]


@pytest.fixture(scope="module")
def tn_run(tiny_dataset, tmp_path_factory):
    runs = tmp_path_factory.mktemp("anytime-runs")
    return train(Args(data=tiny_dataset, runs=runs, steps=6, val_every=3, batch_size=32, quiet=True))


def test_learned_tn_heuristic_values_respect_u(tn_run, tmp_path):
    task = _task(tmp_path, "ferry", {"locations": 6, "cars": 5}, 3)
    learned = LearnedHeuristic(TrainedModel.load(tn_run), task)
    assert "upper" in inspect.signature(learned.batch).parameters  # how anytime knows to pass u
    seen = []

    class Spy:
        def batch(self, states, upper=None):
            values = learned.batch(states, upper)
            seen.append((values, upper))
            return values

    result = anytime(task, Spy(), max_evaluations=None)
    assert result.status == "optimal" and result.cost == astar(task, "lmcut").cost
    bounded = [(v, u) for v, u in seen if u is not None]
    assert bounded and all(np.all(v <= u) for v, u in bounded)


def test_evaluate_cli_search_anytime(tn_run, tiny_dataset, tmp_path):
    common = {"domain": "ferry", "split": "test", "data": tiny_dataset, "limit": 3000, "quiet": True}
    runs = {
        "gbfs": evaluate(EvalArgs(run=tn_run, out=tmp_path / "gbfs", **common)),
        "anytime": evaluate(EvalArgs(run=tn_run, out=tmp_path / "anytime", search="anytime", **common)),
    }
    assert runs["anytime"]["search"] == "anytime" and runs["anytime"]["coverage"] == runs["gbfs"]["coverage"]
    for problem in (tmp_path / "anytime" / "problems").glob("*.json"):
        record = json.loads(problem.read_text())
        plain = json.loads((tmp_path / "gbfs" / "problems" / problem.name).read_text())
        assert record["improvements"][0]["cost"] == plain["plan_length"] >= record["plan_length"]
        assert record["improvements"][0]["evaluations"] == plain["evaluations"]
        assert record["plan_length"] == record["improvements"][-1]["cost"]
    cmd = [sys.executable, "-m", "agents.evaluate", "--heuristic", "hff", "--domain", "ferry"]
    cmd += ["--split", "test", "--data", str(tiny_dataset), "--search", "anytime", "--quiet"]
    cmd += ["--out", str(tmp_path / "hff"), "--limit", "2000"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "hff" / "summary.json").read_text())
    assert summary["search"] == "anytime" and summary["coverage"] == 1.0
    # the curves and table of plan cost over evaluations
    curves = [f"{name}={tmp_path / name}" for name in ("gbfs", "anytime", "hff")]
    args = [
        "--curves",
        *curves,
        "--optimal",
        str(tiny_dataset / "ferry" / "test"),
        "--out",
        str(tmp_path / "plots"),
        "--name",
        "ferry",
    ]
    assert anytime_curves.main([*args, "--budgets", "10", "3000"]) == 0
    assert (tmp_path / "plots" / "ferry.png").stat().st_size > 0
    rows = (tmp_path / "plots" / "ferry.md").read_text().splitlines()[2:]
    scores = {r.split(" | ")[0].strip("| "): [float(x) for x in r.split(" | ")[1:3]] for r in rows}
    assert all(0 <= x <= 1 for v in scores.values() for x in v)
    assert scores["anytime"][1] >= scores["gbfs"][1] > 0  # the anytime curve never ends below GBFS's
    assert anytime_curves.main(["--curves", "bad", "--optimal", str(tmp_path)]) == 2
