"""Environment observations as torch-geometric graphs, with the action table mapped to node indices.

The environments (`pddlgym_sl.envs`) speak numpy: ``ilg`` and ``hypergraph`` observations are
`GraphInstance` s, or fixed-size dicts with ``padded=True``, and ``action_table=True`` adds what
each ground action is (schema id, argument objects). This module turns them into what a PyG
model reads:

- `ilg_data`: one ILG observation -> `ILGData` (node labels, atom -> object edges labelled by
  argument position and, with the action table, every ground action's schema and its arguments
  as object-node indices);
- `hypergraph_data`: one hypergraph observation -> `HypergraphActionData`, the `HypergraphData`
  that STRIPS-HGN (`agents.models.strips_hgn`) reads, plus each action's schema and hyperedge;
- `batch`: a list of them (graphs of different sizes) -> one `Batch`, indices shifted per graph;
- `padded_ilg_batch`: a batch of padded ILG observations as tensors (what Stable-Baselines3
  hands a policy) -> the same content as ``batch([ilg_data(o) for o in ...])``, built with
  tensor operations and no Python loop over the graphs.

Action ``a`` of an observation is row ``a`` of its action table; in a batch, the actions of
graph ``i`` follow those of graphs ``0 .. i-1`` (``num_actions`` per graph).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from gymnasium.spaces import GraphInstance
from torch import Tensor
from torch_geometric.data import Batch, Data

from agents.errors import AgentError
from agents.models.strips_hgn.data import HypergraphData
from pddlgym_sl.envs.encoders.padding import PADDED_GRAPH_KEYS, unpad_graph

__all__ = [
    "HypergraphActionData",
    "ILGData",
    "batch",
    "hypergraph_data",
    "ilg_data",
    "padded_ilg_batch",
]

Observation = GraphInstance | Mapping[str, Any]


class ILGData(Data):
    """One Instance Learning Graph (or a batch of them) with its ground actions.

    Attributes:
        x: ``[N]`` long node labels (objects first: node ``i < n_objects`` is ``task.objects[i]``).
        edge_index: ``[2, E]`` long, atom node -> object node; edge_attr: ``[E]`` long positions.
        action_schema: ``[A]`` long schema id of each ground action (with the action table).
        action_args: ``[2, P]`` long (action, object node) pairs, one per argument;
            action_arg_pos: ``[P]`` long, the argument's position.
        num_actions: number of ground actions (a ``[B]`` tensor once batched).
    """

    def __inc__(self, key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        if key == "action_args":
            return torch.tensor([[self.num_actions], [self.num_nodes]])
        return super().__inc__(key, value, *args, **kwargs)

    def __cat_dim__(self, key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        if key == "action_args":
            return 1
        return super().__cat_dim__(key, value, *args, **kwargs)


class HypergraphActionData(HypergraphData):
    """`HypergraphData` with the action table: ``action_schema`` ``[A]`` (schema id per action)
    and ``action_edge`` ``[A]`` (its hyperedge, shifted like ``pre_edge`` when batched)."""

    def __inc__(self, key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        if key == "action_edge":
            return self.num_hyperedges
        return super().__inc__(key, value, *args, **kwargs)


def _split(obs: Observation) -> tuple[GraphInstance, np.ndarray | None]:
    """(graph, action table or None) of an observation in any of the environment's forms."""
    if isinstance(obs, GraphInstance):
        return obs, None
    if not isinstance(obs, Mapping):
        raise AgentError(f"expected a graph observation, got {type(obs).__name__}")
    table = obs.get("actions")
    if "state" in obs:
        graph = obs["state"]
    elif all(k in obs for k in PADDED_GRAPH_KEYS):
        graph = unpad_graph(obs)  # type: ignore[arg-type]
    else:
        raise AgentError(f"expected a graph observation, got a dict with keys {sorted(obs)}")
    if isinstance(graph, Mapping):
        graph = unpad_graph(graph)  # type: ignore[arg-type]
    return graph, None if table is None else np.asarray(table)


def _long(a: np.ndarray) -> Tensor:
    return torch.as_tensor(np.asarray(a, dtype=np.int64))


