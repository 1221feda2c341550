"""STRIPS-HGN input: the delete-relaxation hypergraph of a `CompiledTask`, one graph per state.

`hypergraph_data` gives the hypergraph with per-state fact features (for training); the
static structure (incidences, action features, global features) is built once per task and shared
by every state's graph. `task_states` gives the search's batches (states of one task) in the
form of `agents.models.strips_hgn.sparse_forward`, its static part built once per task and device.

States are given as `State` objects, as a 2-D ``uint64`` array of packed states (one row per
state, `CompiledTask.states_to_array`), or as sequences of true fact indices.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from agents.models.strips_hgn.data import HypergraphData
from agents.models.strips_hgn.sparse_forward import TaskStates, incidence_matrices
from pddlgym_sl.task import CompiledTask, State

__all__ = ["hypergraph_data", "state_fact_matrix", "task_states"]

StatesLike = Sequence[State] | Sequence[Sequence[int]] | np.ndarray


def state_fact_matrix(task: CompiledTask, states: StatesLike) -> np.ndarray:
    """Bool ``[n_states, n_facts]``: which facts hold in each state."""
    if isinstance(states, np.ndarray) and states.dtype == np.uint64:
        words = np.ascontiguousarray(states.reshape(-1, task.n_words))
    elif len(states) and isinstance(states[0], State):
        words = task.states_to_array(list(states))  # type: ignore[arg-type]
    else:
        out = np.zeros((len(states), task.n_facts), dtype=bool)
        for i, facts in enumerate(states):
            out[i, np.asarray(facts, dtype=np.int64)] = True
        return out
    bits = np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")
    return bits[:, : task.n_facts].astype(bool)


@dataclass(frozen=True)
class _Hypergraph:
    """What every state's hypergraph of a task shares."""

    goal: Tensor  # [F] bool
    edge_attr: Tensor  # [A, 3]: cost, |pre|, |add|
    u: Tensor  # [1, 2]: log(1 + #facts), log(1 + #actions)
    pre_fact: Tensor
    pre_edge: Tensor
    add_fact: Tensor
    add_edge: Tensor


_STATIC: weakref.WeakKeyDictionary[CompiledTask, dict[torch.dtype, _Hypergraph]] = weakref.WeakKeyDictionary()


def _static(task: CompiledTask, dtype: torch.dtype) -> _Hypergraph:
    per_task = _STATIC.setdefault(task, {})
    if dtype not in per_task:
        n_pre, n_add = np.diff(task.pre_ptr), np.diff(task.add_ptr)
        actions = np.arange(task.n_actions)
        goal = torch.zeros(task.n_facts, dtype=torch.bool)
        goal[torch.from_numpy(task.goal.astype(np.int64))] = True
        edge_attr = np.stack([task.action_costs, n_pre, n_add], axis=1)
        counts = np.log1p([[task.n_facts, task.n_actions]])
        per_task[dtype] = _Hypergraph(
            goal=goal,
            edge_attr=torch.as_tensor(edge_attr, dtype=dtype),
            u=torch.as_tensor(counts, dtype=dtype),
            pre_fact=torch.from_numpy(task.pre_idx.astype(np.int64)),
            pre_edge=torch.from_numpy(np.repeat(actions, n_pre)),
            add_fact=torch.from_numpy(task.add_idx.astype(np.int64)),
            add_edge=torch.from_numpy(np.repeat(actions, n_add)),
        )
    return per_task[dtype]


def _node_features(hg: _Hypergraph, in_state: np.ndarray, dtype: torch.dtype) -> Tensor:
    """``[..., F, 2]``: [in state, in goal] per fact."""
    s = torch.from_numpy(in_state)
    return torch.stack([s, hg.goal.expand_as(s)], dim=-1).to(dtype)


def hypergraph_data(
    task: CompiledTask, states: StatesLike, dtype: torch.dtype = torch.float32
) -> list[HypergraphData]:
    """One `HypergraphData` per state (for datasets and `torch_geometric.loader.DataLoader`).

    The graphs share the task's static tensors; only ``x`` (``[n_facts, 2]``: in state, in goal)
    differs. Edge features: ``[cost, |pre|, |add|]``; global: ``[[log(1+F), log(1+A)]]``.
    """
    hg = _static(task, dtype)
    x = _node_features(hg, state_fact_matrix(task, states), dtype)
    return [
        HypergraphData(
            x=xi,
            edge_attr=hg.edge_attr,
            u=hg.u,
            pre_fact=hg.pre_fact,
            pre_edge=hg.pre_edge,
            add_fact=hg.add_fact,
            add_edge=hg.add_edge,
            num_hyperedges=task.n_actions,
            num_nodes=task.n_facts,
        )
        for xi in x
    ]


_TASK_STATES: weakref.WeakKeyDictionary[CompiledTask, dict[torch.device, TaskStates]] = (
    weakref.WeakKeyDictionary()
)


def task_states(task: CompiledTask, states: StatesLike, device: torch.device | str = "cpu") -> TaskStates:
    """The states of one task as a `TaskStates` batch on ``device`` (the search hot path of
    STRIPS-HGN; the incidence matrices and features are built once per task and device)."""
    device = torch.device(device)
    per_task = _TASK_STATES.setdefault(task, {})
    template = per_task.get(device)
    if template is None:
        hg = _static(task, torch.float32)
        sparse = incidence_matrices(
            hg.pre_fact, hg.pre_edge, hg.add_fact, hg.add_edge, task.n_facts, task.n_actions
        )
        template = per_task[device] = TaskStates(
            torch.zeros(0, task.n_facts, dtype=torch.bool, device=device),
            hg.goal.to(device),
            hg.edge_attr.to(device),
            hg.u.to(device),
            *(m.to(device) for m in sparse),
        )
    in_state = torch.from_numpy(state_fact_matrix(task, states)).to(device)
    return dataclasses.replace(template, in_state=in_state)
