"""STRIPS-HGN (Shen, Trevizan and Thiébaux, ICAPS 2020): a hypergraph network over the delete relaxation.

==============  ===================================================================
module          what
==============  ===================================================================
`data`          `HypergraphData`: a hypergraph as a torch-geometric `Data` (batching offsets)
`hypergraph`    a task's delete-relaxation hypergraph with per-state fact features
`network`       `STRIPSHGN` and its message-passing step `HypergraphNetworkBlock`
`inputs`        batches of hypergraphs for training and for search
==============  ===================================================================
"""

from __future__ import annotations

from agents.models.spec import ModelSpec
from agents.models.strips_hgn.data import HypergraphData
from agents.models.strips_hgn.inputs import HypergraphSearchInputs, HypergraphTrainingInputs
from agents.models.strips_hgn.network import STRIPSHGN, HypergraphNetworkBlock

__all__ = ["SPEC", "STRIPSHGN", "HypergraphData", "HypergraphNetworkBlock"]

SPEC = ModelSpec(
    STRIPSHGN, HypergraphTrainingInputs, HypergraphSearchInputs, name="hgn", label="STRIPS-HGN", lr=1e-3
)
"""Paper settings (appendix C): AdamW at lr 1e-3, weight decay 1e-2."""
