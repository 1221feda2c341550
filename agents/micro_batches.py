"""Batches split into forward passes that fit in memory.

A network whose activations grow with a power of the object count (the NLM's arity-3 tensors:
about 300 bytes per object triple and state, 2 GB for one state of 173 objects, sokoban's
training tasks) cannot take the paper's 256 states per forward pass on every domain: such a
batch would need 500 GB. A model that knows what one state costs says
so (``state_bytes(n_objects)``, `agents.models.nlm.network.NLM.state_bytes`); `fitting_chunks`
cuts a batch into runs of rows whose padded forward pass fits the memory left under the limit,
and refuses, naming the state's size and the limit, when not even one state fits. The trainer
sums the chunks' gradients (the loss of a row does not depend on the other rows for the NLL), so
the step is the whole batch's, to rounding. Models that do not say what a state costs (WL, the
linear model, the MLP, STRIPS-HGN: memory linear in the state's size) are never split.

On a CUDA device the budget is the device's memory (`device_budget`: what the driver has free
and PyTorch's allocator holds unused), not the host's: the NLM's arity-3 tensors at the paper's
plan sizes (100 objects, about 200 MB a state) asked for 35 GiB in one product on an 80 GB H100
when a lockstep round of 190 states went in whole. Other accelerators say nothing of their free
memory; their batches are not split.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from agents.errors import AgentError
from pddlgym_sl.memory import SLACK_BYTES, memory_limit_bytes, rss_bytes

__all__ = [
    "MemoryBudgetError",
    "device_budget",
    "evaluation_chunks",
    "fitting_chunks",
    "memory_budget",
    "state_cost",
]


class MemoryBudgetError(AgentError):
    """One state's forward pass needs more memory than the limit leaves."""


def state_cost(model: nn.Module) -> Callable[[int], int] | None:
    """The model's bytes per state of ``n`` objects in a forward and backward pass, or None when
    it does not say or runs on an accelerator other than CUDA (no free-memory figure to cut by)."""
    devices = {p.device.type for p in model.parameters()}
    return getattr(model, "state_bytes", None) if devices <= {"cpu", "cuda"} else None


def memory_budget(memory_limit_mb: float | None, device: torch.device | str = "cpu") -> int:
    """Bytes a forward pass on ``device`` may add. The host: the limit
    (`pddlgym_sl.memory.memory_limit_bytes`; None: three quarters of what this process may use)
    less what the process holds now and a slack. A CUDA device: `device_budget`."""
    device = torch.device(device)
    if device.type == "cuda":
        return device_budget(device)
    return max(0, memory_limit_bytes(memory_limit_mb) - rss_bytes() - SLACK_BYTES)


def device_budget(device: torch.device) -> int:
    """Bytes a forward pass may add on a CUDA device: the driver's free memory and what PyTorch's
    caching allocator holds unused, less a slack (the allocator's rounding, cuBLAS's workspace)."""
    free, _ = torch.cuda.mem_get_info(device)
    cached = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    return max(0, free + cached - 2 * SLACK_BYTES)


def fitting_chunks(
    rows: np.ndarray,
    sizes: np.ndarray,
    cost: Callable[[int], int] | None,
    budget: int,
    *,
    what: str = "a state",
) -> list[np.ndarray]:
    """``rows`` (ascending) cut into consecutive runs whose forward pass fits `budget` bytes: a run
    of ``k`` rows padded to its largest object count ``n`` costs ``k * cost(n)`` (`sizes`: object
    count per row). One run when `cost` is None or the whole batch fits. `MemoryBudgetError`
    when one row alone does not fit."""
    if cost is None or len(rows) == 0:
        return [rows]
    n_rows = sizes[rows]
    if len(rows) * cost(int(n_rows.max())) <= budget:
        return [rows]
    chunks, start, largest = [], 0, 0
    for i, n in enumerate(n_rows.tolist()):
        if cost(n) > budget:
            raise MemoryBudgetError(
                f"{what} of {n} objects needs about {cost(n) / 2**20:,.0f} MB for one forward pass, "
                f"more than the {budget / 2**20:,.0f} MB the memory limit leaves: train on smaller "
                "tasks or give more memory (--memory-limit MB)"
            )
        grown = max(largest, n)
        if i > start and (i - start + 1) * cost(grown) > budget:
            chunks.append(rows[start:i])
            start, grown = i, n
        largest = grown
    chunks.append(rows[start:])
    return chunks


def evaluation_chunks(
    model: nn.Module, sizes: np.ndarray, rows: np.ndarray, batch_size: int = 1024
) -> list[np.ndarray]:
    """``rows`` in runs of at most `batch_size` for gradient-free forward passes (validation,
    test metrics), each cut further to fit the default memory budget (`fitting_chunks`)."""
    cost = state_cost(model)
    budget = memory_budget(None, next(model.parameters()).device) if cost is not None else 0
    runs = [rows[start : start + batch_size] for start in range(0, len(rows), batch_size)]
    return [chunk for run in runs for chunk in fitting_chunks(run, sizes, cost, budget)]
