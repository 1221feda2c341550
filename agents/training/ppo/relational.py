"""The relational MaskablePPO run: a whole split, padded ILG observations with the action table, the
GNN policy `agents.policies.RelationalMaskablePolicy`; after training, greedy episodes on the
held-out split compared with the optimal plan lengths (A* + LM-cut)."""

from __future__ import annotations

import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from agents.training.ppo.common import (
    finish,
    hyperparameter_writer,
    make_ppo,
    make_run_dir,
    progress_callback,
)
from agents.training.ppo.config import PPOConfig

__all__ = ["evaluate_relational", "load_policy", "optimal_lengths", "run_relational", "train_relational"]


def _split_files(config: PPOConfig, split: str, n: int | None) -> list[Path]:
    from pddlgym_sl.envs.problems import split_files, spread

    return spread(split_files(config.domain, split), n)


def optimal_lengths(domain_file: Path, problems: list[Path]) -> dict[str, int | None]:
    """Optimal plan length of each problem: A* with LM-cut (admissible), None when unsolvable."""
    from pddlgym_sl import load_task
    from pddlgym_sl.search import astar

    out = {}
    for path in problems:
        result = astar(load_task(domain_file, path), "lmcut")
        out[path.name] = len(result.plan) if result.solved else None
    return out


def evaluate_relational(net, config: PPOConfig) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Greedy episodes on the held-out split against the optimal plan lengths."""
    import domains
    from agents.policies.greedy import greedy_episodes

    files = _split_files(config, config.eval_split, config.eval_problems)
    domain_file = domains.domain_file(config.domain)
    episodes = greedy_episodes(net, domain_file, files, config.eval_max_steps)
    optimal = optimal_lengths(domain_file, files)
    rows = [{**asdict(e), "optimal": optimal[e.problem]} for e in episodes]
    solved = [r for r in rows if r["solved"] and r["optimal"] is not None]
    metrics: dict[str, Any] = {
        "eval_split": config.eval_split,
        "eval_problems": len(rows),
        "success_rate": len(solved) / len(rows),
        "mean_plan_length": float(np.mean([r["length"] for r in solved])) if solved else None,
        "mean_optimal_length": float(np.mean([r["optimal"] for r in solved])) if solved else None,
        "mean_length_ratio": float(np.mean([r["length"] / r["optimal"] for r in solved])) if solved else None,
        "optimal_solved": sum(r["length"] == r["optimal"] for r in solved),
    }
    return metrics, rows


def load_policy(run_dir: Path):
    """The `RelationalActorCritic` of a run directory (``policy.json`` + ``policy.safetensors``)."""
    from agents.checkpoint import load_model_config, load_weights
    from agents.policies.relational import RelationalActorCritic

    net = RelationalActorCritic(**load_model_config(run_dir / "policy.json"))
    load_weights(run_dir / "policy.safetensors", net)
    return net


def train_relational(config: PPOConfig) -> tuple[Path, Any, dict[str, Any]]:
    """Train the relational policy on the split: (run directory, network, training metrics)."""
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from agents.checkpoint import save_model_config, save_weights
    from agents.policies.maskable import RelationalMaskablePolicy

    files = _split_files(config, config.split, config.train_problems)
    run_dir = make_run_dir(config, config.split)
    env_kwargs = {
        "domain": config.domain,
        "problems": files,
        "obs": "ilg",
        "padded": True,
        "action_table": True,
        "heuristics": (),
        "max_episode_steps": config.max_episode_steps,
        "render_mode": None,  # make_vec_env would ask for "rgb_array"
    }
    venv = make_vec_env(
        f"pddl/{config.domain}-v1",
        n_envs=config.num_envs,
        seed=config.seed,
        env_kwargs=env_kwargs,
        vec_env_cls=DummyVecEnv,
    )
    # Returns of -1 per step reach -100: scaled to unit size, the critic's loss no longer swamps
    # the actor's gradients in the GNN they share (the logged episode returns stay unscaled).
    venv = VecNormalize(venv, norm_obs=False, norm_reward=True, gamma=config.gamma)
    policy_kwargs = {"hidden": config.hidden, "layers": config.layers}
    model = make_ppo(RelationalMaskablePolicy, venv, config, run_dir, policy_kwargs=policy_kwargs)
    start, cpu_start = time.perf_counter(), time.process_time()
    model.learn(
        total_timesteps=config.total_timesteps,
        callback=progress_callback(config.total_timesteps, config.quiet),
    )
    net = model.policy.net
    save_weights(run_dir / "policy.safetensors", net)
    save_model_config(run_dir / "policy.json", net.config())
    venv.close()
    return (
        run_dir,
        net,
        {
            "train_seconds": time.perf_counter() - start,
            "train_cpu_seconds": time.process_time() - cpu_start,
            "timesteps": int(model.num_timesteps),
            "train_problems": len(files),
        },
    )


def run_relational(config: PPOConfig) -> tuple[Path, dict[str, Any]]:
    """Train (or ``--load``) the relational policy, then evaluate it on the held-out split: the run
    directory and the metrics written there."""
    from agents.checkpoint import load_json_object
    from pddlgym_sl.io import atomic_write_json

    if config.load is None:
        run_dir, net, metrics = train_relational(config)
        out = run_dir / "metrics.json"
    else:
        run_dir, net, metrics = config.load, load_policy(config.load), {}
        config = replace(config, domain=load_json_object(run_dir / "args.json")["domain"])
        out = run_dir / f"metrics-{config.eval_split}.json"
    writer = hyperparameter_writer(run_dir, config)
    evaluation, rows = evaluate_relational(net, config)
    atomic_write_json(run_dir / f"episodes-{config.eval_split}.json", rows)
    finish(writer, out, {**evaluation, **metrics}, int(metrics.get("timesteps", 0)))
    return run_dir, {**evaluation, **metrics}
