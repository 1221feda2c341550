"""Reinforcement learning on one PDDL problem: sb3-contrib's MaskablePPO on ``obs="flat"``.

    python -m agents.rl --problem ferry-l3-c3-s1 --total-timesteps 50000
    tensorboard --logdir runs

The example of the environment's RL door: a fixed small problem (a file, or the name of a problem
of the domain's ``train`` split), ``gym.make("pddl/<domain>-v0", obs="flat", heuristics=())``
vectorised with SB3's `DummyVecEnv`, and the action mask passed to MaskablePPO through the
environment's ``action_masks()`` method, so the policy only ever picks applicable actions.

A run writes ``runs/rl__<domain>__<problem>__maskableppo__s<seed>__<time>/``: TensorBoard events
(SB3's ``rollout/`` and ``train/`` tags, ``eval/`` after training, the hyperparameters as a text
table), ``args.json``, ``model.zip`` (SB3's format) and ``metrics.json`` (the final greedy
evaluation: success rate and mean plan length).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np
import tyro

import pddlgym_sl  # noqa: F401  (registers the pddl/<domain>-v0 ids)


@dataclass
class Args:
    """MaskablePPO on a single PDDL problem with flat fact-vector observations."""

    domain: str = "ferry"
    """paper domain (blocksworld, ferry, gripper, visitall)"""
    problem: str = "ferry-l3-c3-s1"
    """a PDDL problem file, or the name of a problem of the domain's train split"""
    total_timesteps: int = 50_000
    """environment steps of training (all environments together)"""
    num_envs: int = 4
    """parallel environments (SB3 DummyVecEnv)"""
    max_episode_steps: int = 100
    """episode truncation"""
    seed: int = 1
    """seed of the policy, the environments and PyTorch"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    n_steps: int = 128
    """rollout steps per environment per update"""
    batch_size: int = 64
    """minibatch size"""
    n_epochs: int = 10
    """optimisation epochs per update"""
    gamma: float = 0.99
    """discount factor"""
    ent_coef: float = 0.01
    """entropy bonus"""
    eval_episodes: int = 10
    """greedy (deterministic, masked) evaluation episodes after training"""
    log_dir: Path = Path("runs")
    """root directory of the run directories"""
    device: str = "cpu"
    """torch device"""


def make_env(args: Args, rank: int) -> gym.Env:
    """One monitored environment pinned to the problem (flat observations, no heuristics)."""
    from stable_baselines3.common.monitor import Monitor

    path = Path(args.problem)
    where = {"problems": [path]} if path.is_file() else {"split": "train", "problem": args.problem}
    env = gym.make(
        f"pddl/{args.domain}-v0",
        obs="flat",
        heuristics=(),
        max_episode_steps=args.max_episode_steps,
        **where,
    )
    env = Monitor(env)
    env.reset(seed=args.seed + rank)
    return env


def evaluate(model, args: Args) -> dict[str, float | None]:
    """Greedy masked rollouts: success rate, mean episode length and mean length of successes."""
    env = make_env(args, rank=10_000)
    lengths, solved = [], []
    for episode in range(args.eval_episodes):
        obs, _ = env.reset(seed=args.seed + 10_000 + episode)
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


def main(args: Args) -> dict[str, float | None]:
    """Train, evaluate, and write the run directory; return the evaluation metrics."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv
    from torch.utils.tensorboard import SummaryWriter

    problem = Path(args.problem).stem
    run_dir = args.log_dir / f"rl__{args.domain}__{problem}__maskableppo__s{args.seed}__{int(time.time())}"
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "args.json").write_text(json.dumps(asdict(args), default=str, indent=2))

    venv = DummyVecEnv([lambda rank=rank: make_env(args, rank) for rank in range(args.num_envs)])
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        learning_rate=args.learning_rate,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        ent_coef=args.ent_coef,
        seed=args.seed,
        device=args.device,
        verbose=0,
    )
    model.set_logger(configure(str(run_dir), ["tensorboard", "csv"]))
    writer = SummaryWriter(str(run_dir))
    table = "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in asdict(args).items())
    writer.add_text("hyperparameters", table)

    start = time.perf_counter()
    model.learn(total_timesteps=args.total_timesteps)
    train_seconds = time.perf_counter() - start
    model.save(run_dir / "model.zip")

    metrics = evaluate(model, args)
    metrics["train_seconds"] = train_seconds
    metrics["timesteps"] = int(model.num_timesteps)
    for key, value in metrics.items():
        if value is not None:
            writer.add_scalar(f"eval/{key}", value, model.num_timesteps)
    writer.close()
    venv.close()
    (run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2))
    print(f"run: {run_dir}")
    print(" ".join(f"{k}={v if v is None else round(v, 3)}" for k, v in metrics.items()))
    return metrics


if __name__ == "__main__":
    main(tyro.cli(Args))
