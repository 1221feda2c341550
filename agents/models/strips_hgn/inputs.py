"""STRIPS-HGN inputs: delete-relaxed hypergraphs of states, batched, for training and for search."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch_geometric.data import Batch

from agents.inputs import rows_by_problem
from agents.models.strips_hgn.hypergraph import hypergraph_data, task_states
from agents.models.strips_hgn.sparse_forward import TaskStates
from pddlgym_sl.data.dataset import LabelledSplit
from pddlgym_sl.envs.encoders.schema import Schema
from pddlgym_sl.task import CompiledTask

__all__ = ["HypergraphSearchInputs", "HypergraphTrainingInputs"]


class HypergraphTrainingInputs:
    """`agents.inputs.TrainingInputs` of STRIPS-HGN: hypergraphs built per batch from the cached
    per-task structure, batched by torch-geometric; a state's size is its task's fact count."""

    def __init__(self, split: LabelledSplit) -> None:
        self.split = split
        facts = np.array([split.task(i).n_facts for i in range(len(split.problems))])
        self._sizes = facts[split.problem_of]

    def model_config(self) -> dict[str, Any]:
        return {}

    def sizes(self) -> np.ndarray:
        return self._sizes

    def batch(self, rows: np.ndarray, device: torch.device) -> Batch:
        graphs = []
        for p, local in rows_by_problem(self.split, rows):
            graphs.extend(hypergraph_data(self.split.task(p), self.split.states[p][local]))
        return Batch.from_data_list(graphs).to(device)


class HypergraphSearchInputs:
    """`agents.inputs.SearchInputs` of STRIPS-HGN: one task's states as a `TaskStates` batch (the
    fact-major forward of `agents.models.strips_hgn.sparse_forward`; ``schema`` is not needed)."""

    def __init__(self, task: CompiledTask, device: torch.device, schema: Schema | None = None) -> None:
        self.task, self.device = task, device

    def __call__(self, states: np.ndarray) -> TaskStates:
        return task_states(self.task, states, self.device)
