"""`HypergraphData`: a delete-relaxed STRIPS hypergraph as a torch-geometric `Data` object.

Nodes are facts, hyperedges are actions. A hyperedge's senders are its preconditions and its
receivers are its add effects; the incidences are stored as parallel index vectors (COO), one
entry per (fact, action) pair:

- ``pre_fact[e]`` is a precondition of action ``pre_edge[e]``;
- ``add_fact[e]`` is an add effect of action ``add_edge[e]``.

When torch-geometric batches graphs (`Batch.from_data_list`, `DataLoader`), fact indices are
shifted by the number of facts of the preceding graphs and action indices by their number of
actions (`__inc__`; the default would shift only keys containing "index", by ``num_nodes``).
"""

from __future__ import annotations

from typing import Any

from torch_geometric.data import Data

__all__ = ["HypergraphData"]

_FACT_KEYS = frozenset({"pre_fact", "add_fact"})
_EDGE_KEYS = frozenset({"pre_edge", "add_edge"})


class HypergraphData(Data):
    """One hypergraph (or a batch of them).

    Attributes:
        x: ``[n_facts, F]`` node (fact) features.
        edge_attr: ``[n_actions, E]`` hyperedge (action) features.
        u: ``[1, G]`` global features (``[n_graphs, G]`` once batched).
        pre_fact, pre_edge: ``[n_pre]`` long, precondition incidences.
        add_fact, add_edge: ``[n_add]`` long, add-effect incidences.
        num_hyperedges: number of actions (an int; a ``[n_graphs]`` tensor once batched).
    """

    def __inc__(self, key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        if key in _FACT_KEYS:
            return self.num_nodes
        if key in _EDGE_KEYS:
            return self.num_hyperedges
        return super().__inc__(key, value, *args, **kwargs)

    def __cat_dim__(self, key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        if key in _FACT_KEYS or key in _EDGE_KEYS:
            return 0
        return super().__cat_dim__(key, value, *args, **kwargs)
