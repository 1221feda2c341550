"""Heuristic models: each maps a batch of states to ``[B, n_outputs]`` raw values.

A distribution head (`agents.heads`) turns the raw values into the parameters of a (truncated)
Gaussian over h*: ``raw[..., 0]`` gives mu, ``raw[..., 1]`` sigma when sigma is learned, so
``n_outputs`` is 1 or 2.

`MODELS` is the registry: one `ModelSpec` per model (its network, its input builders for training
and for search, its learning rate and its label), from which training, evaluation, the sweep, the
report and the learned heuristic take everything they know about a model.

========  =====================================  ==========================================
name      spec                                   input
========  =====================================  ==========================================
nlm       `agents.models.nlm` (Dong et al. 2019)  per-arity predicate tensors, padded per batch
hgn       `agents.models.strips_hgn` (Shen et al.  delete-relaxation hypergraphs
          2020)
linear    `agents.models.linear`                 ``[B, 4]`` Gomoluch et al. (2017) features
mlp       `agents.models.mlp` (Ferber et al.     the state's and the goal's facts over a
          2020, NFD)                             fact vocabulary (one fixed task)
wl        `agents.models.wl` (Chen et al. 2024)   WL colour counts of the ILG (`wlplan`)
========  =====================================  ==========================================

To add a model: one module (or package) defining the ``nn.Module``, its `agents.inputs`
builders and a ``SPEC = ModelSpec(...)``, and one line in `MODELS` (`agents.registries`: names ->
``"module:SPEC"``, imported on first use, so that the command lines list the names without torch).
"""

from __future__ import annotations

from typing import Any

from torch import nn

from agents.models.linear import GOMOLUCH_FEATURES, LinearRegression
from agents.models.nlm import NLM, NLMLayer
from agents.models.spec import ModelSpec
from agents.models.strips_hgn import STRIPSHGN, HypergraphData, HypergraphNetworkBlock
from agents.registries import MODELS

__all__ = [
    "GOMOLUCH_FEATURES",
    "MODELS",
    "NLM",
    "STRIPSHGN",
    "HypergraphData",
    "HypergraphNetworkBlock",
    "LinearRegression",
    "ModelSpec",
    "NLMLayer",
    "make_model",
    "model_spec",
]


def model_spec(name: str) -> ModelSpec:
    """The spec of model ``name``; `AgentError` naming the registered models for an unknown one."""
    return MODELS.lookup(name)


def make_model(name: str, n_outputs: int, **kwargs: Any) -> nn.Module:
    """Build model ``name`` (a key of `MODELS`) with ``n_outputs`` raw outputs.

    ``kwargs`` go to the model's constructor; the NLM needs ``in_channels`` (arity -> channels,
    e.g. ``agents.models.nlm.inputs.nlm_channels(batch)``), the others have paper defaults for
    everything.
    """
    return model_spec(name).build(n_outputs, **kwargs)