def ilg_data(obs: Observation) -> ILGData:
    """One ``ilg`` observation (plain, padded, with or without the action table) as `ILGData`."""
    graph, table = _split(obs)
    data = ILGData(
        x=_long(graph.nodes),
        edge_index=_long(graph.edge_links).reshape(-1, 2).t().contiguous(),
        edge_attr=_long(graph.edges),
        num_nodes=len(graph.nodes),
    )
    if table is not None:
        rows = table[table[:, 0] >= 0]  # padding rows are the last ones
        action, pos = np.nonzero(rows[:, 1:] >= 0)
        data.action_schema = _long(rows[:, 0])
        data.action_args = _long(np.stack([action, rows[action, 1 + pos]]))
        data.action_arg_pos = _long(pos)
        data.num_actions = len(rows)
    return data


def hypergraph_data(obs: Observation, dtype: torch.dtype = torch.float32) -> HypergraphActionData:
    """One ``hypergraph`` observation as the `HypergraphData` of STRIPS-HGN.

    Fact nodes become nodes with features ``[in state, in goal]``, action nodes become hyperedges
    (features ``[cost, |pre|, |add|]``; senders: preconditions, receivers: add effects) and the
    global features are ``[log(1 + #facts), log(1 + #actions)]``, as in
    `agents.models.strips_hgn.hypergraph.hypergraph_data`. The static-atom nodes (after the action
    nodes, without edges) are not facts and are left out; a graph without actions keeps every node.
    """
    graph, table = _split(obs)
    feats = np.asarray(graph.nodes, dtype=np.float32)
    is_action = feats[:, 2] > 0
    n_actions = int(is_action.sum())
    n_facts = int(np.argmax(is_action)) if n_actions else len(feats)
    links = np.asarray(graph.edge_links, dtype=np.int64).reshape(-1, 2)
    edges = np.asarray(graph.edges)
    pre, add = links[edges == 0], links[edges == 1]
    data = HypergraphActionData(
        x=torch.as_tensor(feats[:n_facts, :2], dtype=dtype),
        edge_attr=torch.as_tensor(feats[n_facts : n_facts + n_actions, 3:], dtype=dtype),
        u=torch.as_tensor(np.log1p([[n_facts, n_actions]]), dtype=dtype),
        pre_fact=_long(pre[:, 0]),
        pre_edge=_long(pre[:, 1] - n_facts),
        add_fact=_long(add[:, 1]),
        add_edge=_long(add[:, 0] - n_facts),
        num_hyperedges=n_actions,
        num_nodes=n_facts,
    )
    if table is not None:
        schema = table[:n_actions, 0]
        data.action_schema = _long(schema)
        data.action_edge = torch.arange(n_actions)
    return data


def batch(graphs: Sequence[Data]) -> Batch:
    """Graphs of different sizes as one torch-geometric `Batch` (node and action indices shifted)."""
    return Batch.from_data_list(list(graphs))


def padded_ilg_batch(obs: Mapping[str, Tensor]) -> ILGData:
    """A batch of padded ``ilg`` observations with the action table (tensors with a leading batch
    axis, any dtype: SB3 hands them over as float32) as one batched `ILGData`.

    Equal to ``batch([ilg_data(o) for o in observations])`` in ``x``, ``edge_index``,
    ``edge_attr``, ``batch``, ``action_schema``, ``action_args``, ``action_arg_pos`` and
    ``num_actions``; built with tensor operations only (the policy's hot path).
    """
    nodes = obs["nodes"].long()
    size, max_nodes = nodes.shape
    device = nodes.device
    n_nodes = obs["n_nodes"].long().reshape(size)
    n_edges = obs["n_edges"].long().reshape(size)
    offset = torch.cumsum(n_nodes, 0) - n_nodes

    node_mask = torch.arange(max_nodes, device=device) < n_nodes[:, None]
    edge_mask = torch.arange(obs["edges"].shape[1], device=device) < n_edges[:, None]
    links = obs["edge_links"].long() + offset[:, None, None]

    table = obs["actions"].long()
    valid = table[:, :, 0] >= 0  # a prefix of each row: actions 0 .. n - 1
    n_actions = valid.sum(1)
    first_action = torch.cumsum(n_actions, 0) - n_actions
    args = table[:, :, 1:]
    g, a, pos = torch.nonzero(args >= 0, as_tuple=True)
    return ILGData(
        x=nodes[node_mask],
        edge_index=links[edge_mask].t().contiguous(),
        edge_attr=obs["edges"].long()[edge_mask],
        batch=torch.repeat_interleave(torch.arange(size, device=device), n_nodes),
        action_schema=table[:, :, 0][valid],
        action_args=torch.stack([first_action[g] + a, offset[g] + args[g, a, pos]]),
        action_arg_pos=pos,
        num_actions=n_actions,
        num_nodes=int(n_nodes.sum()),
    )
