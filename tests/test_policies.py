"""The relational policy (`agents.policies`): one network for problems of every size, its SB3
policy on padded observations equal to the network on plain ones, and greedy rollouts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.errors import AgentError
from agents.graphs import batch, ilg_data
from agents.policies import RelationalActorCritic, RelationalMaskablePolicy
from agents.policies.greedy import greedy_episodes
from agents.policies.maskable import NO_ACTION_LOGIT, network_sizes
from pddlgym_sl.envs import PDDLEnv
from tests.problems import DOMAINS
from tests.test_envs import SIZES, train_files


@pytest.fixture(autouse=True)
def problem_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PDDLGYM_SL_CACHE", str(tmp_path / "cache"))


def padded_env(**kwargs) -> PDDLEnv:
    return PDDLEnv(
        domain="ferry",
        problems=train_files(),
        obs="ilg",
        padded=True,
        action_table=True,
        heuristics=(),
        **kwargs,
    )


def test_network_sizes_come_from_the_domain():
    env = padded_env()
    sizes = network_sizes(env.observation_space)
    assert sizes == {"n_labels": 1 + 3 * 7, "n_positions": 2, "n_schemas": 3, "max_params": 2}
    for kwargs in ({"obs": "nlm", "action_table": True}, {"obs": "ilg", "padded": True}):
        bad = PDDLEnv(domain="ferry", limit=1, heuristics=(), **kwargs)
        with pytest.raises(AgentError, match="obs='ilg', padded=True, action_table=True"):
            network_sizes(bad.observation_space)
    hyper = PDDLEnv(domain="ferry", limit=1, obs="hypergraph", padded=True, action_table=True, heuristics=())
    with pytest.raises(AgentError, match="node labels"):
        network_sizes(hyper.observation_space)


def test_sb3_policy_on_padded_observations_equals_the_network_on_plain_ones():
    from stable_baselines3.common.utils import obs_as_tensor

    env = padded_env()
    plain = PDDLEnv(domain="ferry", problems=train_files(), obs="ilg", action_table=True, heuristics=())
    torch.manual_seed(0)
    policy = RelationalMaskablePolicy(
        env.observation_space, env.action_space, lambda _: 1e-3, hidden=16, layers=2
    )
    padded_obs, plain_obs, masks = [], [], []
    for name in SIZES:
        o, info = env.reset(seed=0, options={"problem": name})
        padded_obs.append(o)
        masks.append(info["action_mask"])
        plain_obs.append(plain.reset(seed=0, options={"problem": name})[0])
    stacked = obs_as_tensor({k: np.stack([o[k] for o in padded_obs]) for k in padded_obs[0]}, "cpu")
    with torch.no_grad():
        logits, values = policy.logits_and_values(stacked)
        scores, ref_values = policy.net(batch([ilg_data(o) for o in plain_obs]))
    assert logits.shape == (3, 50) and values.shape == (3, 1)
    assert torch.allclose(values[:, 0], ref_values, atol=1e-5)
    start = 0
    for row, n in zip(logits, (10, 30, 50), strict=True):
        assert torch.allclose(row[:n], scores[start : start + n], atol=1e-5)
        assert (row[n:] == NO_ACTION_LOGIT).all()
        start += n
    # SB3's entry points: masked actions are applicable ones; evaluate_actions agrees with forward.
    actions, values2, log_prob = policy(stacked, deterministic=True, action_masks=np.stack(masks))
    for a, m in zip(actions.tolist(), masks, strict=True):
        assert m[a] == 1
    v, lp, entropy = policy.evaluate_actions(stacked, actions, action_masks=torch.as_tensor(np.stack(masks)))
    assert torch.allclose(lp, log_prob) and torch.allclose(v, values2) and (entropy >= 0).all()
    assert torch.allclose(policy.predict_values(stacked), values2)


@pytest.mark.slow  # half a minute of PPO; test_rl.py smokes the policy
def test_one_network_plays_problems_larger_than_any_it_was_built_for(tmp_path):
    """Built from the sizes of 2-location, 2-car problems, it plays a 7-location, 7-car one."""
    import domains

    env = PDDLEnv(domain="ferry", problems=train_files(SIZES[:1]), obs="ilg", padded=True, action_table=True)
    torch.manual_seed(0)
    net = RelationalActorCritic(**network_sizes(env.observation_space), hidden=16, layers=2)
    big = tmp_path / "ferry-l7-c7.pddl"
    big.write_text(domains.generate_problem("ferry", seed=1, locations=7, cars=7))
    small = train_files(SIZES[:1])
    episodes = greedy_episodes(net, DOMAINS / "ferry" / "domain.pddl", [*small, big], max_steps=30)
    assert [e.problem for e in episodes] == [SIZES[0], big.name]
    for e in episodes:
        assert 1 <= e.length <= 30 and (e.solved or e.length == 30)


def test_greedy_episodes_follow_the_best_scored_applicable_action(monkeypatch):
    """A network scoring actions by index plays the applicable action of highest index."""
    files = train_files(SIZES[:1])
    env = PDDLEnv(domain="ferry", problems=files, obs="ilg", action_table=True, heuristics=())

    class ByIndex(torch.nn.Module):
        def forward(self, data):
            return torch.arange(int(data.num_actions.sum()), dtype=torch.float32), torch.zeros(1)

    episodes = greedy_episodes(ByIndex(), DOMAINS / "ferry" / "domain.pddl", files, max_steps=6)
    _, info = env.reset(seed=0)
    for _ in range(episodes[0].length):
        _, _, terminated, _, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
    assert terminated == episodes[0].solved
