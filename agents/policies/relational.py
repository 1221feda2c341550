"""A relational actor-critic over the Instance Learning Graph: one network for every problem of a
domain, whatever its size.

Node embeddings come from the ILG (`agents.graphs.ILGData`): each node's label (object, or
predicate x goal status) is embedded, then ``layers`` R-GCN layers (Schlichtkrull et al., 2018;
PyG's `RGCNConv`, mean aggregation) pass messages along the atom -> object edges and back, one
relation per argument position and direction, with residual connections. The graph embedding is
the mean and the max of the node embeddings.

- **Actor**: a ground action is its schema applied to objects, so its score is an MLP of
  ``[schema embedding, embedding of argument 1, ..., argument k (zeros past its arity),
  graph embedding]``; the logits of a state are the scores of its ground actions, as many as the
  problem has. Nothing depends on how many objects or actions a problem has, so a policy trained
  on small problems plays larger ones.
- **Critic**: an MLP of the graph embedding.

The sizes it needs are the domain's (`RelationalActorCritic.config`): node labels ``1 + 3P``,
argument positions, action schemas and their largest arity.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn
from torch_geometric.nn import RGCNConv, global_max_pool, global_mean_pool

from agents.errors import AgentError
from agents.graphs import ILGData

__all__ = ["RelationalActorCritic"]


def _mlp(n_in: int, hidden: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1)
    )


class RelationalActorCritic(nn.Module):
    """Action scores and state values of a batch of ILGs with their action tables.

    Args:
        n_labels: node labels of the domain's ILG (``1 + 3 * n_predicates``).
        n_positions: argument positions (edge labels: the largest predicate arity).
        n_schemas: action schemas of the domain.
        max_params: the largest action-schema arity.
        hidden: embedding width.
        layers: message-passing layers.
    """

    def __init__(
        self,
        n_labels: int,
        n_positions: int,
        n_schemas: int,
        max_params: int,
        hidden: int = 64,
        layers: int = 4,
    ) -> None:
        super().__init__()
        if min(n_labels, n_positions, n_schemas, hidden) < 1 or max_params < 0 or layers < 0:
            raise AgentError(
                f"bad relational network sizes: labels {n_labels}, positions {n_positions}, "
                f"schemas {n_schemas}, params {max_params}, hidden {hidden}, layers {layers}"
            )
        self._config = {
            "n_labels": n_labels,
            "n_positions": n_positions,
            "n_schemas": n_schemas,
            "max_params": max_params,
            "hidden": hidden,
            "layers": layers,
        }
        self.n_positions, self.max_params, self.hidden = n_positions, max_params, hidden
        self.embed = nn.Embedding(n_labels, hidden)
        self.convs = nn.ModuleList(RGCNConv(hidden, hidden, 2 * n_positions) for _ in range(layers))
        self.schema_embed = nn.Embedding(n_schemas, hidden)
        self.actor = _mlp(hidden * (1 + max_params) + 2 * hidden, hidden)
        self.critic = _mlp(2 * hidden, hidden)

    def config(self) -> dict[str, Any]:
        """The constructor's arguments (to rebuild the network from a checkpoint)."""
        return dict(self._config)

    def forward(self, data: ILGData) -> tuple[Tensor, Tensor]:
        """``(scores [total actions], values [graphs])`` of a batched `ILGData` (`agents.graphs`)."""
        num_actions = torch.as_tensor(data.num_actions, device=data.x.device).reshape(-1)
        n_graphs = num_actions.numel()
        node_graph = data.batch if data.batch is not None else data.x.new_zeros(data.num_nodes)

        ei, pos = data.edge_index, data.edge_attr
        edge_index = torch.cat([ei, ei.flip(0)], dim=1)
        edge_type = torch.cat([pos, pos + self.n_positions])
        h = self.embed(data.x)
        for conv in self.convs:
            h = h + torch.relu(conv(h, edge_index, edge_type))
        g = torch.cat(
            [global_mean_pool(h, node_graph, size=n_graphs), global_max_pool(h, node_graph, size=n_graphs)],
            dim=1,
        )

        n_total = int(num_actions.sum())
        action_graph = torch.repeat_interleave(torch.arange(n_graphs, device=h.device), num_actions)
        slots = h.new_zeros(n_total, self.max_params, self.hidden)
        action, node = data.action_args
        slots[action, data.action_arg_pos] = h[node]
        features = torch.cat(
            [self.schema_embed(data.action_schema), slots.flatten(1), g[action_graph]], dim=1
        )
        return self.actor(features).squeeze(-1), self.critic(g).squeeze(-1)
