r"""A multilayer perceptron on the fact vector of a state: the network of Neural Fast Downward.

Ferber, Helmert and Hoffmann (ECAI 2020), and Heller et al. (SoCS 2022) after them, train a
feed-forward network with three sigmoid hidden layers on the Boolean fact vector of the states of
one fixed task (the ``flat`` observation, `pddlgym_sl.envs.encoders.flat`, without the constant
static part). Here the input is the state's facts and the goal's facts, both over a *vocabulary* of
ground-atom names fixed at training (the union of the training problems' facts, stored in
``model.json``): a task whose facts differ (another problem of the same objects, or the fixed task
re-grounded from another initial state) is mapped by name; its facts outside the vocabulary are
dropped and vocabulary facts it lacks are 0. That keeps one network valid for every problem it can
represent, which in the paper's setting is the fixed task and its variants with other initial states.

The whole model in one module: the network, its inputs for training (a labelled split's states per
problem) and for search (a task's states), and its ``SPEC``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from agents.errors import AgentError
from agents.inputs import rows_by_problem
from agents.models.spec import ModelSpec
from pddlgym_sl.data.dataset import LabelledSplit
from pddlgym_sl.envs.encoders.schema import Schema, batch_bits
from pddlgym_sl.task import CompiledTask

__all__ = ["SPEC", "FactInputs", "FactSearchInputs", "FactTrainingInputs", "FlatMLP"]

GOAL_PREFIX = "goal "
"""Vocabulary entries of goal facts: ``"goal (at c0 l1)"``."""


@dataclass
class FactInputs:
    """A batch as chunks of states of one task each: ``(facts, bits)`` with the task's input names
    (`input_names`) and a ``[n, len(facts)]`` 0/1 tensor."""

    chunks: list[tuple[tuple[str, ...], Tensor]]

    def to(self, device: torch.device) -> FactInputs:
        return FactInputs([(names, bits.to(device)) for names, bits in self.chunks])


def input_names(task: CompiledTask) -> tuple[str, ...]:
    """The names of a task's input columns: its facts, then ``goal <fact>`` for each fact."""
    return task.facts + tuple(GOAL_PREFIX + f for f in task.facts)


def task_bits(task: CompiledTask, states: np.ndarray) -> np.ndarray:
    """``[n, 2 n_facts]`` uint8: the states' facts, then the goal's (the same for every state)."""
    if len(states) == 0:
        return np.zeros((0, 2 * task.n_facts), dtype=np.uint8)
    facts = batch_bits(states, task.n_facts)
    goal = np.zeros(task.n_facts, dtype=np.uint8)
    goal[task.goal] = 1
    return np.concatenate([facts, np.broadcast_to(goal, facts.shape)], axis=1)


class FlatMLP(nn.Module):
    """Sigmoid MLP from the vocabulary's 0/1 vector to ``n_outputs`` raw values.

    Args:
        n_outputs: raw outputs per state (the head's ``n_outputs``; ``H + 1`` for the categorical head).
        vocabulary: the input names (`input_names` of the training tasks, unioned).
        hidden: widths of the hidden layers (three, as NFD's).
    """

    def __init__(self, n_outputs: int, vocabulary: Sequence[str], hidden: Sequence[int] = (256, 256, 256)):
        super().__init__()
        if n_outputs < 1 or not vocabulary or any(h < 1 for h in hidden):
            raise AgentError("the MLP needs n_outputs >= 1, a vocabulary and positive hidden widths")
        self.n_outputs, self.vocabulary, self.hidden = n_outputs, tuple(vocabulary), tuple(hidden)
        self.position = {name: i for i, name in enumerate(self.vocabulary)}
        widths = [len(self.vocabulary), *self.hidden]
        layers: list[nn.Module] = []
        for a, b in itertools.pairwise(widths):
            layers += [nn.Linear(a, b), nn.Sigmoid()]
        layers.append(nn.Linear(widths[-1], n_outputs))
        self.net = nn.Sequential(*layers)
        self._columns: dict[tuple[str, ...], tuple[Tensor, Tensor]] = {}

    def _columns_of(self, names: tuple[str, ...], device: torch.device) -> tuple[Tensor, Tensor]:
        """(the task's input columns known to the vocabulary, their vocabulary positions)."""
        cached = self._columns.get(names)
        if cached is None or cached[0].device != device:
            pos = np.array([self.position.get(n, -1) for n in names], dtype=np.int64)
            known = np.flatnonzero(pos >= 0)
            cached = (torch.from_numpy(known).to(device), torch.from_numpy(pos[known]).to(device))
            self._columns[names] = cached
        return cached

    def forward(self, inputs: FactInputs) -> Tensor:
        weight = self.net[0].weight
        parts = []
        for names, bits in inputs.chunks:
            columns, positions = self._columns_of(names, weight.device)
            x = torch.zeros(bits.shape[0], len(self.vocabulary), dtype=weight.dtype, device=weight.device)
            x[:, positions] = bits[:, columns].to(weight.dtype)
            parts.append(x)
        return self.net(torch.cat(parts) if len(parts) > 1 else parts[0])


class FactTrainingInputs:
    """`agents.inputs.TrainingInputs` of the MLP: every problem's states as fact bits, once."""

    def __init__(self, split: LabelledSplit) -> None:
        self.split = split
        tasks = [split.task(i) for i in range(len(split.problems))]
        self.names = [input_names(t) for t in tasks]
        self.bits = [torch.from_numpy(task_bits(t, s)) for t, s in zip(tasks, split.states, strict=True)]

    def model_config(self) -> dict[str, Any]:
        return {"vocabulary": sorted(set().union(*self.names))}

    def sizes(self) -> np.ndarray:
        return np.ones(len(self.split), dtype=np.int64)

    def batch(self, rows: np.ndarray, device: torch.device) -> FactInputs:
        chunks = [
            (self.names[p], self.bits[p][torch.from_numpy(local)])
            for p, local in rows_by_problem(self.split, rows)
        ]
        return FactInputs(chunks).to(device)


class FactSearchInputs:
    """`agents.inputs.SearchInputs` of the MLP: one task's states as fact bits (``schema`` is not needed)."""

    def __init__(self, task: CompiledTask, device: torch.device, schema: Schema | None = None) -> None:
        self.task, self.device = task, device
        self.names = input_names(task)

    def __call__(self, states: np.ndarray) -> FactInputs:
        return FactInputs([(self.names, torch.from_numpy(task_bits(self.task, states)))]).to(self.device)


SPEC = ModelSpec(
    FlatMLP,
    FactTrainingInputs,
    FactSearchInputs,
    name="mlp",
    label="MLP on facts (NFD)",
)
"""AdamW at lr 1e-2 with weight decay 1e-2, the trainer's defaults."""
