"""Vector environments over problems of different sizes: Gymnasium's sync and async `make_vec`
for every observation type, seeded determinism, and Stable-Baselines3's `make_vec_env`."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

from tests.test_envs import OBS_TYPES, SIZES, train_files

GRAPHS = ("ilg", "hypergraph")


@pytest.fixture(autouse=True)
def problem_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PDDLGYM_SL_CACHE", str(tmp_path / "cache"))


def make_vec(mode: str, obs: str, num_envs: int = 3, **kwargs):
    """The README's recipe: graph observations in async mode go without shared memory."""
    vector_kwargs = {"shared_memory": False} if mode == "async" and obs in GRAPHS else {}
    return gym.make_vec(
        "pddl/ferry-v1",
        num_envs=num_envs,
        vectorization_mode=mode,
        vector_kwargs=vector_kwargs,
        problems=train_files(),
        obs=obs,
        heuristics=(),
        max_episode_steps=12,
        **kwargs,
    )


def play(envs, steps: int, seed: int = 0) -> list:
    """Seeded masked random play; returns everything the vector env returned."""
    rng = np.random.default_rng(seed)
    out = [envs.reset(seed=seed)]
    info = out[0][1]
    for _ in range(steps):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        out.append(envs.step(actions))
        info = out[-1][-1]
    return out


@pytest.mark.parametrize("obs", OBS_TYPES)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_over_problems_of_different_sizes(mode, obs):
    envs = make_vec(mode, obs)
    assert envs.single_action_space == gym.spaces.Discrete(50)
    history = play(envs, 40)
    drawn = set()
    for entry in history:
        obs_batch, info = entry[0], entry[-1]
        assert obs_batch in envs.observation_space
        assert info["action_mask"].shape == (3, 50)
        drawn.update(info["problem"][info["_problem"]].tolist())
    assert drawn == set(SIZES)  # the sub-envs drew problems of every size
    envs.close()


@pytest.mark.parametrize("obs", GRAPHS)
def test_async_graphs_padded_use_shared_memory(obs):
    envs = gym.make_vec(
        "pddl/ferry-v1",
        num_envs=2,
        vectorization_mode="async",
        problems=train_files(),
        obs=obs,
        padded=True,
        action_table=True,
        heuristics=(),
    )
    assert envs.shared_memory
    for obs_batch, *_ in play(envs, 10):
        assert obs_batch in envs.observation_space and obs_batch["actions"].shape == (2, 50, 3)
    envs.close()


def test_async_graphs_need_the_documented_flag():
    """Gymnasium's shared memory has no room for variable-size graphs; its error names the flag
    that the README and `PDDLEnv`'s docstring give (vector_kwargs={"shared_memory": False})."""
    with pytest.raises(TypeError, match="disable `shared_memory`"):
        gym.make_vec("pddl/ferry-v1", num_envs=2, vectorization_mode="async", problems=train_files())


@pytest.mark.parametrize("obs", ["ilg", "nlm"])
def test_seeded_vector_rollouts_are_deterministic_sync_and_async(obs):
    runs = []
    for mode in ("sync", "sync", "async"):
        envs = make_vec(mode, obs, num_envs=2)
        runs.append(play(envs, 30, seed=5))
        envs.close()
    for other in runs[1:]:
        assert len(other) == len(runs[0])
        for x, y in zip(runs[0], other, strict=True):
            assert data_equivalence(x, y, exact=True)


@pytest.mark.parametrize(
    "kwargs",
    [{"obs": "flat"}, {"obs": "nlm"}, {"obs": "ilg", "padded": True}, {"obs": "hypergraph", "padded": True}],
    ids=["flat", "nlm", "ilg-padded", "hypergraph-padded"],
)
def test_sb3_make_vec_env(kwargs):
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    env_kwargs = {"problems": train_files(), "heuristics": (), "action_table": True, **kwargs}
    with pytest.warns(UserWarning, match="render_mode='rgb_array' is not supported"):
        vec = make_vec_env("pddl/ferry-v1", n_envs=2, seed=0, env_kwargs=env_kwargs)
    obs = vec.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        masks = get_action_masks(vec)
        assert masks.shape == (2, 50)
        obs, rewards, _, _ = vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        assert rewards.tolist() == [-1.0, -1.0]
    assert obs["actions"].shape == (2, 50, 3)
    vec.close()
