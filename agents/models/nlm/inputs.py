"""NLM inputs: per-arity predicate tensors of states, padded per batch, for training and for search.

The ``nlm`` observation encoder (`pddlgym_sl.envs.encoders.nlm`) gives, per task, arrays
``"arity{k}"`` of shape ``[n_states] + [N]*k + [C_k]`` (channels: [true in the state, in the goal]
per predicate of arity ``k``). `nlm_batch` pads the tasks of a batch to the largest object count
and adds the object mask; `NLMTrainingInputs` encodes every problem of a split once, and
`NLMSearchInputs` encodes the states of one task per search expansion (no padding needed).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from agents.errors import AgentError
from agents.inputs import rows_by_problem
from pddlgym_sl.data.dataset import LabelledSplit
from pddlgym_sl.envs.encoders.nlm import NLMEncoder, schema_channels
from pddlgym_sl.envs.encoders.schema import Schema
from pddlgym_sl.task import CompiledTask

__all__ = ["NLMSearchInputs", "NLMTrainingInputs", "nlm_batch", "nlm_channels"]


def _arities(item: Mapping[str, np.ndarray]) -> list[int]:
    return sorted(int(key[5:]) for key in item if key.startswith("arity"))


def nlm_channels(item: Mapping[str, np.ndarray | Tensor]) -> dict[int, int]:
    """Arity -> channel count of an NLM input (per-task arrays or a padded batch)."""
    return {k: int(item[f"arity{k}"].shape[-1]) for k in _arities(item)}  # type: ignore[arg-type]


def nlm_batch(
    items: Sequence[Mapping[str, np.ndarray]], dtype: torch.dtype = torch.float32
) -> dict[str, Tensor]:
    """Concatenate per-task NLM inputs into one batch padded to the largest object count.

    Args:
        items: one mapping per task (as the NLM encoder's batch function gives): ``"arity{k}"`` is
            an array ``[n_i] + [N_i]*k + [C_k]`` for the ``n_i`` states of a task with ``N_i``
            objects (a single state is ``n_i = 1``); an optional ``"object_mask"`` ``[n_i, N_i]``
            marks real objects (default: all). Every item has the same arities and channels.
        dtype: float dtype of the predicate tensors.

    Returns:
        ``"arity{k}"``: ``[B] + [N]*k + [C_k]`` (``B = sum n_i``, ``N = max N_i``, zero padding) and
        ``"object_mask"``: bool ``[B, N]``.
    """
    if not items:
        raise AgentError("nlm_batch needs at least one item")
    arities = _arities(items[0])
    channels = nlm_channels(items[0])
    sizes, counts = [], []
    for item in items:
        if _arities(item) != arities or nlm_channels(item) != channels:
            raise AgentError(f"NLM inputs disagree on arities/channels: {nlm_channels(item)} vs {channels}")
        first = item[f"arity{arities[0]}"]
        counts.append(int(first.shape[0]))
        higher = [item[f"arity{k}"].shape[1] for k in arities if k >= 1]
        sizes.append(int(higher[0]) if higher else 0)
    total, n_max = sum(counts), max(sizes)
    np_dtype = torch.empty((), dtype=dtype).numpy().dtype
    out = {k: np.zeros((total, *([n_max] * k), channels[k]), dtype=np_dtype) for k in arities}
    mask = np.zeros((total, n_max), dtype=bool)
    row = 0
    for item, n_states, n_obj in zip(items, counts, sizes, strict=True):
        rows = slice(row, row + n_states)
        for k in arities:
            out[k][(rows, *([slice(0, n_obj)] * k))] = item[f"arity{k}"]
        mask[rows, :n_obj] = item.get("object_mask", True)
        row += n_states
    batch = {f"arity{k}": torch.from_numpy(out[k]) for k in arities}
    batch["object_mask"] = torch.from_numpy(mask)
    return batch


ENCODED_BYTES = 512 << 20
"""Most bytes of a split's states encoded once and kept. Larger splits are encoded batch by batch:
an arity-3 predicate on large tasks makes a state's tensors big (sokoban's training tasks, up to
173 objects: 10 MB per state, 17 GB for its 1,623 states), while the paper's domains stay far
below (the encoding is then done once, as it costs about as much as a forward pass)."""


class NLMTrainingInputs:
    """`agents.inputs.TrainingInputs` of the NLM: each problem of ``split`` encoded once (or, above
    `ENCODED_BYTES`, the states of each batch when it is made), batches padded to their largest
    object count (the sampler buckets states by object count)."""

    def __init__(self, split: LabelledSplit) -> None:
        self.split = split
        self.schema = Schema.from_domain_file(split.domain_file)
        objects = np.array([len(split.task(i).objects) for i in range(len(split.problems))])
        self._sizes = objects[split.problem_of]
        self._channels = schema_channels(self.schema)
        per_state = sum(objects.astype(np.int64) ** k * c for k, c in self._channels.items())
        counts = np.array([len(states) for states in split.states])
        self.encoded: list[dict[str, np.ndarray]] | None = None
        if int((per_state * counts).sum()) <= ENCODED_BYTES:
            self.encoded = [self._encoder(i).encode_batch(states) for i, states in enumerate(split.states)]

    def _encoder(self, problem: int) -> NLMEncoder:
        return NLMEncoder(self.schema, self.split.task(problem))

    def model_config(self) -> dict[str, Any]:
        return {"in_channels": self._channels}

    def sizes(self) -> np.ndarray:
        return self._sizes

    def batch(self, rows: np.ndarray, device: torch.device) -> dict[str, torch.Tensor]:
        items = []
        for p, local in rows_by_problem(self.split, rows):
            if self.encoded is not None:
                items.append({k: v[local] for k, v in self.encoded[p].items()})
            else:
                items.append(dict(self._encoder(p).encode_batch(self.split.states[p][local])))
        return {k: v.to(device) for k, v in nlm_batch(items).items()}


_SLOTS = itertools.count()
"""Memo slots of `NLMSearchInputs` instances (one per searched task)."""


class NLMSearchInputs:
    """`agents.inputs.SearchInputs` of the NLM: one task's states encoded per call (no padding;
    the model casts the int8 tensors itself), and `collate` to join the inputs of several tasks.

    Each call also gives ``"memo_slot"`` (``[B]`` int64, the same for every state of this task):
    the compiled inference path keeps the arity-3 memo of each slot apart
    (`agents.models.nlm.fast.arity3_memo.Block3Memo`), so that the searches of a lockstep batch do
    not evict one another's references; the model's output does not depend on it.

    Args:
        task: the task searched. device: where the forward pass runs. schema: the domain's
            predicate vocabulary (shared by the tasks of a domain), built from the task's domain
            file when None.
    """

    def __init__(self, task: CompiledTask, device: torch.device, schema: Schema | None = None) -> None:
        if schema is None:
            schema = Schema.from_domain_file(task.domain_file)
        self.encoder = NLMEncoder(schema, task)
        self.device = device
        self.slot = next(_SLOTS)

    def __call__(self, states: np.ndarray) -> dict[str, Tensor]:
        arrays = dict(self.encoder.encode_batch(states))
        arrays["memo_slot"] = np.full(len(states), self.slot, dtype=np.int64)
        if self.device.type == "cpu":  # a no-op .to() still costs ~15 µs per tensor
            return {k: torch.from_numpy(v) for k, v in arrays.items()}
        return {k: torch.from_numpy(v).to(self.device) for k, v in arrays.items()}

    @staticmethod
    def collate(items: Sequence[Mapping[str, Tensor]]) -> dict[str, Tensor]:
        """One batch of the inputs of several tasks (calls of `NLMSearchInputs`, with the same
        arities and channels, on one device): padded with zeros to the largest object count, the
        object mask marking each task's objects."""
        n_max = max(int(item["object_mask"].shape[1]) for item in items)
        total = sum(int(item["object_mask"].shape[0]) for item in items)
        out: dict[str, Tensor] = {}
        for key, first in items[0].items():
            if key == "memo_slot" or (key.startswith("arity") and key == "arity0"):
                out[key] = torch.cat([item[key] for item in items])
                continue
            k = first.dim() - 2 if key.startswith("arity") else 1
            if all(int(item[key].shape[1]) == n_max for item in items):
                out[key] = torch.cat([item[key] for item in items])
                continue
            shape = (total, *([n_max] * k), *(first.shape[k + 1 :]))
            joined = first.new_zeros(shape)
            row = 0
            for item in items:
                x = item[key]
                n = int(x.shape[1])
                joined[(slice(row, row + x.shape[0]), *([slice(0, n)] * k))] = x
                row += x.shape[0]
            out[key] = joined
        return out
