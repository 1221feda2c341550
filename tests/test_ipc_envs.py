"""Every IPC 2023 Learning Track domain (``../shared/ipc23-lt``; nobody here wrote them) plays
through the generic id ``pddl/custom-v1`` with every observation type.

The default tests play the smallest training task of each domain (by file size); the slow ones
play three tasks of different sizes per domain in one environment, padded and with the action
table, under Gymnasium's checker.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from pddlgym_sl.envs import CUSTOM_ENV_ID
from pddlgym_sl.task import parse_atom
from tests.fd_reference import IPC, IPC_DOMAINS
from tests.test_envs import OBS_TYPES, run_check_env

pytestmark = pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")


def by_size(domain: str) -> list:
    return sorted((IPC / domain / "training").glob("*.pddl"), key=lambda p: (p.stat().st_size, p.name))


def play(env, steps: int, seed: int = 0) -> None:
    """Masked random play across resets: observations in the space, the action table right."""
    rng = np.random.default_rng(seed)
    base = env.unwrapped
    obs, info = env.reset(seed=seed)
    for _ in range(steps):
        assert obs in env.observation_space
        table, task = base.action_table, base.task
        assert (
            info["action_mask"].shape == (env.action_space.n,)
            and not info["action_mask"][task.n_actions :].any()
        )
        for row, name in zip(table, task.actions, strict=False):
            head, args = parse_atom(name)
            assert base.schema.actions[row[0]] == head
            assert tuple(task.objects[o] for o in row[1:] if o >= 0) == args
        applicable = np.flatnonzero(info["action_mask"])
        if len(applicable) == 0:
            obs, info = env.reset()
            continue
        obs, _, terminated, truncated, info = env.step(int(rng.choice(applicable)))
        if terminated or truncated:
            obs, info = env.reset()


@pytest.mark.parametrize("obs", OBS_TYPES)
@pytest.mark.parametrize("domain", IPC_DOMAINS)
def test_smallest_training_task_plays_through_the_generic_id(domain, obs):
    task = by_size(domain)[0]
    env = gym.make(
        CUSTOM_ENV_ID, domain_file=IPC / domain / "domain.pddl", problems=[task], obs=obs, heuristics=("hff",)
    )
    play(env, 25)
    env.close()


@pytest.mark.slow
@pytest.mark.parametrize("obs", OBS_TYPES)
@pytest.mark.parametrize("domain", IPC_DOMAINS)
def test_tasks_of_three_sizes_in_one_environment(domain, obs):
    tasks = by_size(domain)
    chosen = [tasks[0], tasks[len(tasks) // 8], tasks[len(tasks) // 4]]
    padded = {"padded": True} if obs in ("ilg", "hypergraph") else {}
    env = gym.make(
        CUSTOM_ENV_ID,
        domain_file=IPC / domain / "domain.pddl",
        problems=chosen,
        obs=obs,
        action_table=True,
        heuristics=(),
        **padded,
    )
    run_check_env(env.unwrapped)
    play(env, 200)
    assert env.action_space.n == max(env.unwrapped.task_of(i).n_actions for i in range(3))
    env.close()
