"""Upper bounds u in the data (`pddlgym_sl.data.upper`) and training with them (`--upper plan`):
h* ≤ u on every labelled state, computed once and resumed without recomputing, other label keys
kept, the generate/upper command lines, TN(μ, σ, l − 0.1, u + 0.1) training with a finite NLL, and
search values that respect u (E[x] ≤ u)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import pddlgym_sl.data.upper as upper_module
from agents.apps.supervised import Args, train
from agents.errors import AgentError
from agents.heads import make_head
from agents.learned_heuristic import LearnedHeuristic, TrainedModel
from agents.metrics import bound_inputs
from agents.models import model_spec
from pddlgym_sl import load_task
from pddlgym_sl.data.dataset import load_split
from pddlgym_sl.data.generate import Args as GenArgs
from pddlgym_sl.data.generate import run as generate
from pddlgym_sl.data.labels import add_columns, load_labels
from pddlgym_sl.data.upper import add_upper, plan_costs, upper_method
from pddlgym_sl.search import gbfs

SPLITS = ("train", "val", "test")


@pytest.fixture(scope="module")
def data_with_upper(tiny_dataset, tmp_path_factory) -> Path:
    """A copy of the tiny ferry dataset whose three splits have u."""
    root = tmp_path_factory.mktemp("upper") / "data"
    shutil.copytree(tiny_dataset, root)
    for split in SPLITS:
        add_upper(root / "ferry" / split, progress=False)
    return root


def _labels_snapshot(split_dir: Path) -> dict[str, dict[str, list]]:
    snap = {}
    for path in sorted((split_dir / "labels").glob("*.npz")):
        with np.load(path, allow_pickle=False) as z:
            snap[path.name] = {k: z[k].tolist() for k in z.files}
    return snap


def test_upper_bounds_hold_h_star_on_every_state(data_with_upper):
    for split in SPLITS:
        split_dir = data_with_upper / "ferry" / split
        data = load_split(split_dir)
        assert data.upper is not None and data.upper.shape == data.h_star.shape
        assert data.upper_method == upper_method()
        assert np.all(np.isfinite(data.upper))  # GBFS + hFF solves every ferry state
        assert np.all(data.upper >= data.h_star)  # h* (Fast Downward A* + LM-cut) ≤ a plan's cost
        assert np.all(data.upper[data.h_star == 0] == 0)
        entry = json.loads((split_dir / "manifest.json").read_text())["upper"]
        assert entry["states"] == len(data) and entry["no_plan"] == 0
        assert entry["suboptimal"] == int((data.upper > data.h_star).sum())
    # u is the cost of the plan GBFS + hFF finds from the state, which replays to the goal
    split_dir = data_with_upper / "ferry" / "test"
    labels = load_labels(next((split_dir / "labels").glob("*.npz")))
    task = load_task(split_dir / "domain.pddl", split_dir / "problems" / labels.problem)
    for i in (0, len(labels) // 2):
        start = task.state_from_words(labels.states[i])
        result = gbfs(dataclasses.replace(task, init=start), "hff", max_evaluations=None)
        task.validate_plan(result.plan, start=start)
        assert labels.upper[i] == result.cost >= labels.h_star[i]


def test_no_plan_within_the_budget_is_inf(ferry_task):
    states = ferry_task.states_to_array([ferry_task.init])
    upper, evaluations = plan_costs(ferry_task, states, max_evaluations=1)
    assert np.isinf(upper[0]) and evaluations == 1


def test_upper_is_computed_once_and_resumes(tiny_dataset, tmp_path, monkeypatch):
    clean, crashed = tmp_path / "clean", tmp_path / "crashed"
    for target in (clean, crashed):
        shutil.copytree(tiny_dataset / "ferry" / "val", target)
    add_upper(clean, progress=False)

    calls = []
    real = upper_module.plan_costs

    def crash_after_two(*args, **kwargs):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(upper_module, "plan_costs", crash_after_two)
    with pytest.raises(KeyboardInterrupt):
        add_upper(crashed, progress=False)
    assert sum(load_labels(f).upper is not None for f in (crashed / "labels").glob("*.npz")) == 2
    calls.clear()
    monkeypatch.setattr(upper_module, "plan_costs", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    add_upper(crashed, progress=False)
    n_files = len(list((crashed / "labels").glob("*.npz")))
    assert len(calls) == n_files - 2  # only the files the crash left
    assert _labels_snapshot(crashed) == _labels_snapshot(clean)
    assert not list(crashed.rglob("*.tmp"))
    calls.clear()
    add_upper(crashed, progress=False)  # finished: nothing is recomputed
    assert calls == []
    # another method (here: another budget) is recomputed
    add_upper(crashed, max_evaluations=50_000, progress=False)
    assert len(calls) == n_files and load_split(crashed).upper_method == upper_method(50_000)


def test_adding_upper_keeps_other_label_keys(tiny_dataset, tmp_path):
    split_dir = tmp_path / "val"
    shutil.copytree(tiny_dataset / "ferry" / "val", split_dir)
    path = next((split_dir / "labels").glob("*.npz"))
    add_columns(path, siblings=np.arange(3))  # as another column added to labels would be
    add_upper(split_dir, progress=False)
    with np.load(path, allow_pickle=False) as z:
        assert z["siblings"].tolist() == [0, 1, 2] and "upper" in z.files
    assert load_labels(path).upper is not None


def test_generate_upper_flag_and_upper_cli(tmp_path):
    manifests = generate(
        GenArgs(domain="ferry", split="train", limit=3, jobs=1, out=tmp_path, quiet=True, upper=True)
    )
    assert manifests[0]["upper"]["states"] == manifests[0]["summary"]["states"]
    split_dir = tmp_path / "ferry" / "train"
    data = load_split(split_dir)
    assert data.upper is not None and np.all(data.upper >= data.h_star)
    # a later run without --upper keeps the manifest's entry (the label files keep their column)
    generate(GenArgs(domain="ferry", split="train", limit=3, jobs=1, out=tmp_path, quiet=True))
    assert "upper" in json.loads((split_dir / "manifest.json").read_text())
    cmd = [sys.executable, "-m", "pddlgym_sl.data.upper", str(split_dir), "--quiet"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert f"u on {len(data)} states of 3 problems" in out.stdout
    bad = subprocess.run([*cmd[:-2], str(tmp_path / "nothing")], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "no label files" in bad.stderr


def test_upper_plan_trains_with_finite_nll(data_with_upper, tmp_path):
    run = train(
        Args(
            data=data_with_upper,
            runs=tmp_path,
            upper="plan",
            steps=6,
            val_every=3,
            batch_size=32,
            quiet=True,
            model="linear",
        )
    )
    metrics = json.loads((run / "metrics.json").read_text())
    assert np.isfinite(metrics["test_nll"]) and np.isfinite(metrics["test_mse"])
    assert json.loads((run / "model.json").read_text())["head"]["upper"] == "plan"
    # the training distribution is TN(μ, σ, l − 0.1, u + 0.1) with the data's u
    trained = TrainedModel.load(run)
    split = load_split(data_with_upper / "ferry" / "train")
    rows = np.arange(len(split))
    raw = trained.model(model_spec("linear").training_inputs(split).batch(rows, torch.device("cpu")))
    target, lower, base, upper = bound_inputs(split, trained.head, rows, torch.device("cpu"))
    torch.testing.assert_close(upper, torch.as_tensor(split.upper, dtype=torch.float32))
    dist = trained.head.distribution(raw, lower, base, upper)
    torch.testing.assert_close(dist.high, upper + 0.1)
    assert torch.isfinite(trained.head.nll(raw, target, lower, base, upper)).all()


def test_upper_plan_without_upper_bounds_is_a_clear_error(tiny_dataset, tmp_path):
    head = make_head("tn", upper="plan")
    split = load_split(tiny_dataset / "ferry" / "val")
    with pytest.raises(AgentError, match=r"pddlgym_sl\.data\.upper"):
        bound_inputs(split, head, np.arange(3), torch.device("cpu"))
    assert make_head("tn").upper_key is None and head.upper_key == "upper"


@pytest.mark.parametrize("sigma", ["learn", "fixed"])
def test_tn_search_value_respects_u(sigma):
    head = make_head("tn", sigma=sigma, residual="none")
    n = 7
    raw = torch.zeros(n, head.n_outputs, dtype=torch.float64)
    raw[:, 0] = torch.tensor([-50.0, 0.0, 2.0, 4.0, 5.0, 50.0, 1e4])
    if sigma == "learn":
        raw[:, 1] = -20.0  # σ ≈ 0.1
    lower = np.full(n, 2.0)
    upper = np.array([3.0, 3.0, 4.0, 4.0, 5.0, 6.0, np.inf])
    values = head.heuristic_values(raw, lower, None, upper=upper)
    assert np.all(values <= upper) and np.all(values >= lower - 0.1)
    torch_values = head.heuristic(raw, torch.from_numpy(lower), None, torch.from_numpy(upper))
    np.testing.assert_allclose(values, torch_values.numpy(), rtol=1e-9, atol=1e-9)
    # μ far above u: the mass sits at the open bound u + 0.1, and the value is u itself
    assert values[5] == 6.0
    # without u the default (1e5) applies, as for a head trained with upper="none"
    plain = head.heuristic_values(raw, lower, None)
    np.testing.assert_allclose(plain[:5], head.heuristic_values(raw, lower, None, upper=np.full(n, 1e5))[:5])
    assert plain[5] > 6.0


def test_learned_heuristic_takes_u_per_state(data_with_upper, tmp_path, ferry_task):
    run = train(
        Args(
            data=data_with_upper,
            runs=tmp_path,
            steps=4,
            val_every=2,
            batch_size=32,
            quiet=True,
            model="linear",
        )
    )
    heuristic = LearnedHeuristic(TrainedModel.load(run), ferry_task)
    states = ferry_task.states_to_array(
        [ferry_task.init] + [s for _, s in ferry_task.successors(ferry_task.init)]
    )
    free = heuristic.batch(states)
    upper = np.maximum(heuristic.lower.batch(states), 1.0)  # tight: at the lower bound
    bounded = heuristic.batch(states, upper)
    assert np.all(bounded <= upper) and np.all(bounded <= free + 1e-9)
    np.testing.assert_allclose(heuristic.batch(states, np.full(len(states), 1e5)), free)
