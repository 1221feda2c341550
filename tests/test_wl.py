"""WL features of the ILG (`agents.models.wl`, computed by `wlplan`): invariant under renaming
objects, sensitive to the goal, the same batched and one state at a time, the same after the
colour table is stored and reloaded, and the same from the training and the search inputs."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

import domains
from agents.apps.supervised import Args, train
from agents.learned_heuristic import LearnedHeuristic, TrainedModel
from agents.models.wl import WLFeaturizer, WLSearchInputs, WLTrainingInputs
from agents.models.wl.vocabulary import TaskAtoms, wl_domain
from pddlgym_sl import load_task
from pddlgym_sl.data.dataset import load_split
from pddlgym_sl.search import gbfs

FERRY = domains.domain_file("ferry")
IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"


def _rename(text: str, objects: list[str], prefix: str = "renamed") -> tuple[str, dict[str, str]]:
    """The problem text with every object renamed (new names sort in the reverse order)."""
    mapping = {o: f"{prefix}{len(objects) - k:03d}" for k, o in enumerate(objects)}
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, objects)) + r")(?![\w-])")
    body = text[text.index("(:objects") :]  # leave the header comment and problem name alone
    return text[: text.index("(:objects")] + pattern.sub(lambda m: mapping[m.group(1)], body), mapping


def _plan_states(task, plan):
    return task.states_to_array(task.validate_plan(plan))


def _featurizer(domain_file, *tasks_and_states) -> WLFeaturizer:
    domain, _ = wl_domain(str(domain_file))
    data = [(TaskAtoms(t).problem, TaskAtoms(t).states(s)) for t, s in tasks_and_states]
    return WLFeaturizer.fit(domain, data)


def _features(featurizer, task, states) -> np.ndarray:
    atoms = TaskAtoms(task)
    return featurizer.embed(atoms.problem, atoms.states(states))


def _renamed_pair(tmp_path, domain_file, text):
    original = tmp_path / "original.pddl"
    original.write_text(text)
    task = load_task(domain_file, original)
    renamed_text, mapping = _rename(text, [o for o in task.objects if o not in _constants(domain_file)])
    renamed = tmp_path / "renamed.pddl"
    renamed.write_text(renamed_text)
    other = load_task(domain_file, renamed)
    plan = gbfs(task, "hff").plan
    renamed_plan = [re.sub(r"[\w-]+", lambda m: mapping.get(m.group(0), m.group(0)), a) for a in plan]
    return task, _plan_states(task, plan), other, _plan_states(other, renamed_plan)


def _constants(domain_file) -> set[str]:
    domain, _ = wl_domain(str(domain_file))
    return set(domain.constant_objects)


def test_isomorphic_states_with_renamed_objects_have_equal_features(tmp_path):
    text = domains.generate_problem("ferry", seed=3, locations=4, cars=3)
    task, states, other, other_states = _renamed_pair(tmp_path, FERRY, text)
    assert task.facts != other.facts  # different names, different fact numbering
    featurizer = _featurizer(FERRY, (task, states))
    assert featurizer.n_features > 10
    assert np.array_equal(_features(featurizer, task, states), _features(featurizer, other, other_states))


@pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")
@pytest.mark.parametrize("domain", ["sokoban", "childsnack"])  # domains with constants
def test_renaming_invariance_on_ipc_tasks(tmp_path, domain):
    domain_file = IPC / domain / "domain.pddl"
    text = (IPC / domain / "training" / "p01.pddl").read_text()
    task, states, other, other_states = _renamed_pair(tmp_path, domain_file, text)
    featurizer = _featurizer(domain_file, (task, states))
    assert np.array_equal(_features(featurizer, task, states), _features(featurizer, other, other_states))


def test_states_that_differ_in_a_goal_atom_have_different_features(tmp_path):
    text = domains.generate_problem("ferry", seed=3, locations=4, cars=3)
    path = tmp_path / "p.pddl"
    path.write_text(text)
    task = load_task(FERRY, path)
    init = task.init.fact_indices().tolist()
    goal = next(int(g) for g in task.goal if int(g) not in init)
    achieved = task.states_to_array([task.init, task.state([*init, goal])])
    featurizer = _featurizer(FERRY, (task, achieved))
    x = _features(featurizer, task, achieved)
    assert not np.array_equal(x[0], x[1])
    # the same state under a goal that differs in one atom
    car, loc = re.match(r"\(at (c\d) (l\d)\)", task.facts[goal]).groups()
    new_loc = next(f"l{k}" for k in range(4) if f"l{k}" != loc)
    head, tail = text.split("(:goal")
    other_path = tmp_path / "q.pddl"
    other_path.write_text(head + "(:goal" + tail.replace(task.facts[goal], f"(at {car} {new_loc})"))
    other = load_task(FERRY, other_path)
    assert other.facts == task.facts and not np.array_equal(other.goal, task.goal)
    assert not np.array_equal(
        _features(featurizer, task, achieved[:1]), _features(featurizer, other, achieved[:1])
    )


def test_batched_equals_one_at_a_time_and_the_colour_table_reloads(tmp_path):
    path = tmp_path / "p.pddl"
    path.write_text(domains.generate_problem("ferry", seed=5, locations=5, cars=4))
    task = load_task(FERRY, path)
    states = _plan_states(task, gbfs(task, "hff").plan)
    successors = np.concatenate([task.expand(np.ascontiguousarray(s))[1] for s in states])
    featurizer = _featurizer(FERRY, (task, states))
    batched = _features(featurizer, task, successors)
    single = np.concatenate(
        [_features(featurizer, task, successors[i : i + 1]) for i in range(len(successors))]
    )
    assert np.array_equal(batched, single)
    reloaded = WLFeaturizer.from_config(featurizer.config)
    assert reloaded.key == featurizer.key and np.array_equal(_features(reloaded, task, successors), batched)
    # counts of colours met after fitting are dropped, never mistaken for others
    assert batched.shape == (len(successors), featurizer.n_features) and np.all(batched >= 0)


@pytest.fixture(scope="module")
def wl_run(tiny_dataset, tmp_path_factory):
    runs = tmp_path_factory.mktemp("wl-runs")
    common = {"data": tiny_dataset, "runs": runs, "val_every": 100, "batch_size": 32, "quiet": True}
    return train(Args(model="wl", dist="n", sigma="fixed", residual="none", steps=600, **common))


def test_training_and_search_inputs_give_the_same_values(wl_run, tiny_dataset):
    trained = TrainedModel.load(wl_run)
    split = load_split(tiny_dataset / "ferry" / "val")
    inputs = WLTrainingInputs(split)
    head = trained.head
    with torch.no_grad():
        raw = trained.model(inputs.batch(np.arange(len(split)), torch.device("cpu")))
    lower = split.values[head.lower_key].astype(np.float32)
    base = split.values[head.residual_key].astype(np.float32) if head.residual_key else None
    expected = head.heuristic_values(raw, lower, base)
    for k in range(len(split.problems)):
        rows = split.problem_of == k
        values = LearnedHeuristic(trained, split.task(k)).batch(split.states[k])
        np.testing.assert_allclose(values, expected[rows], rtol=1e-6, atol=1e-5)
    # the search inputs compute counts, the training inputs read them from the split's cache
    search = WLSearchInputs(split.task(0), torch.device("cpu"))(split.states[0])
    counts = search.features(trained.model.featurizer)
    assert torch.equal(
        counts, inputs.features(trained.model.featurizer)[torch.from_numpy(split.problem_of == 0)]
    )


def test_the_run_learns(wl_run, tiny_dataset):
    import json

    metrics = json.loads((wl_run / "metrics.json").read_text())
    val = load_split(tiny_dataset / "ferry" / "val")
    assert metrics["best_val_mse"] < float(np.mean((val.values["hff"] - val.h_star) ** 2))
    config = json.loads((wl_run / "model.json").read_text())["model"]
    assert (
        config["name"] == "wl"
        and len(config["mean"]) == WLFeaturizer.from_config(config["featurizer"]).n_features
    )


def test_the_ecai25_colour_table_settings_reach_the_fitted_table(tiny_dataset, tmp_path):
    """``--wl-iterations 1 --wl-pruning i-mf --wl-hash set`` (the ECAI 2025 study's best) are the
    table's, and differ from the default's; another model refuses them."""
    import json

    from pddlgym_sl.errors import ConfigError

    common = {"data": tiny_dataset, "runs": tmp_path, "steps": 5, "quiet": True}
    run = train(Args(model="wl", dist="n", sigma="fixed", residual="none", name="ecai", **common,
                     wl_iterations=1, wl_pruning="i-mf", wl_hash="set"))  # fmt: skip
    default = train(Args(model="wl", dist="n", sigma="fixed", residual="none", name="goose", **common))
    tables = [json.loads((r / "model.json").read_text())["model"]["featurizer"] for r in (run, default)]
    assert [(t["iterations"], t["pruning"]) for t in tables] == [(1, "i-mf"), (2, "none")]
    assert WLFeaturizer.from_config(tables[0]).n_features < WLFeaturizer.from_config(tables[1]).n_features
    assert json.loads((run / "args.json").read_text())["wl_pruning"] == "i-mf"
    with pytest.raises(ConfigError, match="--model wl only"):
        Args(model="nlm", wl_iterations=1, **common)
