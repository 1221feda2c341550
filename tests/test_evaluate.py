"""GBFS with learned heuristics: batched == one-at-a-time values, determinism, dead ends, and the
evaluation CLI end to end on a tiny trained run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

import domains
from agents import learned_heuristic
from agents.apps.supervised import Args, train
from agents.evaluation import EvaluationConfig as EvalArgs
from agents.evaluation import evaluate, lockstep_width
from agents.heads import make_head
from agents.learned_heuristic import LearnedHeuristic, TrainedModel
from agents.models import make_model
from pddlgym_sl import load_task
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.search import gbfs
from tests.problems import states_of_a_search


@pytest.fixture(scope="module", params=["nlm", "hgn", "linear", "wl"])
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


FERRY_DEAD = """(define (problem ferry-dead) (:domain ferry)
 (:objects l0 l1 c0)
 (:init (location l0) (location l1) (car c0) (not-eq l0 l1) (not-eq l1 l0) (at c0 l1) (at-ferry l0))
 (:goal (and (at c0 l0))))
"""  # no (empty-ferry): the car can never board


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def torch_threads(request):
    """Run a test with 1 torch thread (bounds, then the forward pass on the live states) and with
    2 (bounds on a second thread while the forward pass covers every state)."""
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


def test_dead_ends_get_inf(trained_run, tmp_path, torch_threads):
    path = tmp_path / "dead.pddl"
    path.write_text(FERRY_DEAD)
    task = load_task(domains.domain_file("ferry"), path)
    heuristic = LearnedHeuristic(TrainedModel.load(trained_run), task)
    assert heuristic(task.init) == np.inf
    states = task.states_to_array([task.init] + [s for _, s in task.successors(task.init)])
    assert np.all(heuristic.batch(states) == np.inf)


def test_values_do_not_depend_on_the_thread_count(trained_run, tmp_path):
    """The 2-thread path (bounds computed beside the forward pass) gives the 1-thread values."""
    task = _ferry_task(tmp_path, locations=6, cars=5)
    heuristic = LearnedHeuristic(TrainedModel.load(trained_run), task)
    states = [task.init] + [s for _, s in task.successors(task.init)]
    states += [s for _, s in task.successors(states[-1])]
    batch = task.states_to_array(states)
    before = torch.get_num_threads()
    try:
        values = []
        for threads in (1, 2):
            torch.set_num_threads(threads)
            values.append(heuristic.batch(batch))
    finally:
        torch.set_num_threads(before)
    np.testing.assert_array_equal(values[0], values[1])


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
    # the first problem of the process warmed the kernels up outside its timer, and says how long
    assert sorted(r["compile_seconds"] > 0 for r in results) == [False, True]
    expected = np.mean([r["evaluations"] if r["solved"] else 500 for r in results])
    assert summary["mean_evaluations"] == pytest.approx(expected)
    # a re-run skips finished problems and reproduces the summary
    again = evaluate(EvalArgs(run=trained_run, split="test", problems=2, limit=500, quiet=True))
    assert {k: v for k, v in again.items() if k != "wall_seconds"} == {
        k: v for k, v in summary.items() if k != "wall_seconds"
    }
    assert summary["wall_seconds"] <= again["wall_seconds"] < summary["wall_seconds"] + 5  # kept, not reset


def test_evaluate_lockstep_equals_one_search_at_a_time(trained_run, tmp_path):
    """``--lockstep`` (the default for a learned heuristic on the torch path) records every problem
    as ``--lockstep 1`` does: the same plans, evaluations and expansions (only the clocks differ)."""
    wl = trained_run.parent.name.startswith("runs-wl")  # the fixture's directory
    results = {}
    for width in (1, 3):
        out = tmp_path / f"lockstep-{width}"
        args = EvalArgs(
            run=trained_run, split="test", limit=300, lockstep=width, out=out, quiet=True, compiled=not wl
        )
        summary = evaluate(args)
        assert summary["lockstep"] == width and summary["problems"] == 3
        results[width] = {
            p.name: {k: v for k, v in json.loads(p.read_text()).items() if not k.endswith("seconds")}
            for p in (out / "problems").glob("*.json")
        }
    assert results[1] == results[3] and len(results[1]) == 3
    default = evaluate(EvalArgs(run=trained_run, split="test", limit=300, out=tmp_path / "d", quiet=True))
    assert default["lockstep"] == (1 if wl else 8)  # a compiled WL run searches inside the engine
    if wl:  # and finds the same plans
        for p in (tmp_path / "d" / "problems").glob("*.json"):
            kept = {k: v for k, v in json.loads(p.read_text()).items() if not k.endswith("seconds")}
            assert kept == results[1][p.name]
    one_job = EvalArgs(run=trained_run, split="test", limit=300, jobs=2, out=tmp_path / "j", quiet=True)
    assert lockstep_width(one_job, "nlm") == 1
    assert lockstep_width(EvalArgs(run=trained_run), "wl") == 1
    assert lockstep_width(EvalArgs(run=trained_run, compiled=False), "wl") == 8
    with pytest.raises(ConfigError, match="--jobs 1"):
        lockstep_width(EvalArgs(run=trained_run, lockstep=4, jobs=2), "nlm")
    with pytest.raises(ConfigError, match="--no-compiled"):
        lockstep_width(EvalArgs(run=trained_run, lockstep=4), "wl")
    with pytest.raises(ConfigError, match="learned heuristic"):
        lockstep_width(EvalArgs(heuristic="hff", domain="ferry", lockstep=4), None)


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


def test_the_test_reduced_problems_are_planned_on_without_a_dataset(tmp_path, monkeypatch, capsys):
    """``agents.evaluate --split test-reduced`` (the docs' confidence example, a run on data/small)
    was refused: "unknown split"; the preset's problems are generated like Table 3's splits."""
    from agents.apps.evaluate import main
    from pddlgym_sl.data.presets import get_preset

    monkeypatch.setenv("PDDLGYM_SL_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    argv = ["--heuristic", "hff", "--domain", "ferry", "--split", "test-reduced", "--problems", "2"]
    assert main([*argv, "--limit", "2000", "--out", str(out), "--quiet"]) == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["split"], summary["problems"], summary["solved"]) == ("test-reduced", 2, 2)
    names = {
        f"{spec.filename.removesuffix('.pddl')}.json"
        for spec in get_preset("test-reduced", "ferry").splits["test-reduced"]
    }
    assert {p.name for p in (out / "problems").iterdir()} <= names


def test_accuracy_alone_prints_table_1_without_planning(trained_run, capsys):
    """``--run R --accuracy`` prints the test-split metrics and writes accuracy.json; no search runs."""
    from agents.apps.evaluate import main

    before = {p for p in (trained_run / "eval").rglob("*")} if (trained_run / "eval").exists() else set()
    assert main(["--run", str(trained_run), "--accuracy"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    stored = json.loads((trained_run / "eval" / "accuracy.json").read_text())
    assert "mse" in line and "nll" in line and "hff_mse" in line and np.isfinite(stored["test_mse"])
    made = {p for p in (trained_run / "eval").rglob("*")} - before
    assert made == {trained_run / "eval" / "accuracy.json"}  # no eval/<split>/ problems: nothing planned


def test_memory_limit_ends_a_search_with_its_status_and_is_searched_again_under_another(tmp_path):
    """``--memory-limit`` reaches the search: blind GBFS on ferry 40/40 under 1 MB ends with status
    memory_limit (recorded with the limit); the same command keeps it, another limit searches again."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "domain.pddl").write_text(domains.domain_file("ferry").read_text())
    (tasks / "p1.pddl").write_text(domains.generate_problem("ferry", seed=1, locations=40, cars=40))
    out = tmp_path / "eval"
    args = EvalArgs(heuristic="blind", tasks=tasks, limit=10**8, memory_limit=1, out=out, quiet=True)
    assert evaluate(args)["solved"] == 0
    record = json.loads((out / "problems" / "p1.json").read_text())
    assert record["status"] == "memory_limit" and record["memory_limit"] == 1
    stamp = (out / "problems" / "p1.json").stat().st_mtime_ns
    evaluate(args)  # the same budget: kept
    assert (out / "problems" / "p1.json").stat().st_mtime_ns == stamp
    evaluate(replace(args, memory_limit=2))  # another memory limit: searched again
    assert json.loads((out / "problems" / "p1.json").read_text())["memory_limit"] == 2
    with pytest.raises(ConfigError, match="memory-limit"):
        evaluate(EvalArgs(run=tmp_path, search="dual", memory_limit=100))


def test_limits_that_cover_grounding_end_a_task_in_its_grounding_or_leave_its_search_the_rest(tmp_path):
    """``--limits-cover-grounding``: a time limit shorter than loading the task ends it before any
    search (status time_limit, ended_in grounding); a long one solves it, the record saying the
    limits covered grounding; changing the flag searches again."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "domain.pddl").write_text(domains.domain_file("ferry").read_text())
    (tasks / "p1.pddl").write_text(domains.generate_problem("ferry", seed=1, locations=30, cars=30))
    out = tmp_path / "eval"
    args = EvalArgs(heuristic="hff", tasks=tasks, time_limit=0.001, limits_cover_grounding=True, out=out,
                    quiet=True)  # fmt: skip
    assert evaluate(args)["solved"] == 0
    record = json.loads((out / "problems" / "p1.json").read_text())
    assert (record["status"], record["ended_in"], record["evaluations"]) == ("time_limit", "grounding", 0)
    summary = evaluate(replace(args, time_limit=120))
    record = json.loads((out / "problems" / "p1.json").read_text())
    assert record["limits_cover_grounding"] and "ended_in" not in record and record["load_seconds"] > 0
    assert summary["solved"] == 1 and summary["mean_evaluations_solved"] == record["evaluations"]
    evaluate(replace(args, time_limit=120, limits_cover_grounding=False))  # another protocol: again
    assert not json.loads((out / "problems" / "p1.json").read_text())["limits_cover_grounding"]
    with pytest.raises(ConfigError, match="needs --time-limit"):
        EvalArgs(heuristic="hff", limits_cover_grounding=True)


IPC_FLOORTILE = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt" / "floortile"


@pytest.mark.skipif(not IPC_FLOORTILE.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC_FLOORTILE}")
@pytest.mark.parametrize("dist", ["n", "cat"])
@pytest.mark.parametrize("clip", [False, True])
def test_values_that_do_not_read_the_bound_find_dead_ends_by_hmax(dist, clip, monkeypatch):
    """N and the categorical head without clip read their LM-cut bound only where it is infinite,
    so hmax stands in for it; with clip the bound's values count and LM-cut stays. Every value,
    dead ends included, equals the one computed with LM-cut."""
    # painted tiles block the robots: many dead ends among the states a search meets
    task = load_task(
        IPC_FLOORTILE / "domain.pddl", sorted((IPC_FLOORTILE / "testing-easy").glob("*.pddl"))[4]
    )
    states = states_of_a_search(task, budget=300)
    head = make_head(dist, sigma="fixed", residual="none", bound="lmcut", max_cost=40)
    torch.manual_seed(0)
    trained = TrainedModel(make_model("hgn", n_outputs=head.n_outputs).eval(), head, "hgn", "floortile", None)
    fast = LearnedHeuristic(trained, task, clip=clip)
    assert fast.bound_key == ("lmcut" if clip else "hmax")
    monkeypatch.setattr(learned_heuristic, "dead_end_bound", lambda bound: bound)
    with_lmcut = LearnedHeuristic(trained, task, clip=clip)
    assert with_lmcut.bound_key == "lmcut"
    values = fast.batch(states)
    assert np.isinf(values).any() and np.isfinite(values).any()
    np.testing.assert_array_equal(values, with_lmcut.batch(states))
    np.testing.assert_array_equal(
        fast.values_and_confidences(states)[1], with_lmcut.values_and_confidences(states)[1]
    )
