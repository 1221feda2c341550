"""``ilg``: the Instance Learning Graph of a state, as a `gymnasium.spaces.Graph` instance.

The graph of Chen, Thiébaux and Trevizan's WL-GOOSE / GOOSE models, which the paper's GNN
heuristics read:

- **nodes** ``0 .. n_objects - 1`` are the task's objects, in ``task.objects`` order (label 0);
- then one node per atom of (state atoms, static atoms included) ∪ (goal atoms), in a fixed
  order: the static atoms (``task.static_atoms`` order, then the type atoms), then the facts in
  fact-index order, each fact present only while it is true or a goal;
- **node label** of an atom of predicate ``p`` (index in the domain's `Schema`)::

      1 + 3 * p + 0   achieved goal   (in the goal and true)
      1 + 3 * p + 1   unachieved goal (in the goal, false)
      1 + 3 * p + 2   non-goal        (true, not in the goal; every static atom)

  so ``node_space = Discrete(1 + 3 * n_predicates)``; `decode_label` / `ILGEncoder.label_name`
  turn a label back into words;
- **edges** go from an atom node to each of its argument (object) nodes, with the argument
  position (0-based) as the edge label: ``edge_space = Discrete(max(1, max_arity))``. A nullary
  atom (``empty-ferry``) is a node without edges. Add the reverse edges in the model if it wants
  undirected message passing.

Arrays: ``nodes`` int64 (n_nodes,), ``edges`` int64 (n_edges,), ``edge_links`` int64 (n_edges, 2)
as (atom node, object node) rows, atom-major. Encoding a state is one compiled (numba) pass over
the packed state and index arrays precomputed once per task (a few microseconds per step).

With ``max_nodes`` and ``max_edges`` the observation is the fixed-size padded form of
`pddlgym_sl.envs.encoders.padding` instead (a `spaces.Dict` of Boxes). A task's graphs have at most
``n_objects + n_static + n_facts`` nodes (`ILGEncoder.graph_bounds`); `ILGEncoder.padding` gives
the options that fit one task, and an environment pads to the largest over its problems.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.spaces import GraphInstance
from numba import njit

from pddlgym_sl.envs.encoders.padding import check_graph_bounds, pad_graph, padded_graph_space
from pddlgym_sl.envs.encoders.schema import Schema, state_bits
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.successors import holds
from pddlgym_sl.task import CompiledTask, State

__all__ = ["STATUS_NAMES", "ILGEncoder", "decode_label", "ilg_space"]

STATUS_NAMES = ("achieved goal", "unachieved goal", "non-goal")
"""Atom status per label offset ``(label - 1) % 3``."""


def ilg_space(schema: Schema) -> spaces.Graph:
    """The observation space of ``ilg`` for every problem of `schema`'s domain."""
    return spaces.Graph(
        node_space=spaces.Discrete(1 + 3 * schema.n_predicates),
        edge_space=spaces.Discrete(max(1, schema.max_arity)),
    )


def decode_label(schema: Schema, label: int) -> tuple[str | None, str]:
    """``(predicate, status)`` of a node label; ``(None, "object")`` for object nodes.

    >>> decode_label(schema, 1 + 3 * schema.index["at"] + 1)
    ('at', 'unachieved goal')
    """
    label = int(label)
    if not 0 <= label < 1 + 3 * schema.n_predicates:
        raise ValueError(f"label {label} out of range 0..{3 * schema.n_predicates}")
    if label == 0:
        return None, "object"
    p, status = divmod(label - 1, 3)
    return schema.predicates[p], STATUS_NAMES[status]


