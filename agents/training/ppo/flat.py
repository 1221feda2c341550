"""The flat MaskablePPO run: one fixed small problem, fact vectors, SB3's MLP policy, and greedy
masked rollouts on that problem after training."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import pddlgym_sl  # noqa: F401  (registers the pddl/<domain>-v<N> ids)
from agents.training.ppo.common import (
    finish,
    hyperparameter_writer,
    make_ppo,
    make_run_dir,
    progress_callback,
)
from agents.training.ppo.config import PPOConfig
from pddlgym_sl.envs.problems import resolve_problems

__all__ = ["check_problem", "evaluate_flat", "make_env", "train_flat"]


def make_env(config: PPOConfig, rank: int) -> gym.Env:
    """One monitored environment pinned to the problem (flat observations, no heuristics)."""
    from stable_baselines3.common.monitor import Monitor

    path = Path(config.problem)
    where = {"problems": [path]} if path.is_file() else {"split": "train", "problem": config.problem}
    env = gym.make(
        f"pddl/{config.domain}-v1",
        obs="flat",
        heuristics=(),
        max_episode_steps=config.max_episode_steps,
        **where,
    )
    env = Monitor(env)
    env.reset(seed=config.seed + rank)
    return env


def evaluate_flat(model, config: PPOConfig) -> dict[str, float | None]:
    """Greedy masked rollouts: success rate, mean episode length and mean length of successes."""
    env = make_env(config, rank=10_000)
    lengths, solved = [], []
    for episode in range(config.eval_episodes):
        obs, _ = env.reset(seed=config.seed + 10_000 + episode)
        done, steps, terminated = False, 0, False
        while not done:
            action, _ = model.predict(
                obs, action_masks=env.get_wrapper_attr("action_masks")(), deterministic=True
            )
            obs, _, terminated, truncated, _ = env.step(int(action))
            steps += 1
            done = terminated or truncated
        lengths.append(steps)
        solved.append(bool(terminated))
    env.close()
    ok = [n for n, s in zip(lengths, solved, strict=True) if s]
    return {
        "success_rate": float(np.mean(solved)),
        "mean_length": float(np.mean(lengths)),
        "mean_plan_length": float(np.mean(ok)) if ok else None,
    }


def check_problem(config: PPOConfig) -> None:
    """`ConfigError` (naming close names) unless ``--problem`` is a file or a train-split problem;
    checked before the run directory is made."""
    if not Path(config.problem).is_file():
        resolve_problems(config.domain, split="train", problem=config.problem)


def train_flat(config: PPOConfig) -> tuple[Path, dict[str, Any]]:
    """Train the MLP policy on the one problem, then roll it out greedily: the run directory and the
    metrics written there."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    check_problem(config)
    run_dir = make_run_dir(config, Path(config.problem).stem)
    venv = DummyVecEnv([lambda rank=rank: make_env(config, rank) for rank in range(config.num_envs)])
    model = make_ppo("MlpPolicy", venv, config, run_dir)
    writer = hyperparameter_writer(run_dir, config)
    start = time.perf_counter()
    model.learn(
        total_timesteps=config.total_timesteps,
        callback=progress_callback(config.total_timesteps, config.quiet),
    )
    train_seconds = time.perf_counter() - start
    model.save(run_dir / "model.zip")
    metrics: dict[str, Any] = evaluate_flat(model, config)
    metrics["train_seconds"] = train_seconds
    metrics["timesteps"] = int(model.num_timesteps)
    venv.close()
    finish(writer, run_dir / "metrics.json", metrics, model.num_timesteps)
    return run_dir, metrics
