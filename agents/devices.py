"""The torch device a ``device`` setting names: ``auto`` is CUDA when present, else the CPU; a device
that is not there is refused (`AgentError`) before any work, not found missing at the first tensor
that moves to it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.errors import AgentError

if TYPE_CHECKING:
    import torch


def resolve_device(name: str | torch.device) -> torch.device:
    """``auto`` (cuda when available), ``cpu``, ``cuda``, ``cuda:1``, ``mps``, ... or a torch device;
    `AgentError` for a name torch does not know and for a CUDA or MPS device this machine lacks."""
    import torch  # not at import: the CLIs' --help stays free of torch

    if isinstance(name, str) and name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        raise AgentError(f"device {name!r} is not a torch device (auto, cpu, cuda, cuda:1, ...)") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise AgentError(
                f"device {str(name)!r}: CUDA is not available on this machine "
                "(torch.cuda.is_available() is False); use the device 'cpu' or 'auto'"
            )
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise AgentError(f"device {str(name)!r}: this machine has {count} CUDA device(s), 0..{count - 1}")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise AgentError(f"device {str(name)!r}: MPS is not available on this machine; use 'cpu' or 'auto'")
    return device
