"""Checkpoints that load without executing pickled code.

- ``best.safetensors`` / weights for inference: model tensors in safetensors, with the JSON needed
  to rebuild the model and head (``model.json``) beside them;
- ``last.pt``: the full training state (model, optimizer, step, best metric, RNG) for resuming,
  written with `torch.save` and read with ``torch.load(weights_only=True)`` (tensors, numbers,
  strings, lists and dicts only).

Every file is written atomically (temporary file + rename).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load as safetensors_load
from safetensors.torch import save as safetensors_save

from pddlgym_sl.io import atomic_write_bytes, atomic_write_json


def save_weights(path: Path, model: torch.nn.Module) -> None:
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    atomic_write_bytes(path, safetensors_save(state))


def load_weights(path: Path, model: torch.nn.Module) -> None:
    model.load_state_dict(safetensors_load(Path(path).read_bytes()))


def save_training_state(path: Path, state: dict[str, Any]) -> None:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def load_training_state(path: Path) -> dict[str, Any]:
    return torch.load(path, map_location="cpu", weights_only=True)


def save_model_config(path: Path, config: dict[str, Any]) -> None:
    atomic_write_json(path, config)


def load_model_config(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())
