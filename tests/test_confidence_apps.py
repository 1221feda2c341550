"""Confidence end to end: training with --dist cat and --ood (the run's confidence files), the
noise pools, the MLP's fact vocabulary, NFD's sampling of one task, and agents.evaluate's
--search / --prune / --prioritize / --threshold."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import domains
from agents.apps.supervised import Args, train
from agents.apps.supervised import main as supervised_main
from agents.confidence import PAPER_PERCENTS, THRESHOLD_KINDS, run_threshold
from agents.evaluation import EvaluationConfig as EvalArgs
from agents.evaluation import evaluate
from agents.heads import make_head
from agents.models.mlp import FactInputs, FlatMLP, input_names, task_bits
from agents.ood import NOISES, NoisePool, fact_frequencies, noise_states, pack_bits
from pddlgym_sl import load_task
from pddlgym_sl.data.dataset import load_split
from pddlgym_sl.data.sampling import Args as SampleArgs
from pddlgym_sl.data.sampling import replace_init, sample_task
from pddlgym_sl.envs.encoders.schema import batch_bits
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics import make_heuristic


@pytest.fixture(scope="module")
def cat_run(tiny_dataset, tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs-cat")
    return train(
        Args(
            model="mlp",
            dist="cat",
            residual="none",
            ood="weighted",
            data=tiny_dataset,
            runs=runs,
            steps=40,
            val_every=20,
            batch_size=32,
            quiet=True,
        )
    )


def test_a_run_stores_its_thresholds_and_table1(cat_run, tiny_dataset):
    config = json.loads((cat_run / "model.json").read_text())
    train_split = load_split(tiny_dataset / "ferry" / "train")
    assert config["head"]["dist"] == "cat" and config["head"]["max_cost"] == int(train_split.h_star.max())
    with np.load(cat_run / "confidence.npz") as z:
        table = {k: z[k] for k in z.files}
    conf = table["confidences"]
    assert len(conf) == len(train_split) and ((conf >= 0) & (conf <= 1)).all()
    thresholds = json.loads((cat_run / "thresholds.json").read_text())
    assert set(thresholds) == set(THRESHOLD_KINDS)
    assert all(set(t) == {str(x) for x in PAPER_PERCENTS} for t in thresholds.values())
    mean40 = thresholds["mean"]["40"]["value"]
    assert mean40 == run_threshold(cat_run, "mean", 40).value
    assert (table["confidences"] < mean40).mean() <= 0.4
    metrics = json.loads((cat_run / "confidence.json").read_text())
    for key in ("confidence_in", "confidence_uniform", "confidence_weighted"):
        assert 0 <= metrics[key] <= 1
    assert metrics["kendall_tau"] is None or -1 <= metrics["kendall_tau"] <= 1
    bins = metrics["reliability"]["bins"]
    assert sum(b["states"] for b in bins) == metrics["states"] and 0 <= metrics["reliability"]["ece"] <= 1


def test_cat_needs_no_residual(tiny_dataset, tmp_path, capsys):
    argv = ["--dist", "cat", "--model", "linear", "--data", str(tiny_dataset), "--runs", str(tmp_path)]
    assert supervised_main([*argv, "--steps", "2", "--quiet"]) == 2
    assert "--residual none" in capsys.readouterr().err


def test_ood_needs_a_learned_sigma(tiny_dataset, tmp_path):
    args = Args(
        model="linear", sigma="fixed", ood="uniform", data=tiny_dataset, runs=tmp_path, steps=2, quiet=True
    )
    with pytest.raises(ConfigError, match="learned sigma"):
        train(args)


@pytest.mark.parametrize("model", ["nlm", "hgn"])
def test_ood_loss_of_the_relational_models(model, tiny_dataset):
    """Noise states of the batch's problems go through the model's own input builder; the OOD loss
    reaches the σ output only through the model, never μ's output directly."""
    from agents.metrics import bound_inputs
    from agents.models import make_model, model_spec

    split = load_split(tiny_dataset / "ferry" / "train").subset([0, 1, 2])
    head, spec = make_head("tn"), model_spec(model)
    inputs = spec.training_inputs(split)
    torch.manual_seed(0)
    net = make_model(model, **{**inputs.model_config(), "n_outputs": head.n_outputs})
    pool = NoisePool(split, "uniform", 0.5, head, spec, seed=0)
    rows = np.arange(min(8, len(split)))
    raw = net(inputs.batch(rows, torch.device("cpu")))
    nll = head.nll(raw, *bound_inputs(split, head, rows, torch.device("cpu")))
    loss = pool.loss(net, nll, step=0, batch_rows=rows)
    assert torch.isfinite(loss) and loss.item() != pytest.approx(nll.mean().item())
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in net.parameters() if p.grad is not None)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["nlm", "hgn"])
def test_ood_training_of_the_relational_models(model, tiny_dataset, tmp_path):
    common = {"model": model, "data": tiny_dataset, "batch_size": 16, "val_every": 2, "quiet": True}
    run = train(Args(**common, ood="uniform", ood_ratio=0.5, steps=2, runs=tmp_path))
    metrics = json.loads((run / "confidence.json").read_text())
    assert 0 <= metrics["confidence_uniform"] <= 1 and metrics["noise_states_uniform"] > 0


