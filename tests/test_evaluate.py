"""GBFS with learned heuristics: batched == one-at-a-time values, determinism, dead ends, and the
evaluation CLI end to end on a tiny trained run."""

from __future__ import annotations

import json

import numpy as np
import pytest

import domains
from agents.evaluate import Args as EvalArgs
from agents.evaluate import evaluate
from agents.learned_heuristic import LearnedHeuristic, TrainedModel
from agents.supervised import Args, train
from pddlgym_sl import load_task
from pddlgym_sl.search import gbfs
from tests.problems import GRIPPER_UNSOLVABLE


@pytest.fixture(scope="module", params=["nlm", "hgn", "linear"])
def trained_run(request, tiny_dataset, tmp_path_factory):
    runs = tmp_path_factory.mktemp(f"runs-{request.param}")
    return train(
        Args(
            model=request.param, data=tiny_dataset, runs=runs, steps=6, val_every=3, batch_size=32, quiet=True
        )
    )


def _ferry_task(tmp_path, locations=5, cars=4, seed=3):
    path = tmp_path / "p.pddl"
    path.write_text(domains.generate_problem("ferry", seed=seed, locations=locations, cars=cars))
    return load_task(domains.domain_file("ferry"), path)


def test_batched_values_equal_one_at_a_time(trained_run, tmp_path):
    task = _ferry_task(tmp_path)
    heuristic = LearnedHeuristic(TrainedModel.load(trained_run), task)
    states = [task.init] + [s for _, s in task.successors(task.init)]
    for _, s in task.successors(states[-1]):
        states.append(s)
    batch = heuristic.batch(task.states_to_array(states))
    single = np.array([heuristic(s) for s in states])
    np.testing.assert_allclose(batch, single, rtol=1e-5, atol=1e-5)
    lower = LearnedHeuristic(TrainedModel.load(trained_run), task).lower.batch(task.states_to_array(states))
    assert np.all(batch >= lower - 0.1 - 1e-5)  # TN's E[x] respects the open bound


def test_gbfs_with_a_model_is_deterministic(trained_run, tmp_path):
    task = _ferry_task(tmp_path)
    trained = TrainedModel.load(trained_run)
    first = gbfs(task, LearnedHeuristic(trained, task), max_evaluations=2000)
    second = gbfs(task, LearnedHeuristic(TrainedModel.load(trained_run), task), max_evaluations=2000)
    assert (first.plan, first.evaluations, first.expansions) == (
        second.plan,
        second.evaluations,
        second.expansions,
    )
    if first.solved:
        task.validate_plan(first.plan)


def test_dead_ends_get_inf(trained_run, tmp_path):
    path = tmp_path / "dead.pddl"
    path.write_text(GRIPPER_UNSOLVABLE)
    task = load_task(domains.domain_file("gripper"), path)
    # a ferry-trained model on a gripper task: the infinite admissible bound decides before any forward pass
    heuristic = LearnedHeuristic(TrainedModel.load(trained_run), task)
    assert heuristic(task.init) == np.inf


def test_evaluate_cli_end_to_end(trained_run, tiny_dataset, tmp_path):
    summary = evaluate(EvalArgs(run=trained_run, split="test", problems=2, limit=500, quiet=True))
    assert summary["problems"] == 2 and 0 <= summary["coverage"] <= 1
    out = trained_run / "eval" / "test"
    results = [json.loads(p.read_text()) for p in sorted((out / "problems").glob("*.json"))]
    assert len(results) == 2
    for r in results:
        task = load_task(
            tiny_dataset / "ferry" / "test" / "domain.pddl",
            tiny_dataset / "ferry" / "test" / "problems" / r["problem"],
        )
        if r["solved"]:
            assert task.is_goal(task.validate_plan(r["plan"])[-1]) and r["plan_length"] == len(r["plan"])
        assert r["evaluations"] <= 500
    expected = np.mean([r["evaluations"] if r["solved"] else 500 for r in results])
    assert summary["mean_evaluations"] == pytest.approx(expected)
    # a re-run skips finished problems and reproduces the summary
    again = evaluate(EvalArgs(run=trained_run, split="test", problems=2, limit=500, quiet=True))
    assert {k: v for k, v in again.items() if k != "wall_seconds"} == {
        k: v for k, v in summary.items() if k != "wall_seconds"
    }


def test_baseline_evaluation(tiny_dataset, tmp_path):
    summary = evaluate(
        EvalArgs(
            heuristic="hff", domain="ferry", split="test", data=tiny_dataset, out=tmp_path / "hff", quiet=True
        )
    )
    assert summary["heuristic"] == "hff" and summary["coverage"] == 1.0
    assert (tmp_path / "hff" / "summary.json").is_file()


def test_reduced_problem_count_keeps_every_size():
    """``--problems N`` spreads over the sorted split instead of taking its N smallest problems."""
    from pddlgym_sl.envs.problems import split_files, spread

    files = split_files("gripper", "plan")
    sizes = {f.name.rsplit("-s", 1)[0] for f in files}
    chosen = spread(files, 10)
    assert len(chosen) == len(set(chosen)) == 10
    assert {f.name.rsplit("-s", 1)[0] for f in chosen} == sizes
    assert spread(files, None) == files and spread(files, 1000) == files
