"""The torch device a CLI's ``--device`` names: ``auto`` is CUDA when present, else the CPU."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def resolve_device(name: str | torch.device) -> torch.device:
    """``auto`` (cuda when available), ``cpu``, ``cuda``, ``cuda:1``, ... or a torch device."""
    import torch  # not at import: the CLIs' --help stays free of torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)
