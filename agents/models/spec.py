"""`ModelSpec`: everything the applications need to know about one model, in one record.

Training (`agents.apps.supervised`), evaluation, the sweep, the report and the learned heuristic
read a model's facts from its spec in `agents.models.MODELS` and nowhere else; adding a model is
one module that defines its network, its input builders and a ``SPEC``, plus one registry line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torch import nn

if TYPE_CHECKING:
    import torch

    from agents.inputs import SearchInputs, TrainingInputs
    from pddlgym_sl.data.dataset import LabelledSplit
    from pddlgym_sl.envs.encoders.schema import Schema
    from pddlgym_sl.task import CompiledTask

__all__ = ["ModelSpec"]


@dataclass(frozen=True)
class ModelSpec:
    """One model of the registry.

    Attributes:
        network: the ``nn.Module`` class (or factory), called as ``network(n_outputs=...,
            **config)`` with ``config`` from `TrainingInputs.model_config` (stored in model.json).
        training_inputs: ``split -> TrainingInputs``, batches of a labelled split.
        search_inputs: ``(task, device, schema) -> SearchInputs``, batches of a task's states
            during search; ``schema`` (the domain's vocabulary, or None) may be shared by the
            tasks of one domain.
        name: registry key, the ``--model`` value and the name in run directories and model.json.
        label: the model's name in report titles ("NLM").
        lr: the AdamW learning rate of the paper, and the trainer's default (``--lr``).
        paper_weight_decay: the paper's AdamW weight decay (appendix C.1), written into the
            ``configs/<domain>-<model>.yaml`` presets.
        reads_features: the training inputs read the split's ``features`` (linear regression's
            hFF-based features, infinite for relaxed dead ends): out-of-distribution noise states
            (`agents.ood`) must then have finite ones.
        fit_options: training flags of this model alone, as ``SupervisedConfig`` field ->
            keyword of `TrainingInputs.model_config` (WL: ``wl_iterations`` -> ``iterations``).
    """

    network: Callable[..., nn.Module]
    training_inputs: Callable[[LabelledSplit], TrainingInputs]
    search_inputs: Callable[[CompiledTask, torch.device, Schema | None], SearchInputs]
    name: str
    label: str
    lr: float = 1e-2
    paper_weight_decay: float = 1e-2
    reads_features: bool = False
    fit_options: Mapping[str, str] = field(default_factory=dict)

    def build(self, n_outputs: int, **config: Any) -> nn.Module:
        """A fresh network with ``n_outputs`` raw outputs per state."""
        return self.network(n_outputs=n_outputs, **config)
