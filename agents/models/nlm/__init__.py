"""Neural Logic Machine (Dong et al., 2019): the heuristic network over per-arity predicate tensors.

==================  ======================================================================
module              what
==================  ======================================================================
`reference`         the textbook NLM, written literally (the definition the rest must match)
`reductions`        the masked ∃/∀ (max/min over the last object axis) with its gradient
`layer`             `NLMLayer`: expand, reduce, permute, linear + sigmoid, per arity
`network`           `NLM`: the stack of layers, arity pruning, padding (any device)
`compiled`          what the model asks of a compiled CPU path, and where it is installed
`fast/`             the compiled (numba) CPU path: training kernels and the inference plan
`inputs`            batches of encoded states for training and for search
==================  ======================================================================

Importing the package installs `fast.COMPILED_PATH` as the model's compiled path (`fast` depends
on the model; the model never imports `fast`).
"""

from __future__ import annotations

from agents.models.nlm import compiled
from agents.models.nlm.fast import COMPILED_PATH
from agents.models.nlm.inputs import NLMSearchInputs, NLMTrainingInputs
from agents.models.nlm.layer import NLMLayer
from agents.models.nlm.network import NLM
from agents.models.nlm.reductions import masked_exists_forall
from agents.models.nlm.reference import reference_nlm
from agents.models.spec import ModelSpec

__all__ = ["NLM", "SPEC", "NLMLayer", "masked_exists_forall", "reference_nlm"]

compiled.install(COMPILED_PATH)

SPEC = ModelSpec(NLM, NLMTrainingInputs, NLMSearchInputs, name="nlm", label="NLM", lr=1e-2)
"""Paper settings (appendix C): breadth 3, depth 5, 8 hidden channels; AdamW at lr 1e-2, weight
decay 1e-2."""
