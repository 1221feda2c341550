"""`RelationalMaskablePolicy`: the relational actor-critic as an sb3-contrib MaskablePPO policy.

Stable-Baselines3 stores observations in fixed-size buffers and has no graph space, so the
environment gives the ILG padded and with its action table
(``gym.make("pddl/<domain>-v1", obs="ilg", padded=True, action_table=True)``: see
`pddlgym_sl.envs.PDDLEnv`); the policy rebuilds the graphs of a batch of observations with
`agents.graphs.padded_ilg_batch` and scores them with `RelationalActorCritic`. The logits of a
state are its ground actions' scores in action-index order; the indices past the problem's
actions (the action space is ``Discrete(max_actions)``) get `NO_ACTION_LOGIT`, so they are never
chosen even without a mask.

SB3's feature extractor and MLP heads are not used: ``forward``, ``evaluate_actions``,
``get_distribution`` and ``predict_values`` go through the network directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import MaskableDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import Tensor

from agents.errors import AgentError
from agents.graphs import padded_ilg_batch
from agents.policies.relational import RelationalActorCritic
from pddlgym_sl.envs.encoders.padding import PADDED_GRAPH_KEYS

__all__ = ["NO_ACTION_LOGIT", "RelationalMaskablePolicy", "network_sizes"]

NO_ACTION_LOGIT = -1e8
"""Logit of the action indices past the current problem's actions (as MaskablePPO's masking)."""


def network_sizes(observation_space: spaces.Space) -> dict[str, int]:
    """The domain sizes of `RelationalActorCritic` read from a padded ILG space with actions."""
    keys = (*PADDED_GRAPH_KEYS, "actions")
    if not isinstance(observation_space, spaces.Dict) or not all(k in observation_space.spaces for k in keys):
        raise AgentError(
            "the relational policy reads padded ILG observations with the action table: make the "
            "environment with obs='ilg', padded=True, action_table=True"
        )
    nodes, edges, table = (observation_space[k] for k in ("nodes", "edges", "actions"))
    if len(nodes.shape) != 1:
        raise AgentError("the relational policy reads ILG node labels, not feature rows (obs='ilg')")
    return {
        "n_labels": int(np.max(nodes.high)) + 1,
        "n_positions": int(np.max(edges.high)) + 1,
        "n_schemas": int(np.max(table.high[:, 0])) + 1,
        "max_params": table.shape[1] - 1,
    }


class RelationalMaskablePolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy scoring each ground action with `RelationalActorCritic`.

    ``policy_kwargs``: ``hidden`` (embedding width, default 64), ``layers`` (message-passing
    layers, default 4), and MaskableActorCriticPolicy's optimizer options.
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        lr_schedule: Any,
        hidden: int = 64,
        layers: int = 4,
        **kwargs: Any,
    ) -> None:
        self.hidden, self.layers = hidden, layers
        kwargs["ortho_init"] = False  # the network initialises itself
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build(self, lr_schedule: Any) -> None:
        sizes = network_sizes(self.observation_space)
        self.net = RelationalActorCritic(**sizes, hidden=self.hidden, layers=self.layers)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(hidden=self.hidden, layers=self.layers)
        return data

    def logits_and_values(self, obs: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
        """``(logits [B, max_actions], values [B, 1])`` of a batch of padded observations."""
        graphs = padded_ilg_batch(obs)
        scores, values = self.net(graphs)
        num_actions = graphs.num_actions
        size = num_actions.numel()
        graph = torch.repeat_interleave(torch.arange(size, device=scores.device), num_actions)
        first = torch.cumsum(num_actions, 0) - num_actions
        local = torch.arange(scores.numel(), device=scores.device) - first[graph]
        logits = scores.new_full((size, int(self.action_space.n)), NO_ACTION_LOGIT)
        logits[graph, local] = scores
        return logits, values.unsqueeze(-1)

    def _distribution(self, logits: Tensor, action_masks: np.ndarray | Tensor | None) -> MaskableDistribution:
        distribution = self.action_dist.proba_distribution(action_logits=logits)
        if action_masks is not None:
            distribution.apply_masking(action_masks)
        return distribution

    def forward(
        self, obs: dict[str, Tensor], deterministic: bool = False, action_masks: np.ndarray | None = None
    ) -> tuple[Tensor, Tensor, Tensor]:
        logits, values = self.logits_and_values(obs)
        distribution = self._distribution(logits, action_masks)
        actions = distribution.get_actions(deterministic=deterministic)
        return actions, values, distribution.log_prob(actions)

    def evaluate_actions(
        self, obs: dict[str, Tensor], actions: Tensor, action_masks: Tensor | None = None
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        logits, values = self.logits_and_values(obs)
        distribution = self._distribution(logits, action_masks)
        return values, distribution.log_prob(actions), distribution.entropy()

    def get_distribution(
        self, obs: dict[str, Tensor], action_masks: np.ndarray | None = None
    ) -> MaskableDistribution:
        return self._distribution(self.logits_and_values(obs)[0], action_masks)

    def predict_values(self, obs: dict[str, Tensor]) -> Tensor:
        return self.net(padded_ilg_batch(obs))[1].unsqueeze(-1)