def test_ood_training_resumes_to_the_same_weights(tiny_dataset, tmp_path):
    from safetensors.torch import load_file

    common = {"model": "linear", "data": tiny_dataset, "batch_size": 32, "val_every": 5, "quiet": True}
    common |= {"ood": "weighted", "ood_ratio": 0.9}
    straight = train(Args(**common, steps=20, runs=tmp_path / "a", name="run"))
    interrupted = train(Args(**common, steps=10, runs=tmp_path / "b", name="run"))
    resumed = train(Args(resume=interrupted, steps=20, quiet=True))
    a, b = load_file(straight / "best.safetensors"), load_file(resumed / "best.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert (straight / "confidence.npz").read_bytes() == (resumed / "confidence.npz").read_bytes()


# ------------------------------------------------------------------ noise
def test_noise_states_have_the_right_fact_frequencies(tiny_dataset):
    split = load_split(tiny_dataset / "ferry" / "train")
    task = split.task(0)
    rng = np.random.default_rng(0)
    uniform = batch_bits(noise_states("uniform", split, 0, 4000, rng), task.n_facts)
    assert abs(uniform.mean() - 0.5) < 0.01
    weighted = batch_bits(noise_states("weighted", split, 0, 4000, rng), task.n_facts).mean(axis=0)
    np.testing.assert_allclose(weighted, fact_frequencies(split, 0), atol=0.04)
    bits = rng.random((5, 130)) < 0.5
    np.testing.assert_array_equal(batch_bits(pack_bits(bits, 3), 130), bits)


@pytest.mark.parametrize("kind", list(NOISES))
def test_noise_pool_draws_from_the_batchs_problems(tiny_dataset, kind):
    split = load_split(tiny_dataset / "ferry" / "train")
    head = make_head("tn")
    from agents.models import model_spec

    pool = NoisePool(split, kind, 0.75, head, model_spec("linear"), seed=3)
    rows = np.flatnonzero(np.isin(split.problem_of, [2, 5]))[:32]
    noise = pool.rows(7, rows)
    assert len(noise) == 3 * len(rows)  # Y = 0.75: three noise states per training state
    assert set(pool.pool.problem_of[noise].tolist()) <= {2, 5}
    np.testing.assert_array_equal(noise, pool.rows(7, rows))  # a pure function of (seed, step)
    hff = make_heuristic("hff", split.task(2))
    live = pool.pool.states[2]
    # the residual (hFF) and the linear model's features are finite: relaxed dead ends were drawn again
    assert len(live) and np.isfinite(hff.batch(live)).all()
    assert np.isfinite(pool.pool.features).all()


def test_noise_is_kept_when_nothing_reads_its_heuristics(tiny_dataset):
    """The categorical MLP reads no heuristic of a noise state: relaxed dead ends stay, as in the paper."""
    from agents.models import model_spec

    split = load_split(tiny_dataset / "ferry" / "train")
    head = make_head("cat", residual="none", max_cost=int(split.h_star.max()))
    pool = NoisePool(split, "uniform", 0.5, head, model_spec("mlp"), seed=0)
    assert len(pool.pool) == len(split)
    assert not np.isfinite(pool.pool.values["lmcut"]).all()  # some are relaxed dead ends


def test_table1_noise_has_finite_bounds_for_a_tn_without_residual(tiny_dataset):
    """A TN without residual reads no heuristic of a noise state in training, but its search value
    needs the bound: Table 1's noise (``finite_bound``) redraws dead ends, whose TN is undefined."""
    from agents.confidence import predict
    from agents.models import model_spec
    from agents.ood import noise_split, pool_counts

    split = load_split(tiny_dataset / "ferry" / "train")
    head, spec = make_head("tn", residual="none"), model_spec("linear")
    counts = pool_counts(split, 1, 300)
    loose = noise_split(split, "uniform", counts, 0, head, reads_features=False)
    assert not np.isfinite(loose.values["lmcut"]).all()  # the premise: some are relaxed dead ends
    pool = noise_split(split, "uniform", counts, 0, head, reads_features=True, finite_bound=True)
    assert len(pool) == counts.sum() and np.isfinite(pool.values["lmcut"]).all()
    torch.manual_seed(0)
    inputs = spec.training_inputs(pool)
    model = spec.build(head.n_outputs, **inputs.model_config())
    values, confidences = predict(model, head, inputs, pool, torch.device("cpu"))
    assert np.isfinite(values).all() and np.isfinite(confidences).all()


def test_uniform_cross_entropy_moves_sigma_not_mu():
    values = torch.stack([torch.linspace(-5, 15, 8), torch.full((8,), -3.0)], 1)  # σ ≈ 0.57
    raw = values.double().requires_grad_()
    for dist in ("n", "tn"):
        head = make_head(dist, residual="none")
        head.uniform_cross_entropy(raw, None, 10).sum().backward()
        assert (raw.grad[:, 0] == 0).all() and (raw.grad[:, 1] < 0).all()  # larger σ lowers the loss
        raw.grad = None
    # minimised at σ² = E[(x − μ)²] over the uniform costs 0..H
    head, mu = make_head("n", residual="none"), 4.0
    sigmas = torch.linspace(0.2, 10.0, 2000, dtype=torch.float64)
    logits = torch.logit((sigmas - 0.1) / 10)
    loss = head.uniform_cross_entropy(torch.stack([torch.full_like(logits, mu), logits], 1), None, 10)
    best = sigmas[loss.argmin()].item()
    assert best == pytest.approx(np.sqrt(np.mean((np.arange(11) - mu) ** 2)), abs=0.01)
    cat = make_head("cat", residual="none", max_cost=4)
    logits = torch.randn(3, 5)
    expected = -(torch.log_softmax(logits, -1)).mean(-1)
    torch.testing.assert_close(cat.uniform_cross_entropy(logits, None, 4), expected)
    assert cat.uniform_cross_entropy(torch.zeros(1, 5), None, 4).item() == pytest.approx(np.log(5))


# ------------------------------------------------------------------ MLP
def test_mlp_maps_facts_by_name(tmp_path):
    path = tmp_path / "p.pddl"
    path.write_text(domains.generate_problem("ferry", seed=1, locations=3, cars=2))
    task = load_task(domains.domain_file("ferry"), path)
    names = input_names(task)
    model = FlatMLP(3, [*sorted(names), "(unknown atom)"])
    states = task.states_to_array([task.init] + [s for _, s in task.successors(task.init)])
    bits = torch.from_numpy(task_bits(task, states))
    out = model(FactInputs([(names, bits)]))
    perm = torch.randperm(len(names), generator=torch.Generator().manual_seed(0))
    shuffled = model(FactInputs([(tuple(names[i] for i in perm.tolist()), bits[:, perm])]))
    torch.testing.assert_close(out, shuffled)
    ones = torch.ones(len(bits), 1, dtype=bits.dtype)
    extra = model(FactInputs([((*names, "(not in the vocabulary)"), torch.cat([bits, ones], 1))]))
    torch.testing.assert_close(out, extra)


# ------------------------------------------------------------------ NFD sampling
def test_replace_init_keeps_everything_else():
    text = (
        "(define (problem p) (:domain d)\n ; (:init is mentioned here (\n (:objects a)\n"
        " (:init (x a) ; c )\n (y a))\n (:goal (z a)))"
    )
    out = replace_init(text, ["(q a)"])
    assert out.startswith("(define (problem p) (:domain d)\n ; (:init is mentioned")
    assert "(:init\n    (q a)\n  )\n (:goal (z a)))" in out and "(x a)" not in out


def test_sampling_one_task(tmp_path):
    problem = tmp_path / "g.pddl"
    problem.write_text(domains.generate_problem("gripper", seed=2, balls=4))
    settings = {"domain": "gripper", "problem": problem, "seeds": 30, "test_instances": 3, "quiet": True}
    manifest = sample_task(SampleArgs(out=tmp_path / "nfd", **settings))
    root = tmp_path / "nfd" / "gripper"
    train_split, test_split = load_split(root / "train"), load_split(root / "test")
    assert manifest["summary"]["states"] == len(train_split) > 0
    assert len(test_split.problems) == 3
    task = train_split.task(0)
    # every label is the remaining cost of a plan: it bounds h* from above (LM-cut below it)
    assert (train_split.values["lmcut"] <= train_split.h_star).all() and (train_split.h_star >= 0).all()
    goals = train_split.states[0][train_split.h_star == 0]
    assert len(goals) >= 1 and all(task.is_goal(task.state_from_words(s)) for s in goals)
    for i in range(3):
        t = test_split.task(i)
        assert not t.is_goal(t.init) and test_split.h_star[test_split.problem_of == i][-1] == 0
    first = (root / "train" / "labels.npz").read_bytes()
    sample_task(SampleArgs(out=tmp_path / "again", **settings))
    assert (tmp_path / "again" / "gripper" / "train" / "labels.npz").read_bytes() == first  # deterministic


# ------------------------------------------------------------------ evaluation
@pytest.mark.parametrize(
    ("flags", "directory"),
    [
        ({"prune": "mean", "threshold": 5.0}, "test-gbfs-M5"),
        ({"prune": "adaptive", "threshold": 40.0}, "test-gbfs-A40"),
        ({"search": "dual"}, "test-dual-Base"),
        ({"search": "dual", "prune": "adaptive", "threshold": 80.0}, "test-dual-A80"),
        ({"search": "dual", "prune": "adaptive", "threshold": 20.0, "prioritize": True}, "test-dual-P20"),
    ],
)
def test_evaluate_confidence_searches(cat_run, flags, directory):
    summary = evaluate(EvalArgs(run=cat_run, split="test", problems=2, limit=300, quiet=True, **flags))
    assert summary["config"] == directory.split("-")[-1] and summary["search"] == flags.get("search", "gbfs")
    out = cat_run / "eval" / directory
    assert json.loads((out / "summary.json").read_text())["problems"] == 2
    for path in (out / "problems").glob("*.json"):
        result = json.loads(path.read_text())
        assert result["evaluations"] <= 300 and result["status"] in {
            "solved",
            "evaluation_limit",
            "pruned",
            "exhausted",
        }


@pytest.mark.parametrize(
    ("flags", "match"),
    [
        ({"prune": "mean"}, "--threshold"),
        ({"threshold": 5.0}, "--threshold"),
        ({"prioritize": True, "search": "dual"}, "--prioritize"),
        ({"prioritize": True, "prune": "mean", "threshold": 5.0}, "--prioritize"),
    ],
)
def test_evaluate_rejects_incomplete_confidence_flags(cat_run, flags, match):
    with pytest.raises(ConfigError, match=match):
        evaluate(EvalArgs(run=cat_run, split="test", problems=1, quiet=True, **flags))


def test_evaluate_rewrites_the_confidence_files(cat_run):
    before = json.loads((cat_run / "confidence.json").read_text())
    for name in ("confidence.json", "confidence.npz", "thresholds.json"):
        (cat_run / name).unlink()
    evaluate(EvalArgs(run=cat_run, split="test", problems=1, limit=50, quiet=True, confidence=True))
    assert json.loads((cat_run / "confidence.json").read_text()) == before
    assert (cat_run / "confidence.npz").is_file() and (cat_run / "thresholds.json").is_file()


def test_confidence_searches_need_a_run(tiny_dataset):
    with pytest.raises(ConfigError, match="--run"):
        evaluate(EvalArgs(heuristic="hff", domain="ferry", data=tiny_dataset, search="dual", quiet=True))
