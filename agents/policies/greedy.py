"""Greedy rollouts of a `RelationalActorCritic` on any problems of its domain.

The network reads plain (unpadded) ILG observations with the action table here, one state at a
time, so the problems may be larger than anything it was trained on: the environment is made on
the held-out problems alone, with its own action space. In each state the applicable action with
the highest score is taken (ties: the lowest index) until the goal holds or ``max_steps`` actions
were taken.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from agents.graphs import batch, ilg_data
from agents.policies.relational import RelationalActorCritic
from pddlgym_sl.envs import PDDLEnv

__all__ = ["Episode", "greedy_episodes"]


@dataclass(frozen=True)
class Episode:
    """One greedy episode: the problem's file name, whether the goal was reached, actions taken."""

    problem: str
    solved: bool
    length: int


@torch.no_grad()
def greedy_episodes(
    net: RelationalActorCritic, domain_file: Path, problems: list[Path], max_steps: int
) -> list[Episode]:
    """One greedy episode per problem (see the module docstring)."""
    env = PDDLEnv(domain_file=domain_file, problems=problems, obs="ilg", action_table=True, heuristics=())
    was_training = net.training
    net.eval()
    episodes = []
    for name in env.problem_names:
        obs, info = env.reset(seed=0, options={"problem": name})
        steps, terminated = 0, env.task.is_goal(env.state)
        while not terminated and steps < max_steps:
            scores, _ = net(batch([ilg_data(obs)]))
            applicable = info["action_mask"][: len(scores)].astype(bool)
            if not applicable.any():  # a dead end
                break
            scores = scores.numpy()
            action = int(np.flatnonzero(applicable)[np.argmax(scores[applicable])])
            obs, _, terminated, _, info = env.step(action)
            steps += 1
        episodes.append(Episode(name, bool(terminated), steps))
    net.train(was_training)
    return episodes
