"""Value learning without optimal labels (`agents.training.value`, ``python -m agents.rl_value``):
flags, a tiny run that checkpoints, is interrupted and resumed to the same weights, and is evaluated
by `agents.evaluate`."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import pddlgym_sl
from agents.apps.rl_value import Args, main, train
from agents.evaluation import EvaluationConfig as EvalArgs
from agents.evaluation import evaluate
from agents.training.contexts import merge_by_problem
from agents.training.value import ValueLearner
from pddlgym_sl.errors import ConfigError


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    """Three tiny ferry problems with their domain file."""
    from experiments.rl_value_exact_mse import write_tiny

    root = tmp_path_factory.mktemp("rlv-tasks")
    write_tiny(root)
    return root


def tiny_args(tasks, runs, name, **kw) -> Args:
    base = dict(
        tasks=tasks,
        steps=48,
        num_envs=2,
        max_episode_steps=12,
        epsilon_steps=40,
        batch_size=8,
        learning_starts=8,
        train_every=2,
        target_every=5,
        checkpoint_every=16,
        runs=runs,
        name=name,
        quiet=True,
    )
    return Args(**{**base, **kw})


@pytest.mark.parametrize(
    "flags",
    [["--steps", "0"], ["--batch-size", "-1"], ["--epsilon-start", "1.5"], ["--dist", "tn", "--clip"]],
)
def test_bad_flags_are_refused(flags, capsys):
    assert main(flags) == 2
    err = capsys.readouterr().err
    assert "--" in err and err.startswith("error: ") and err.count("\n") == 1, err


def test_bad_args_raise_config_error():
    with pytest.raises(ConfigError, match="--target-every"):
        Args(target_every=0)
    with pytest.raises(ConfigError, match="--epsilon-end"):
        Args(epsilon_start=0.2, epsilon_end=0.5)


@pytest.mark.parametrize("dist,clip,upper", [("tn", False, "observed"), ("n", True, "clip")])
def test_interrupted_run_resumes_to_the_same_weights_and_is_evaluated(
    tasks, tmp_path, monkeypatch, dist, clip, upper
):
    straight = train(tiny_args(tasks, tmp_path, "straight", dist=dist, clip=clip, upper=upper))

    act = ValueLearner.act

    def crash_late(self):  # an interruption between two checkpoints (the last one at step 32)
        if self.step >= 40:
            raise KeyboardInterrupt
        act(self)

    monkeypatch.setattr(ValueLearner, "act", crash_late)
    with pytest.raises(KeyboardInterrupt):
        train(tiny_args(tasks, tmp_path, "resumed", dist=dist, clip=clip, upper=upper))
    monkeypatch.setattr(ValueLearner, "act", act)
    resumed = train(dataclasses.replace(Args(), resume=tmp_path / "resumed", quiet=True))

    assert (straight / "best.safetensors").read_bytes() == (resumed / "best.safetensors").read_bytes()
    m1, m2 = (json.loads((d / "metrics.json").read_text()) for d in (straight, resumed))
    counts = ("steps", "updates", "episodes", "solved_episodes", "states_with_upper_bound")
    assert [m1[k] for k in counts] == [m2[k] for k in counts]
    assert m1["steps"] == 48 and m1["updates"] > 0 and m1["episodes"] > 0
    record = json.loads((resumed / "args.json").read_text())
    assert (record["upper"], record["app"], record["version"]) == (upper, "rl_value", pddlgym_sl.__version__)
    model = json.loads((resumed / "model.json").read_text())
    assert model["head"]["dist"] == dist and model["model"]["name"] == "nlm"

    summary = evaluate(EvalArgs(run=resumed, tasks=tasks, limit=500, clip=clip, quiet=True))
    assert summary["problems"] == 3 and 0 <= summary["coverage"] <= 1
    assert (resumed / "eval").is_dir()


def test_an_existing_run_directory_is_not_overwritten(tasks, tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(ConfigError, match="--resume"):
        train(tiny_args(tasks, tmp_path, "taken"))


def test_snapshots_and_learning_curves(tasks, tmp_path):
    from agents.apps import rl_value_curves

    run = train(tiny_args(tasks, tmp_path, "curves", steps=32, snapshot_every=16))
    steps = [s for s, _ in rl_value_curves.snapshots(run)]
    assert steps == [16, 32]
    out = tmp_path / "figures" / "curves"
    argv = ["--runs", str(run), "--tasks", str(tasks), "--limit", "200", "--baselines", "hff"]
    argv += ["--out", str(out)]
    assert rl_value_curves.main([*argv, "--quiet"]) == 0
    assert out.with_suffix(".png").stat().st_size > 0
    text = out.with_suffix(".md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| tn s0 |")]
    assert [int(r.split("|")[2]) for r in rows] == steps
    assert "| GBFS hff | - | 1.00 |" in text  # hFF solves the three tiny problems
    cached = sorted((run / "curves").rglob("*.json"))
    assert len(cached) == 2 * 3
    assert rl_value_curves.main([*argv, "--quiet"]) == 0  # from the cache: the same table
    assert out.with_suffix(".md").read_text() == text


def test_learning_curves_beside_a_supervised_run(tasks, tiny_dataset, tmp_path):
    """``--supervised RUN`` plans with a supervised run's best checkpoint on the same held-out problems
    and labels its line with the run's training seconds."""
    from agents.apps import rl_value_curves
    from agents.apps.supervised import Args as SupervisedArgs
    from agents.apps.supervised import train as train_supervised

    run = train(tiny_args(tasks, tmp_path, "curves", steps=16, snapshot_every=16))
    supervised = train_supervised(
        SupervisedArgs(
            data=tiny_dataset, runs=tmp_path / "sup", steps=4, val_every=2, batch_size=16, quiet=True
        )
    )
    wall = json.loads((supervised / "metrics.json").read_text())["wall_seconds"]
    out = tmp_path / "curves"
    argv = ["--runs", str(run), "--tasks", str(tasks), "--limit", "200", "--supervised", str(supervised)]
    assert rl_value_curves.main([*argv, "--out", str(out), "--quiet"]) == 0
    text = out.with_suffix(".md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| GBFS supervised TN"))
    assert f"({wall:.0f} s training)" in row
    assert float(row.split("|")[3]) >= 0  # a coverage was measured
    assert len(list((tmp_path / "curves-baselines").rglob("*.json"))) == 3
    assert f"- {supervised}: {wall:.0f} s training" in text


