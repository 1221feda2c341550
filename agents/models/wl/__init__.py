"""WL-GOOSE-style model: Weisfeiler-Leman features of the Instance Learning Graph (computed by the
`wlplan` package) with a linear μ (and σ) under the N / TN heads (Chen, Trevizan and Thiébaux,
"Return to Tradition: Learning Reliable Heuristics with Classical Machine Learning", ICAPS 2024).

- `vocabulary`: our tasks and states in wlplan's terms (static atoms included);
- `features`: the fitted colour table (`WLFeaturizer`), stored as JSON in model.json;
- `network`: `WLLinear`, the linear map of standardised counts;
- `inputs`: training inputs (the split's counts, computed once and cached) and search inputs.
"""

from __future__ import annotations

from agents.models.spec import ModelSpec
from agents.models.wl.features import WLFeaturizer
from agents.models.wl.inputs import WLSearchInputs, WLTrainingInputs
from agents.models.wl.network import WLLinear

__all__ = ["SPEC", "WLFeaturizer", "WLLinear", "WLSearchInputs", "WLTrainingInputs"]

SPEC = ModelSpec(
    WLLinear,
    WLTrainingInputs,
    WLSearchInputs,
    name="wl",
    label="WL",
    lr=1e-2,
    paper_weight_decay=0.0,
    fit_options={"wl_iterations": "iterations", "wl_pruning": "pruning", "wl_hash": "hash"},
)
"""The linear model's settings (the paper has no WL model): AdamW at lr 1e-2, no weight decay in the
presets."""
