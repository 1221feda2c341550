"""Accuracy of a learned heuristic on a labelled split (the paper's Table 1 metrics).

- ``mse``: mean of (h(s) − h*(s))² with the search-time value h (N: μ; TN: E[x]; a head trained
  with the data's upper bounds, ``upper="plan"``, gets them here too);
- ``mse_clip``: the same with h clipped below by the raw admissible bound (the paper's "+clip",
  reported for N);
- ``nll``: mean negative log-likelihood of h* under the model's distribution (the training loss).

Baselines: the MSE of the symbolic heuristics hFF and LM-cut on the same states.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.errors import AgentError
from agents.heads import Head
from agents.inputs import TrainingInputs
from agents.micro_batches import evaluation_chunks
from pddlgym_sl.data.dataset import LabelledSplit


def bound_inputs(split: LabelledSplit, head: Head, rows: np.ndarray, device: torch.device):
    """(target h*, lower bound l, residual base, upper bound u) tensors of `rows` for `head`;
    the residual base and u are None where the head uses none (u: `Head.upper_key`)."""
    target = torch.as_tensor(split.h_star[rows], dtype=torch.float32, device=device)
    lower = torch.as_tensor(split.values[head.lower_key][rows], dtype=torch.float32, device=device)
    key = head.residual_key
    base = torch.as_tensor(split.values[key][rows], dtype=torch.float32, device=device) if key else None
    upper = None
    if head.upper_key is not None:
        if split.upper is None:
            raise AgentError(
                f"upper={head.upper!r} needs upper bounds in {split.split_dir}: "
                f"add them with python -m pddlgym_sl.data.upper {split.split_dir}"
            )
        upper = torch.as_tensor(split.upper[rows], dtype=torch.float32, device=device)
    return target, lower, base, upper


@torch.no_grad()
def evaluate_split(
    model: torch.nn.Module,
    head: Head,
    inputs: TrainingInputs,
    split: LabelledSplit,
    device: torch.device,
    batch_size: int = 1024,
) -> dict[str, float]:
    """Model accuracy on every state of `split` (batches follow problem order, so padding stays
    small; cut to fit memory, `agents.micro_batches`)."""
    was_training = model.training
    model.eval()
    sq, sq_clip, nll = [], [], []
    for rows in evaluation_chunks(model, inputs.sizes(), np.arange(len(split)), batch_size):
        raw = model(inputs.batch(rows, device))
        target, lower, base, upper = bound_inputs(split, head, rows, device)
        h = head.heuristic(raw, lower, base, upper)
        h_clip = head.heuristic(raw, lower, base, upper, clip=True)
        sq.append((h - target).square().double().cpu())
        sq_clip.append((h_clip - target).square().double().cpu())
        nll.append(head.nll(raw, target, lower, base, upper).double().cpu())
    model.train(was_training)
    return {
        "mse": float(torch.cat(sq).mean()),
        "mse_clip": float(torch.cat(sq_clip).mean()),
        "nll": float(torch.cat(nll).mean()),
    }


def baseline_mse(split: LabelledSplit, names: tuple[str, ...] = ("hff", "lmcut")) -> dict[str, float]:
    """MSE of symbolic heuristics against h* on the split's states."""
    return {f"{n}_mse": float(np.mean((split.values[n] - split.h_star) ** 2)) for n in names}