@pytest.mark.slow
@pytest.mark.parametrize("dist,clip", [("n", False), ("n", True), ("tn", False)])
def test_learned_value_beats_hff_on_every_reachable_state(tasks, tmp_path, dist, clip):
    """Learning works: after 2000 env steps on the three tiny problems (the README's settings), V is
    closer to h* (exact, by enumeration) than hFF over all their reachable states."""
    from experiments.rl_value_exact_mse import mse_against_exact

    kw = dict(steps=2000, max_episode_steps=30, epsilon_steps=1000, learning_starts=100, target_every=50)
    kw.update(num_envs=4, batch_size=64, train_every=4, checkpoint_every=2000, dist=dist, clip=clip)
    problems = sorted(p for p in tasks.glob("ferry-*.pddl"))
    run = train(tiny_args(tasks, tmp_path, "run", **kw))
    n, mse, mse_hff = mse_against_exact(run, problems, tasks / "domain.pddl", clip)
    assert n > 50 and mse < mse_hff


def test_groups_merge_per_problem_and_come_back_in_order():
    rows = ([[1], [2]], [[3]], [[4]], [[5], [6]])
    groups = [(p, np.array(r)) for p, r in zip((2, 0, 2, 1), rows, strict=True)]
    merged, back = merge_by_problem(groups)
    assert [p for p, _ in merged] == [0, 1, 2]  # one forward pass per problem
    np.testing.assert_array_equal(np.concatenate([s for _, s in merged]).ravel()[back], [1, 2, 3, 4, 5, 6])


def test_value_dists_are_the_heads_with_a_bootstrapped_target():
    """The CLI's light list (no torch for --help) equals the one derived from the registries."""
    from agents.apps.rl_value import VALUE_DISTS
    from agents.heads import DISTS
    from agents.value_targets import TARGET_MODES

    assert tuple(d for d in DISTS if d in TARGET_MODES) == VALUE_DISTS
