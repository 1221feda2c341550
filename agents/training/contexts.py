"""What value learning computes per problem: the model's inputs and the symbolic heuristics of one
problem's states (`ProblemContext`), the model's data-dependent configuration from the problems'
initial states, and the grouping of states by problem (one forward pass per problem)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from agents.models import model_spec
from pddlgym_sl.data.dataset import LabelledSplit, facts_digest
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.task import CompiledTask

if TYPE_CHECKING:
    from agents.heads import Head
    from agents.models.spec import ModelSpec
    from pddlgym_sl.envs.encoders.schema import Schema

__all__ = ["ProblemContext", "contiguous_groups", "merge_by_problem", "model_config_from_tasks", "playable"]


def model_config_from_tasks(model: str, tasks: list[CompiledTask], domain_file: Path) -> dict:
    """A model's data-dependent config (NLM input channels, ...) from the tasks' initial states,
    through its `TrainingInputs` on an unlabelled split (there are no labels to read)."""
    n = len(tasks)
    split = LabelledSplit(
        split_dir=domain_file.parent,
        domain_file=domain_file,
        problems=[Path(t.problem_file or "") for t in tasks],
        states=[np.asarray(t.init.words)[None, :] for t in tasks],
        facts_digest=[facts_digest(t.facts) for t in tasks],
        problem_of=np.arange(n, dtype=np.int32),
        h_star=np.full(n, np.nan),
        values={},
        features=np.zeros((n, 4)),
        compiled=dict(enumerate(tasks)),
    )
    return model_spec(model).training_inputs(split).model_config()


class ProblemContext:
    """One problem's model inputs and symbolic heuristics (the lower bound and the residual base)."""

    def __init__(
        self, task: CompiledTask, spec: ModelSpec, head: Head, device: torch.device, schema: Schema | None
    ) -> None:
        self.task = task
        self.inputs = spec.search_inputs(task, device, schema)
        self.lower = make_heuristic(head.lower_key, task)
        self.residual = make_heuristic(head.residual_key, task) if head.residual_key else None

    def bounds(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The lower bounds of `states` (``(n, n_words)``) and their residual bases (None: no residual)."""
        base = self.residual.batch(states) if self.residual is not None else None
        return self.lower.batch(states), base


def playable(task: CompiledTask, bound: str) -> bool:
    """Whether an episode of ``task`` takes a step: its initial state is neither a goal nor a dead end."""
    lower = make_heuristic(bound, task).batch(np.asarray(task.init.words)[None, :])[0]
    return not task.is_goal(task.init) and bool(np.isfinite(lower))


def merge_by_problem(
    groups: list[tuple[int, np.ndarray]],
) -> tuple[list[tuple[int, np.ndarray]], np.ndarray]:
    """The groups' states merged per problem, and the index that puts the merged rows back in the
    groups' order."""
    order = sorted(range(len(groups)), key=lambda k: groups[k][0])
    sizes = np.array([len(groups[k][1]) for k in range(len(groups))], dtype=np.int64)
    start = np.zeros(len(groups), dtype=np.int64)
    start[order] = np.concatenate([[0], np.cumsum(sizes[order])[:-1]]) if groups else []
    back = np.concatenate([start[k] + np.arange(sizes[k]) for k in range(len(groups))] or [np.zeros(0, int)])
    merged: list[tuple[int, list[np.ndarray]]] = []
    for k in order:
        problem, states = groups[k]
        if merged and merged[-1][0] == problem:
            merged[-1][1].append(states)
        else:
            merged.append((problem, [states]))
    return [(p, np.concatenate(parts)) for p, parts in merged], back.astype(np.int64)


def contiguous_groups(problems: np.ndarray, states: list[np.ndarray]) -> list[tuple[int, np.ndarray]]:
    """Runs of one problem in ``problems`` (sorted by problem) with their stacked states."""
    groups, start = [], 0
    for end in range(1, len(problems) + 1):
        if end == len(problems) or problems[end] != problems[start]:
            groups.append((int(problems[start]), np.stack(states[start:end])))
            start = end
    return groups