class ILGEncoder:
    """Encodes states of one task as ILG `GraphInstance` s (see the module docstring).

    Args:
        schema: the domain's vocabulary (`Schema.from_domain_file`); fixes the label numbering.
        task: the compiled problem whose states are encoded.
        max_nodes, max_edges: pad every graph to this size (both or neither; see the module
            docstring); `PDDLError` if the task's graphs may be larger.

    Attributes:
        space: the `spaces.Graph` (identical for all tasks of the schema), or its padded `spaces.Dict`.
        n_objects, n_static: the object nodes and the always-present static atom nodes that open
            every graph of this task.
        graph_bounds: (nodes, edges) of the largest graph of this task (every fact present).
    """

    graph: ClassVar[bool] = True
    """Observations are variable-size `spaces.Graph` s; ``max_nodes`` and ``max_edges`` (an
    environment's ``padded=True``) make them fixed-size dicts of arrays."""
    width: ClassVar[str] = "fixed"
    """The same space for every problem of the domain (padded: sized by `padding`)."""
    size_options: ClassVar[tuple[str, ...]] = ("max_nodes", "max_edges")
    """The options `padding` returns."""

    def __init__(
        self, schema: Schema, task: CompiledTask, max_nodes: int | None = None, max_edges: int | None = None
    ) -> None:
        self.schema, self.task = schema, task
        table = schema.atom_table(task)
        self.table = table
        self.n_objects = len(task.objects)
        self.n_static = table.n_static
        self.n_facts = task.n_facts
        arity = np.asarray(schema.arities, dtype=np.int64)

        goal = np.zeros(self.n_facts, dtype=bool)
        goal[task.goal] = True
        self._goal = goal
        base = 1 + 3 * table.fact_pred
        self._label_true = np.where(goal, base, base + 2)  # achieved goal / non-goal
        self._label_false = base + 1  # only used for goal facts

        # Fixed prefix: objects (label 0) and static atoms (non-goal label), with their edges.
        self._prefix_nodes = np.concatenate(
            [np.zeros(self.n_objects, dtype=np.int64), 1 + 3 * table.static_pred + 2]
        )
        s_atom, s_pos = _edge_rows(table.static_args, arity[table.static_pred])
        self._static_edges = s_pos
        self._static_links = np.stack([self.n_objects + s_atom, table.static_args[s_atom, s_pos]], axis=1)
        # Arguments of every fact in CSR form: fact f's objects are arg_obj[arg_ptr[f]:arg_ptr[f + 1]].
        f_arity = arity[table.fact_pred]
        self._arg_ptr = np.zeros(self.n_facts + 1, dtype=np.int64)
        self._arg_ptr[1:] = np.cumsum(f_arity)
        f_atom, f_pos = _edge_rows(table.fact_args, f_arity)
        self._arg_obj = np.ascontiguousarray(table.fact_args[f_atom, f_pos])
        self.graph_bounds = (len(self._prefix_nodes) + self.n_facts, len(s_pos) + len(self._arg_obj))
        self._pad = check_graph_bounds(task, self.graph_bounds, max_nodes, max_edges)
        graph = ilg_space(schema)
        self.space = graph if self._pad is None else padded_graph_space(graph, *self._pad)

    @classmethod
    def padding(cls, schema: Schema, task: CompiledTask) -> dict[str, int]:
        """The smallest ``max_nodes`` and ``max_edges`` that fit every graph of `task`."""
        nodes, edges = cls(schema, task).graph_bounds
        return {"max_nodes": nodes, "max_edges": edges}

    def encode(self, state: State | np.ndarray) -> GraphInstance | dict[str, np.ndarray]:
        """The ILG of `state` (a `State` or its uint64 words; padded if so built); fresh arrays."""
        words = state.words if isinstance(state, State) else state
        nodes, edges, links = _encode(
            words,
            self._goal,
            self._label_true,
            self._label_false,
            self._prefix_nodes,
            self._static_edges,
            self._static_links,
            self._arg_ptr,
            self._arg_obj,
        )
        graph = GraphInstance(nodes, edges, links)
        return graph if self._pad is None else pad_graph(graph, *self._pad)

    # ----------------------------------------------------------------- for humans
    def label_name(self, label: int) -> str:
        """Readable label, e.g. ``"object"`` or ``"at / unachieved goal"``."""
        pred, status = decode_label(self.schema, label)
        return status if pred is None else f"{pred} / {status}"

    def node_names(self, state: State | np.ndarray) -> list[str]:
        """Names of the nodes of ``encode(state)`` in node order (objects, then atoms)."""
        bits = state_bits(state, self.n_facts).view(bool)
        present = np.flatnonzero(bits | self._goal)
        return [*self.task.objects, *self.table.static_names, *(self.task.facts[f] for f in present)]

    def describe(self, graph: GraphInstance, state: State | np.ndarray) -> list[str]:
        """One line per node: ``index  name  [label]`` (for debugging and tests)."""
        return [
            f"{i:4d}  {name}  [{self.label_name(label)}]"
            for i, (name, label) in enumerate(zip(self.node_names(state), graph.nodes, strict=True))
        ]


@njit(cache=CACHE)
def _encode(words, goal, label_true, label_false, prefix, static_edges, static_links, arg_ptr, arg_obj):
    """nodes, edges, edge_links of one state (see `ILGEncoder.encode`)."""
    n_facts = goal.shape[0]
    present = np.empty(n_facts, dtype=np.bool_)
    n_atoms = 0
    n_edges = static_edges.shape[0]
    for f in range(n_facts):
        p = goal[f] or holds(words, f)
        present[f] = p
        if p:
            n_atoms += 1
            n_edges += arg_ptr[f + 1] - arg_ptr[f]
    n_prefix = prefix.shape[0]
    nodes = np.empty(n_prefix + n_atoms, dtype=np.int64)
    nodes[:n_prefix] = prefix
    edges = np.empty(n_edges, dtype=np.int64)
    links = np.empty((n_edges, 2), dtype=np.int64)
    n_static_edges = static_edges.shape[0]
    edges[:n_static_edges] = static_edges
    links[:n_static_edges] = static_links
    node, e = n_prefix, n_static_edges
    for f in range(n_facts):
        if present[f]:
            nodes[node] = label_true[f] if holds(words, f) else label_false[f]
            for k in range(arg_ptr[f], arg_ptr[f + 1]):
                edges[e] = k - arg_ptr[f]
                links[e, 0] = node
                links[e, 1] = arg_obj[k]
                e += 1
            node += 1
    return nodes, edges, links


def _edge_rows(args: np.ndarray, arity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(atom row, argument position) of every argument slot, atom-major."""
    if args.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    atom, pos = np.nonzero(np.arange(args.shape[1])[None, :] < arity[:, None])
    return atom.astype(np.int64), pos.astype(np.int64)
