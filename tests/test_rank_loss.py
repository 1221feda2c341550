"""The pairwise ranking loss (``--loss rank``): zero on a perfect ordering, positive on a swapped
pair, finite gradients through the N and TN heads; the pairs of a split with siblings; seeded
batches; training the WL model and the NLM with it, resumable; a clear error without siblings."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from agents.apps.supervised import Args, train
from agents.errors import AgentError
from agents.heads import make_head
from agents.losses import RANK_MARGIN, RankingSplit, RankLoss, make_loss, pairwise_hinge
from pddlgym_sl.data.dataset import load_split


def test_hinge_is_zero_on_a_perfect_ordering_and_positive_on_a_swapped_pair():
    h = torch.tensor([0.0, 1.0, 2.0, 3.5])
    better, worse = torch.tensor([0, 1, 2, 0]), torch.tensor([1, 2, 3, 3])
    assert pairwise_hinge(h, better, worse) == 0
    swapped = h.clone()
    swapped[[1, 2]] = swapped[[2, 1]]
    loss = pairwise_hinge(swapped, better, worse)
    # the swapped pair (1 above 2) costs margin + 1, its neighbours (0,2) and (1,3) nothing or less
    assert loss > 0
    assert torch.isclose(loss, torch.tensor((RANK_MARGIN + 1.0) / 4))
    # ties violate the margin
    assert pairwise_hinge(torch.zeros(4), better, worse) == RANK_MARGIN
    assert pairwise_hinge(h, torch.tensor([], dtype=torch.long), torch.tensor([], dtype=torch.long)) == 0


@pytest.fixture(scope="module")
def ranking(tiny_dataset):
    split = load_split(tiny_dataset / "ferry" / "train")
    head = make_head("n", sigma="fixed", residual="none")
    return split, RankingSplit.build(split, head)


def test_the_pairs_of_a_split(ranking):
    split, rs = ranking
    better, worse = rs.all_pairs()
    n_steps = sum(len(s) - 1 for s in split.states)
    n_siblings = int(np.isfinite(split.siblings.values["lmcut"]).sum())
    assert len(better) == n_steps + n_siblings
    assert np.all(rs.is_plan[better]) and np.all(rs.problem_of[better] == rs.problem_of[worse])
    plan_pairs = rs.is_plan[worse]
    # a plan state ranks below its parent, whose h* is one more
    assert np.all(rs.h_star[worse[plan_pairs]] == rs.h_star[better[plan_pairs]] + 1)
    # a sibling ranks below the plan state sharing its parent
    assert np.all(rs.parent[worse[~plan_pairs]] == rs.parent[better[~plan_pairs]])
    assert np.all(np.isnan(rs.h_star[~rs.is_plan])) and len(rs) == len(split) + n_siblings
    # sibling rows hold the sibling states and values of the split, problem by problem
    k = 3
    rows = np.flatnonzero((rs.problem_of == k) & ~rs.is_plan)
    local = rows - rs.offsets[k]
    assert np.array_equal(rs.states[k][local], split.siblings.states[k])
    assert np.array_equal(
        rs.values["hff"][rows], split.siblings.values["hff"][split.siblings.problem_of == k]
    )


def _raw_for(values: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(values, dtype=torch.float32)[:, None]


def test_rank_loss_of_batches(ranking):
    _, rs = ranking
    head = make_head("n", sigma="fixed", residual="none")
    loss = RankLoss(head)
    rows = loss.sampler(rs, np.ones(len(rs), dtype=np.int64), 64, seed=0).batch(0)
    better, worse = rs.pairs(rows)
    assert len(better) > 0
    # a perfect ordering: h* on plan states, one more than the plan state's h* on siblings
    perfect = rs.h_star.copy()
    sibling = ~rs.is_plan
    perfect[sibling] = rs.h_star[rs.parent[sibling]]  # h*(parent) = h*(next plan state) + 1
    assert loss(head, _raw_for(perfect[rows]), rs, rows) == 0
    swapped = perfect[rows].copy()
    swapped[better[0]], swapped[worse[0]] = swapped[worse[0]], swapped[better[0]]
    assert loss(head, _raw_for(swapped), rs, rows) > 0


@pytest.mark.parametrize("dist,sigma", [("n", "fixed"), ("tn", "learn"), ("tn", "fixed")])
def test_gradients_are_finite(ranking, dist, sigma):
    split, _ = ranking
    head = make_head(dist, sigma=sigma, residual="hff")
    rs = RankingSplit.build(split, head)
    loss = RankLoss(head)
    rows = loss.sampler(rs, np.ones(len(rs), dtype=np.int64), 64, seed=1).batch(3)
    for scale in (0.0, 1.0, 1e4, -1e4):  # μ on, near, and thousands of σ away from the bounds
        raw = torch.full((len(rows), head.n_outputs), scale, requires_grad=True)
        value = loss(head, raw, rs, rows)
        value.backward()
        assert torch.isfinite(value) and torch.isfinite(raw.grad).all()


def test_batches_are_seeded_and_hold_whole_pairs(ranking):
    _, rs = ranking
    head = make_head("n", sigma="fixed", residual="none")
    sizes = np.ones(len(rs), dtype=np.int64)
    a = RankLoss(head).sampler(rs, sizes, 100, seed=4)
    b = RankLoss(head).sampler(rs, sizes, 100, seed=4)
    for step in (0, 7):
        rows = a.batch(step)
        assert np.array_equal(rows, b.batch(step)) and np.all(np.diff(rows) > 0)
        anchors = rows[rs.is_plan[rows] & np.isin(rs.parent[rows], rows)]
        assert len(anchors) > 0 and len(rows) <= 100 + 10
        # every sibling in a batch comes with the plan state it ranks against
        siblings = rows[~rs.is_plan[rows]]
        assert np.all(np.isin(rs.parent[siblings], rs.parent[anchors]))
    assert not np.array_equal(a.batch(0), a.batch(1))


def test_labels_without_siblings_are_a_clear_error(ranking):
    split, _ = ranking
    old = dataclasses.replace(split, siblings=None)
    with pytest.raises(AgentError, match="siblings"):
        make_loss("rank", make_head("tn")).prepare(old)
    with pytest.raises(AgentError, match="unknown loss"):
        make_loss("hinge", make_head("tn"))


def test_wl_learns_to_rank_and_the_cli_reports_it(tiny_dataset, tmp_path, capsys):
    from agents.apps.supervised import main

    argv = ["--model", "wl", "--loss", "rank", "--dist", "n", "--sigma", "fixed", "--residual", "none"]
    argv += ["--data", str(tiny_dataset), "--steps", "300", "--val-every", "100", "--batch-size", "64"]
    assert main([*argv, "--runs", str(tmp_path), "--quiet", "--name", "run"]) == 0
    out = capsys.readouterr().out
    assert "best validation rank loss" in out
    assert "wl N fixed/none rank" in out  # labelled as the ranking run it is (issue 60)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    accuracy = f"{metrics['test_pair_accuracy']:.3f}"
    assert f"test pairs ranked right (plan states below their parents and siblings): {accuracy}" in out
    val = RankingSplit.build(load_split(tiny_dataset / "ferry" / "val"), make_head("n", sigma="fixed"))
    # zero weights rank nothing (every pair tied: loss = margin); training orders most pairs
    assert metrics["best_val_rank_loss"] < 0.5 * RANK_MARGIN and len(val.all_pairs()[0]) > 0
    assert metrics["test_pair_accuracy"] > 0.5


def test_nlm_trains_with_the_rank_loss_and_resumes_to_the_same_result(tiny_dataset, tmp_path):
    common = {"data": tiny_dataset, "batch_size": 32, "val_every": 3, "quiet": True, "loss": "rank"}
    common |= {"model": "nlm", "dist": "tn"}
    straight = train(Args(**common, steps=6, runs=tmp_path / "a", name="run"))
    interrupted = train(Args(**common, steps=3, runs=tmp_path / "b", name="run"))
    resumed = train(Args(resume=interrupted, steps=6, quiet=True))
    a, b = load_file(straight / "best.safetensors"), load_file(resumed / "best.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert json.loads((straight / "args.json").read_text())["loss"] == "rank"
    assert "best_val_rank_loss" in json.loads((resumed / "metrics.json").read_text())


# ------------------------------------------------------------------ rank + NLL (issue 57)
@pytest.mark.parametrize("dist,sigma", [("n", "fixed"), ("tn", "learn")])
def test_rank_nll_is_the_hinge_plus_the_weighted_nll_of_the_plan_states(ranking, dist, sigma):
    from agents.losses import RankNLLLoss

    split, _ = ranking
    head = make_head(dist, sigma=sigma, residual="hff", bound="lmcut")
    rs = RankingSplit.build(split, head)
    rows = RankLoss(head).sampler(rs, np.ones(len(rs), dtype=np.int64), 64, seed=2).batch(1)
    raw = torch.randn(
        len(rows), head.n_outputs, dtype=torch.float64, generator=torch.Generator().manual_seed(0)
    )
    plan = rs.is_plan[rows]
    lower = torch.as_tensor(rs.values["lmcut"][rows][plan])
    nll = head.nll(raw[torch.as_tensor(plan)], torch.as_tensor(rs.h_star[rows][plan]), lower,
                   torch.as_tensor(rs.values["hff"][rows][plan])).mean()  # fmt: skip
    for weight in (0.25, 1.0):
        loss = RankNLLLoss(head, nll_weight=weight)(head, raw.requires_grad_(), rs, rows)
        expected = RankLoss(head)(head, raw, rs, rows) + weight * nll
        assert torch.isclose(loss, expected.to(loss.dtype))
        loss.backward()
        assert torch.isfinite(raw.grad).all()
        raw.grad = None


@pytest.mark.parametrize(
    "model", [pytest.param("wl", marks=pytest.mark.slow), "nlm", pytest.param("hgn", marks=pytest.mark.slow)]
)
def test_every_model_trains_with_rank_nll(tiny_dataset, tmp_path, capsys, model):
    """``--loss rank-nll`` (the ranking loss with the TN's NLL, `agents.losses.RankNLLLoss`) trains
    the WL model, the NLM and STRIPS-HGN; the run selects by the validation sum, which the command
    reports, and --nll-weight is refused with another loss."""
    from agents.apps.supervised import main

    steps = "200" if model == "wl" else "4"
    argv = ["--model", model, "--loss", "rank-nll", "--dist", "tn", "--nll-weight", "0.5"]
    argv += ["--data", str(tiny_dataset), "--steps", steps, "--val-every", "2", "--batch-size", "32"]
    assert main([*argv, "--runs", str(tmp_path), "--quiet", "--name", "run"]) == 0
    assert "best validation loss" in capsys.readouterr().out
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert np.isfinite(metrics["best_val_loss"]) and np.isfinite(metrics["test_nll"])
    assert main(["--loss", "rank", "--nll-weight", "0.5", "--data", str(tiny_dataset)]) == 2


def test_ranking_mu_orders_mu_not_the_truncated_mean(ranking):
    """``rank_on="mu"`` (for a TN searched without its bound) takes the hinge over μ; the default
    over the search value E[x], which saturates at the bound where μ is far below it."""
    split, _ = ranking
    head = make_head("tn", sigma="learn", residual="none", bound="lmcut")
    rs = RankingSplit.build(split, head)
    rows = RankLoss(head).sampler(rs, np.ones(len(rs), dtype=np.int64), 64, seed=3).batch(2)
    better, worse = (torch.as_tensor(a) for a in rs.pairs(rows))
    raw = torch.zeros(len(rows), 2, dtype=torch.float64)
    raw[:, 0] = -50.0 - torch.as_tensor(rs.h_star[rows]).nan_to_num(0.0)  # μ ≪ l: E[x] sits at l − 0.1
    mu = head.mu_sigma(raw, None)[0]
    assert torch.isclose(RankLoss(head, rank_on="mu")(head, raw, rs, rows), pairwise_hinge(mu, better, worse))
    value = head.heuristic(raw, torch.as_tensor(rs.values["lmcut"][rows]), None)
    assert torch.isclose(RankLoss(head)(head, raw, rs, rows), pairwise_hinge(value, better, worse))
    with pytest.raises(AgentError, match="rank_on='median'"):
        RankLoss(head, rank_on="median")
