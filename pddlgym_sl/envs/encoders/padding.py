"""Graph observations as fixed-size arrays: what libraries without graph spaces (SB3, shared
memory of Gymnasium's `AsyncVectorEnv`) can store.

A padded graph is a `spaces.Dict` of Boxes::

    "nodes"       (max_nodes,) int64 labels, or (max_nodes, F) float32 features
    "edges"       (max_edges,) int64 edge labels
    "edge_links"  (max_edges, 2) int64 (sender, receiver) rows
    "n_nodes"     (1,) int64: the graph's nodes are the first n_nodes rows of "nodes"
    "n_edges"     (1,) int64: its edges are the first n_edges rows of "edges" / "edge_links"

Everything past ``n_nodes`` / ``n_edges`` is zero. `unpad_graph` gives the `GraphInstance` back.
The ``ilg`` and ``hypergraph`` encoders produce it when given ``max_nodes`` and ``max_edges``;
an environment with ``padded=True`` sets those to the largest graph its problems can have.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.spaces import GraphInstance

from pddlgym_sl.errors import PDDLError
from pddlgym_sl.task import CompiledTask

__all__ = ["PADDED_GRAPH_KEYS", "check_graph_bounds", "pad_graph", "padded_graph_space", "unpad_graph"]

PADDED_GRAPH_KEYS = ("nodes", "edges", "edge_links", "n_nodes", "n_edges")


def padded_graph_space(graph: spaces.Graph, max_nodes: int, max_edges: int) -> spaces.Dict:
    """The padded form of `graph` (a `spaces.Graph` with Discrete or Box nodes, Discrete edges)."""
    node = graph.node_space
    if isinstance(node, spaces.Discrete):
        nodes = spaces.Box(0, int(node.n) - 1, shape=(max_nodes,), dtype=np.int64)
    else:
        assert isinstance(node, spaces.Box)
        nodes = spaces.Box(
            np.broadcast_to(node.low, (max_nodes, *node.shape)),
            np.broadcast_to(node.high, (max_nodes, *node.shape)),
            dtype=node.dtype,
        )
    assert isinstance(graph.edge_space, spaces.Discrete)
    return spaces.Dict(
        {
            "nodes": nodes,
            "edges": spaces.Box(0, int(graph.edge_space.n) - 1, shape=(max_edges,), dtype=np.int64),
            "edge_links": spaces.Box(0, max(max_nodes - 1, 0), shape=(max_edges, 2), dtype=np.int64),
            "n_nodes": spaces.Box(0, max_nodes, shape=(1,), dtype=np.int64),
            "n_edges": spaces.Box(0, max_edges, shape=(1,), dtype=np.int64),
        }
    )


def pad_graph(graph: GraphInstance, max_nodes: int, max_edges: int) -> dict[str, np.ndarray]:
    """`graph` as the padded arrays of `padded_graph_space` (fresh arrays)."""
    n, e = len(graph.nodes), len(graph.edges)
    nodes = np.zeros((max_nodes, *graph.nodes.shape[1:]), dtype=graph.nodes.dtype)
    nodes[:n] = graph.nodes
    edges = np.zeros(max_edges, dtype=np.int64)
    edges[:e] = graph.edges
    links = np.zeros((max_edges, 2), dtype=np.int64)
    links[:e] = graph.edge_links
    return {
        "nodes": nodes,
        "edges": edges,
        "edge_links": links,
        "n_nodes": np.array([n], dtype=np.int64),
        "n_edges": np.array([e], dtype=np.int64),
    }


def unpad_graph(padded: dict[str, np.ndarray]) -> GraphInstance:
    """The `GraphInstance` of one padded graph."""
    n, e = int(padded["n_nodes"][0]), int(padded["n_edges"][0])
    return GraphInstance(padded["nodes"][:n], padded["edges"][:e], padded["edge_links"][:e])


def check_graph_bounds(
    task: CompiledTask, bounds: tuple[int, int], max_nodes: int | None, max_edges: int | None
) -> tuple[int, int] | None:
    """``(max_nodes, max_edges)`` when padding is asked for (both given), None when neither is;
    `PDDLError` naming the problem when the task's largest graph `bounds` does not fit."""
    if max_nodes is None and max_edges is None:
        return None
    if max_nodes is None or max_edges is None:
        from pddlgym_sl.errors import ConfigError

        raise ConfigError("a padded graph needs both max_nodes and max_edges")
    if bounds[0] > max_nodes or bounds[1] > max_edges:
        raise PDDLError(
            f"graphs of task {task.name!r} may have {bounds[0]} nodes and {bounds[1]} edges, more than "
            f"the padded observation's {max_nodes} nodes and {max_edges} edges",
            file=task.problem_file,
        )
    return int(max_nodes), int(max_edges)
