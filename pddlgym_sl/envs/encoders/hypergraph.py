"""``hypergraph``: the delete-relaxed STRIPS hypergraph of STRIPS-HGN (Shen, Trevizan and Thiébaux),
as a bipartite `gymnasium.spaces.Graph`.

In STRIPS-HGN every proposition is a node and every ground action a directed hyperedge from its
preconditions (senders) to its add effects (receivers); delete effects are ignored (the delete
relaxation). A `spaces.Graph` has no hyperedges, so the observation is the equivalent bipartite
graph (the "star expansion"):

- **nodes** ``0 .. n_facts - 1``: the task's facts (fact-index order); then ``n_facts + a`` for
  ground action ``a``; then, with ``static=True`` (default), one node per static atom (the
  grounder has already compiled them into which actions exist, so they have no edges; they are
  there because every observation carries the static atoms; drop them with ``static=False``);
- **node features** (float32, 6 columns)::

      fact / static atom:  [in state, in goal, 0, 0,    0,     0    ]
      action:              [0,        0,       1, cost, |pre|, |add|]

  ``node_space = Box(0, inf, (6,), float32)``;
- **edges**: fact -> action for each precondition (label 0), action -> fact for each add effect
  (label 1); ``edge_space = Discrete(2)``. ``edge_links`` rows are (sender, receiver), int64.

Only the first two columns of fact nodes change from state to state. For a model that wants the
hypergraph itself, `HypergraphEncoder.hyperedges` gives the raw CSR incidence (senders =
preconditions, receivers = add effects, per action) and `fact_features` / `fact_features_batch`
the per-state proposition features, so torch-geometric data can be built without the Graph space.

With ``max_nodes`` and ``max_edges`` the observation is the fixed-size padded form of
`pddlgym_sl.envs.encoders.padding` (a `spaces.Dict` of Boxes); the graph's size is fixed per task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.spaces import GraphInstance
from numba import njit

from pddlgym_sl.envs.encoders.padding import check_graph_bounds, pad_graph, padded_graph_space
from pddlgym_sl.envs.encoders.schema import Schema, batch_bits, state_bits
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.successors import holds
from pddlgym_sl.task import CompiledTask, State

__all__ = ["FEATURES", "Hyperedges", "HypergraphEncoder", "hypergraph_space"]

FEATURES = ("in_state", "in_goal", "is_action", "cost", "n_pre", "n_add")
"""Column names of the node features."""

PRECONDITION, ADD_EFFECT = 0, 1
"""Edge labels."""


def hypergraph_space() -> spaces.Graph:
    """The observation space of ``hypergraph`` (the same for every task)."""
    return spaces.Graph(
        node_space=spaces.Box(0.0, np.inf, shape=(len(FEATURES),), dtype=np.float32),
        edge_space=spaces.Discrete(2),
    )


@dataclass(frozen=True)
class Hyperedges:
    """The delete-relaxed hypergraph of a task in CSR form (one hyperedge per ground action).

    Attributes:
        senders_ptr, senders: preconditions of action ``a`` are
            ``senders[senders_ptr[a]:senders_ptr[a + 1]]`` (fact indices, int32).
        receivers_ptr, receivers: add effects, same layout.
        features: (n_actions, 3) float32 ``[cost, |pre|, |add|]`` per hyperedge.
    """

    senders_ptr: np.ndarray
    senders: np.ndarray
    receivers_ptr: np.ndarray
    receivers: np.ndarray
    features: np.ndarray


class HypergraphEncoder:
    """Encodes states of one task as the bipartite STRIPS-HGN graph (see the module docstring).

    Args:
        schema: the domain's vocabulary (only used for the static atoms).
        task: the compiled problem.
        static: append the static atoms as isolated nodes (default True).
        max_nodes, max_edges: pad every graph to this size (both or neither); `PDDLError` if the
            task's graph is larger.

    Attributes:
        space: the `spaces.Graph`, or its padded `spaces.Dict`.
        graph_bounds: (nodes, edges) of the task's graphs (the same in every state).
    """

    graph: ClassVar[bool] = True
    """Observations are variable-size `spaces.Graph` s; ``max_nodes`` and ``max_edges`` (an
    environment's ``padded=True``) make them fixed-size dicts of arrays."""
    width: ClassVar[str] = "fixed"
    """The same space for every problem of the domain (padded: sized by `padding`)."""
    size_options: ClassVar[tuple[str, ...]] = ("max_nodes", "max_edges")
    """The options `padding` returns."""

    def __init__(
        self,
        schema: Schema,
        task: CompiledTask,
        static: bool = True,
        max_nodes: int | None = None,
        max_edges: int | None = None,
    ) -> None:
        self.schema, self.task = schema, task
        self.n_facts, self.n_actions = task.n_facts, task.n_actions
        n_static = schema.atom_table(task).n_static if static else 0
        self.n_static = n_static

        n_pre = np.diff(task.pre_ptr).astype(np.float32)
        n_add = np.diff(task.add_ptr).astype(np.float32)
        cost = np.asarray(task.action_costs, dtype=np.float32)
        self.hyperedges = Hyperedges(
            task.pre_ptr, task.pre_idx, task.add_ptr, task.add_idx, np.stack([cost, n_pre, n_add], axis=1)
        )

        feats = np.zeros((self.n_facts + self.n_actions + n_static, len(FEATURES)), dtype=np.float32)
        feats[task.goal, 1] = 1.0
        feats[self.n_facts : self.n_facts + self.n_actions, 2] = 1.0
        feats[self.n_facts : self.n_facts + self.n_actions, 3:] = self.hyperedges.features
        feats[self.n_facts + self.n_actions :, 0] = 1.0
        self._features = feats

        pre_action = np.repeat(np.arange(self.n_actions, dtype=np.int64), np.diff(task.pre_ptr))
        add_action = np.repeat(np.arange(self.n_actions, dtype=np.int64), np.diff(task.add_ptr))
        self._edge_links = np.concatenate(
            [
                np.stack([task.pre_idx.astype(np.int64), self.n_facts + pre_action], axis=1),
                np.stack([self.n_facts + add_action, task.add_idx.astype(np.int64)], axis=1),
            ]
        ).reshape(-1, 2)
        self._edges = np.concatenate(
            [np.full(len(pre_action), PRECONDITION, dtype=np.int64), np.full(len(add_action), ADD_EFFECT)]
        ).astype(np.int64)
        self.graph_bounds = (len(feats), len(self._edges))
        self._pad = check_graph_bounds(task, self.graph_bounds, max_nodes, max_edges)
        graph = hypergraph_space()
        self.space = graph if self._pad is None else padded_graph_space(graph, *self._pad)

    @classmethod
    def padding(cls, schema: Schema, task: CompiledTask, static: bool = True) -> dict[str, int]:
        """The smallest ``max_nodes`` and ``max_edges`` that fit the graphs of `task`."""
        nodes, edges = cls(schema, task, static=static).graph_bounds
        return {"max_nodes": nodes, "max_edges": edges}

    def encode(self, state: State | np.ndarray) -> GraphInstance | dict[str, np.ndarray]:
        """The bipartite graph of `state` (a `State` or its uint64 words; padded if so built);
        fresh arrays every call."""
        nodes = _features(state.words if isinstance(state, State) else state, self._features, self.n_facts)
        if self._pad is not None:
            return pad_graph(GraphInstance(nodes, self._edges, self._edge_links), *self._pad)
        return GraphInstance(nodes, self._edges.copy(), self._edge_links.copy())

    def fact_features(self, state: State | np.ndarray) -> np.ndarray:
        """(n_facts, 2) float32 ``[in state, in goal]`` per proposition."""
        out = np.empty((self.n_facts, 2), dtype=np.float32)
        out[:, 0] = state_bits(state, self.n_facts)
        out[:, 1] = self._features[: self.n_facts, 1]
        return out

    def fact_features_batch(self, states: np.ndarray) -> np.ndarray:
        """(B, n_facts, 2) float32 proposition features of a (B, n_words) uint64 batch."""
        bits = batch_bits(states, self.n_facts)
        out = np.empty((bits.shape[0], self.n_facts, 2), dtype=np.float32)
        out[:, :, 0] = bits
        out[:, :, 1] = self._features[None, : self.n_facts, 1]
        return out


@njit(cache=CACHE)
def _features(words, template, n_facts):
    out = template.copy()
    for f in range(n_facts):
        out[f, 0] = 1.0 if holds(words, f) else 0.0
    return out
