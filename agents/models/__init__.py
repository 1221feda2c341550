"""Heuristic models: each maps a batch of states to ``[B, n_outputs]`` raw values.

A distribution head (`agents.heads`) turns the raw values into the parameters of a (truncated)
Gaussian over h*: ``raw[..., 0]`` gives mu, ``raw[..., 1]`` sigma when sigma is learned, so
``n_outputs`` is 1 or 2. Inputs are built by `agents.graphs`.

========  ===============================  ==========================================
name      class                            input
========  ===============================  ==========================================
nlm       `NLM` (Dong et al. 2019)         `agents.graphs.nlm_batch` dict
hgn       `STRIPSHGN` (Shen et al. 2020)   `HypergraphData` batch (`agents.graphs`)
linear    `LinearRegression`               ``[B, 4]`` Gomoluch et al. (2017) features
========  ===============================  ==========================================
"""

from __future__ import annotations

from typing import Any

from torch import nn

from agents.models.hypergraph_data import HypergraphData
from agents.models.linear import GOMOLUCH_FEATURES, LinearRegression
from agents.models.nlm import NLM, NLMLayer
from agents.models.strips_hgn import STRIPSHGN, HypergraphNetworkBlock

__all__ = [
    "GOMOLUCH_FEATURES",
    "MODELS",
    "NLM",
    "STRIPSHGN",
    "HypergraphData",
    "HypergraphNetworkBlock",
    "LinearRegression",
    "NLMLayer",
    "make_model",
]

MODELS: dict[str, type[nn.Module]] = {"nlm": NLM, "hgn": STRIPSHGN, "linear": LinearRegression}


def make_model(name: str, n_outputs: int, **kwargs: Any) -> nn.Module:
    """Build model ``name`` (a key of `MODELS`) with ``n_outputs`` raw outputs.

    ``kwargs`` go to the model's constructor; the NLM needs ``in_channels`` (arity -> channels,
    e.g. ``agents.graphs.nlm_channels(batch)``), the others have paper defaults for everything.
    """
    try:
        cls = MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(sorted(MODELS))}") from None
    return cls(n_outputs=n_outputs, **kwargs)
