"""MaskablePPO (sb3-contrib) on PDDL problems: ``train_ppo(PPOConfig(...))`` trains (or loads) a
policy and evaluates it, the library behind ``python -m agents.rl``.

Modules: `config` (`PPOConfig`, the flags), `common` (model, progress bar, run directory,
TensorBoard writer), `flat` (one problem, MLP policy), `relational` (a split, the GNN policy,
greedy episodes against the optimal plan lengths).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from agents.training.ppo.config import RUN_LABELS, PPOConfig
from pddlgym_sl.extras import require_extra

__all__ = ["RUN_LABELS", "PPOConfig", "train_ppo"]


def train_ppo(config: PPOConfig) -> tuple[Path, dict[str, Any]]:
    """Train (or load), evaluate, and write the run directory: the directory and the evaluation
    metrics."""
    require_extra("rl", "agents.rl (MaskablePPO)")
    import torch

    from agents.devices import resolve_device
    from agents.training.ppo.flat import train_flat
    from agents.training.ppo.relational import run_relational

    config = replace(
        config, device=str(resolve_device(config.device))
    )  # SB3 would fall back to the CPU silently
    torch.set_num_threads(config.threads)
    if config.policy == "relational":
        return run_relational(config)
    return train_flat(config)
