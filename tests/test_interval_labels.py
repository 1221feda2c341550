"""Interval labels from satisficing plans (issue 57): the heads' interval-censored NLL against
direct formulas (mpmath), shortened plans, satisficing label files and splits, and training on them
beside optimal labels (``--interval-split``, ``--loss rank-nll``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
import torch

import domains
from agents.heads import OPEN_BOUND_EPS, make_head
from agents.losses import labelled_nll
from pddlgym_sl.data.dataset import concat_splits, load_split
from pddlgym_sl.data.generate import Args as GenerateArgs
from pddlgym_sl.data.generate import run as generate
from pddlgym_sl.data.labels import check_labels, label_plan, load_labels
from pddlgym_sl.data.shorten import eliminate_actions, remove_loops, shorten_plan
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.task import load_task

IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"


def _mp_interval(mu: float, sigma: float, low: float, high: float) -> float:
    with mp.workdps(60):
        a = (mp.mpf(low) - mp.mpf(mu)) / mp.mpf(sigma)
        b = (mp.mpf(high) - mp.mpf(mu)) / mp.mpf(sigma)
        if a > 0:  # the upper tail, where 1 - Φ would round to 0
            return float(mp.log((mp.erfc(a / mp.sqrt(2)) - mp.erfc(b / mp.sqrt(2))) / 2))
        return float(mp.log(mp.ncdf(b) - mp.ncdf(a)))


@pytest.mark.parametrize("sigma", ["fixed", "learn"])
def test_interval_nll_of_n_and_tn_equals_mpmath(sigma):
    """N: ``−log P(l − 0.1 ≤ X ≤ u + 0.1)``; TN: the same over ``P(l − 0.1 ≤ X ≤ 1e5)``; for μ far
    below, inside and far above the interval."""
    raw = torch.tensor([[-80.0, 0.3], [4.0, -1.0], [7.5, 2.0], [300.0, 0.0]], dtype=torch.float64)
    raw = raw[:, :1] if sigma == "fixed" else raw
    lower = torch.tensor([3.0, 3.0, 5.0, 2.0], dtype=torch.float64)
    upper = torch.tensor([9.0, 3.0, 11.0, 40.0], dtype=torch.float64)
    for dist in ("n", "tn"):
        head = make_head(dist, sigma=sigma, residual="none", bound="lmcut")
        got = head.interval_nll(raw, lower, upper, None)
        mu, s = head.mu_sigma(raw, None)
        for k in range(4):
            lo, hi = float(lower[k]) - OPEN_BOUND_EPS, float(upper[k]) + OPEN_BOUND_EPS
            want = -_mp_interval(float(mu[k]), float(s[k]), lo, hi)
            if dist == "tn":
                want += _mp_interval(float(mu[k]), float(s[k]), lo, 1e5)
            assert float(got[k]) == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_tn_interval_nll_is_zero_when_the_interval_holds_the_support():
    head = make_head("tn", sigma="learn", residual="none", bound="lmcut", upper="inf")
    raw = torch.tensor([[3.0, 0.0], [-20.0, 1.0]], dtype=torch.float64)
    got = head.interval_nll(raw, torch.tensor([1.0, 4.0]), torch.tensor([math.inf, math.inf]), None)
    assert torch.equal(got, torch.zeros(2, dtype=torch.float64))


def test_categorical_interval_nll_sums_the_interval():
    head = make_head("cat", residual="none", max_cost=5)
    raw = torch.tensor([[0.0, 1.0, 2.0, 0.5, -1.0, 0.0]], dtype=torch.float64)
    p = torch.softmax(raw, -1)[0]
    got = head.interval_nll(raw, torch.tensor([1.0]), torch.tensor([3.0]), None)
    assert float(got) == pytest.approx(-math.log(float(p[1:4].sum())), rel=1e-12)
    above = head.interval_nll(raw, torch.tensor([4.0]), torch.tensor([9.0]), None)  # costs above H: H
    assert float(above) == pytest.approx(-math.log(float(p[4:].sum())), rel=1e-12)


# ------------------------------------------------------------------ shortened plans
def _ferry(tmp_path, locations=5, cars=4, seed=3):
    path = tmp_path / f"ferry-{locations}-{cars}-{seed}.pddl"
    path.write_text(domains.generate_problem("ferry", seed=seed, locations=locations, cars=cars))
    return load_task(domains.domain_file("ferry"), path)


def test_shortening_removes_loops_and_useless_steps(tmp_path):
    """An optimal plan padded with a sail there and back (a loop) and a useless last sail (which
    action elimination drops) shortens back to itself."""
    from pddlgym_sl.search import astar

    task = _ferry(tmp_path)
    plan = [task.action_index(a) for a in astar(task, "lmcut").plan]
    state = task.init
    there = next(a for a in task.applicable(state) if task.actions[a].startswith("(sail"))
    here, far = task.actions[there].strip("()").split()[1:]
    back = task.action_index(f"(sail {far} {here})")
    padded = [there, back, *plan]
    assert remove_loops(task, padded) == plan
    end = task.validate_plan(plan)[-1]
    away = next(a for a in task.applicable(end) if task.actions[a].startswith("(sail"))
    useless = [*plan, away]  # a last sail after the goal holds: elimination drops it
    assert eliminate_actions(task, useless) == plan
    short = shorten_plan(task, [task.actions[a] for a in [there, back, *useless]])
    assert short == [task.actions[a] for a in plan]
    assert eliminate_actions(task, plan) == plan  # an optimal plan has nothing to drop


@pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")
def test_lama_plans_shorten_on_blocksworld():
    """lama-first's plan of an IPC blocksworld training task A* does not solve in 60 s shortens
    (102 steps to 58 here) into a valid plan whose labels pass the checks as upper bounds."""
    from pddlgym_sl.data.solve import SATISFICING_SEARCH
    from pddlgym_sl.fd import run_fast_downward

    domain, problem = IPC / "blocksworld" / "domain.pddl", IPC / "blocksworld" / "training" / "p50.pddl"
    run = run_fast_downward(domain, problem, SATISFICING_SEARCH, time_limit=60, memory_limit_mb=4096)
    task = load_task(domain, problem)
    short = shorten_plan(task, run.plan)
    assert len(short) < run.cost
    labels = label_plan(task, short, problem.name, optimal=False)
    assert not check_labels(labels) and not labels.optimal
    assert (labels.values["lmcut"] <= labels.h_star).all()


# ------------------------------------------------------------------ satisficing splits
@pytest.fixture(scope="module")
def ipc_like(tmp_path_factory):
    """Seven ferry tasks as given files: A* (3 s each) solves the small ones, the seventh is the
    val task, and the two large ones are left to lama-first (20 s each)."""
    root = tmp_path_factory.mktemp("ipc-like")
    tasks = root / "ferry" / "training"
    tasks.mkdir(parents=True)
    (root / "ferry" / "domain.pddl").write_text(domains.domain_file("ferry").read_text())
    sizes = [(3, 2), (3, 3), (4, 3), (5, 4), (16, 20), (18, 22), (4, 2)]
    for k, (locations, cars) in enumerate(sizes):
        text = domains.generate_problem("ferry", seed=k, locations=locations, cars=cars)
        (tasks / f"p{k + 1:02d}.pddl").write_text(text)
    out = root / "data"
    common = dict(problems=tasks, out=out, jobs=1, quiet=True)
    generate(GenerateArgs(split="train", val_every=7, time_limit=3.0, **common))
    generate(
        GenerateArgs(
            split="train-plans",
            val_every=7,
            labels="satisficing",
            unsolved_in="train",
            time_limit=20.0,
            **common,
        )
    )
    return out / "ferry"


def test_satisficing_split_labels_the_tasks_a_star_did_not_solve(ipc_like):
    train = json.loads((ipc_like / "train" / "manifest.json").read_text())
    plans = json.loads((ipc_like / "train-plans" / "manifest.json").read_text())
    unsolved = {r["slot"] for r in train["problems"] if r["status"] != "solved"}
    assert unsolved and {r["slot"] for r in plans["problems"]} == unsolved  # the val task left out
    assert plans["label_kind"] == "satisficing" and train["label_kind"] == "optimal"
    for record in plans["problems"]:
        assert record["status"] == "solved" and record["plan_length"] <= record["found_plan_length"]
        labels = load_labels(ipc_like / "train-plans" / "labels" / f"{record['slot']}.npz")
        assert not labels.optimal and not check_labels(labels)
        assert labels.siblings is not None and len(labels.siblings) == 0  # no siblings ranked: `label_plan`
    assert not (ipc_like / "val" / "records" / "p07.json").read_text().count("satisficing")


def test_concatenated_splits_know_which_rows_hold_h_star(ipc_like):
    train, plans = load_split(ipc_like / "train"), load_split(ipc_like / "train-plans")
    assert train.exact is None and plans.exact is not None and not plans.exact.any()
    both = concat_splits(train, plans)
    assert len(both) == len(train) + len(plans) and both.siblings is not None
    assert both.exact[: len(train)].all() and not both.exact[len(train) :].any()
    assert len(both.siblings) == len(train.siblings) and len(plans.siblings) == 0
    assert (both.siblings.parent_row[len(train.siblings) :] >= len(train)).all()


def test_labelled_nll_uses_the_interval_on_satisficing_rows(ipc_like):
    both = concat_splits(load_split(ipc_like / "train"), load_split(ipc_like / "train-plans"))
    head = make_head("tn", sigma="learn", residual="none", bound="lmcut")
    rows = np.arange(len(both))
    raw = torch.zeros(len(both), 2, dtype=torch.float64)
    raw[:, 0] = torch.as_tensor(both.h_star) - 0.5
    got = labelled_nll(head, raw, both, rows)
    lower = torch.as_tensor(both.values["lmcut"])
    target = torch.as_tensor(both.h_star)
    exact = torch.as_tensor(both.exact)
    assert torch.allclose(got[exact], head.nll(raw, target, lower, None)[exact].to(got.dtype))
    interval = head.interval_nll(raw, lower, target, None)
    assert torch.allclose(got[~exact], interval[~exact].to(got.dtype))


def test_unsolved_in_needs_a_labelled_split(tmp_path):
    tasks = tmp_path / "t"
    tasks.mkdir()
    (tasks / "domain.pddl").write_text(domains.domain_file("ferry").read_text())
    (tasks / "p01.pddl").write_text(domains.generate_problem("ferry", seed=1, locations=3, cars=2))
    with pytest.raises(ConfigError, match="no records"):
        generate(GenerateArgs(problems=tasks, out=tmp_path / "d", split="x", unsolved_in="train", quiet=True))


@pytest.mark.parametrize("loss", ["nll", "rank-nll"])
def test_training_with_an_interval_split(ipc_like, tmp_path, loss):
    """``--interval-split`` trains on both splits (the run records it); with ``--loss rank-nll``
    the selection metric is the sum of the validation ranking loss and NLL."""
    from agents.apps.supervised import Args, train

    run = train(
        Args(
            data=ipc_like.parent, domain="ferry", model="wl", dist="tn", sigma="learn", residual="none",
            loss=loss, interval_split="train-plans", test_split="val", steps=60, val_every=30,
            batch_size=32, runs=tmp_path, name=f"r-{loss}", quiet=True,
        )
    )  # fmt: skip
    metrics = json.loads((run / "metrics.json").read_text())
    config = json.loads((run / "args.json").read_text())
    assert config["interval_split"] == "train-plans"
    selected = "best_val_loss" if loss == "rank-nll" else "best_val_mse"
    assert math.isfinite(metrics[selected]) and math.isfinite(metrics["test_mse"])
