"""`PPOConfig`: what a MaskablePPO run does, by keyword (the flags of ``python -m agents.rl``).

The field docstrings are the flags' help texts. Importing this module imports no torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pddlgym_sl.arguments import check_ranges

__all__ = ["RUN_LABELS", "PPOConfig"]


@dataclass
class PPOConfig:
    """MaskablePPO on PDDL problems: one problem with an MLP, or a split with a relational GNN."""

    policy: Literal["flat", "relational"] = "flat"
    """flat: one problem, fact vectors, MLP; relational: a split, ILG graphs, GNN"""
    domain: str = "ferry"
    """paper domain (blocksworld, ferry, gripper, visitall)"""
    problem: str = "ferry-l3-c3-s1"
    """flat: a PDDL problem file, or the name of a problem of the domain's train split"""
    split: str = "train"
    """relational: the split to train on"""
    train_problems: int | None = None
    """relational: train on this many problems spread over the split's sizes (default: all)"""
    eval_split: str = "val"
    """relational: the held-out split the greedy policy is evaluated on"""
    eval_problems: int | None = None
    """relational: evaluate on this many problems spread over the held-out split (default: all)"""
    eval_max_steps: int = 200
    """relational: a greedy episode that has not reached the goal after this many steps failed"""
    load: Path | None = None
    """relational: evaluate the policy of this run directory instead of training one"""
    total_timesteps: int = 50_000
    """environment steps of training (all environments together)"""
    num_envs: int = 4
    """parallel environments (SB3 DummyVecEnv)"""
    max_episode_steps: int = 100
    """episode truncation during training"""
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
    hidden: int = 64
    """relational: embedding width"""
    layers: int = 4
    """relational: message-passing layers"""
    eval_episodes: int = 10
    """flat: greedy (deterministic, masked) evaluation episodes after training"""
    threads: int = 1
    """torch threads"""
    log_dir: Path = Path("runs")
    """root directory of the run directories"""
    name: str | None = None
    """run directory name (default: rl__<domain>__<problem or split>__<label>__s<seed>__<time>)"""
    device: str = "cpu"
    """torch device"""
    quiet: bool = False
    """no progress bar"""

    def __post_init__(self) -> None:
        check_ranges(
            self,
            positive=(
                "train_problems",
                "eval_problems",
                "eval_max_steps",
                "total_timesteps",
                "num_envs",
                "max_episode_steps",
                "learning_rate",
                "n_steps",
                "batch_size",
                "n_epochs",
                "hidden",
                "layers",
                "eval_episodes",
                "threads",
            ),
            non_negative=("ent_coef",),
            unit_interval=("gamma",),
        )


RUN_LABELS = {"flat": "maskableppo", "relational": "relational-maskableppo"}
"""The policy's part of a run directory's name."""
