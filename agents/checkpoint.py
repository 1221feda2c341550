"""Checkpoints that load without executing pickled code.

- ``best.safetensors`` / weights for inference: model tensors in safetensors, with the JSON needed
  to rebuild the model and head (``model.json``) beside them;
- ``last.pt``: the full training state (model, optimizer, step, best metric, RNG, wall seconds so
  far) for resuming, written with `torch.save` and read with ``torch.load(weights_only=True)``
  (tensors, numbers, strings, lists and dicts only).

Every file is written atomically (temporary file + rename); temporary files that an interrupted
write left behind are removed by the next save of the same file. Every load failure is a
`CheckpointError` naming the file and what is wrong with it (missing, a directory, truncated,
corrupt, pickled objects other than plain data, weights that do not fit the model); nothing
suggests unpickling.
"""

from __future__ import annotations

import io
import json
import pickle
import time
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load as safetensors_load
from safetensors.torch import save as safetensors_save

from agents.errors import CheckpointError
from pddlgym_sl.io import atomic_write_bytes, atomic_write_json


class RunClock:
    """Wall-clock seconds of a run across resumes, for its metrics.json.

    A run's training state stores `total` at each checkpoint; a resumed call `restore`s it and adds
    its own seconds (data loading included). What an interrupted call did after its last checkpoint
    is lost with the work itself, so it is not counted. A state saved before the clock existed
    gives None: the run's total is unknown.
    """

    KEY = "wall_seconds"

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.earlier: float | None = 0.0

    def restore(self, state: dict[str, Any]) -> None:
        value = state.get(self.KEY)
        self.earlier = float(value) if value is not None else None

    def total(self) -> float | None:
        if self.earlier is None:
            return None
        return round(self.earlier + time.perf_counter() - self.started, 3)  # ms: a short run is not 0


def _read_bytes(path: Path) -> bytes:
    path = Path(path)
    if path.is_dir():
        raise CheckpointError("is a directory where a checkpoint file belongs", file=path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CheckpointError("not found", file=path) from None
    except OSError as exc:
        raise CheckpointError(f"cannot read it ({exc.strerror or exc})", file=path) from None


def _remove_stale_temporaries(path: Path) -> None:
    """Delete the temporary files of earlier interrupted writes of `path` (`atomic_write_bytes`
    names them ``.<name>.<random>.tmp`` beside it)."""
    path = Path(path)
    if path.parent.is_dir():
        for tmp in path.parent.glob(f".{path.name}.*.tmp"):
            tmp.unlink(missing_ok=True)


def save_weights(path: Path, model: torch.nn.Module) -> None:
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    _remove_stale_temporaries(path)
    atomic_write_bytes(path, safetensors_save(state))


def read_weights(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of a safetensors file; `CheckpointError` when missing or corrupt."""
    data = _read_bytes(path)
    try:
        return safetensors_load(data)
    except Exception as exc:  # safetensors raises its own error types, and OverflowError/ValueError
        raise CheckpointError(f"not a valid safetensors file ({exc})", file=path) from None


def load_weights(path: Path, model: torch.nn.Module) -> None:
    """Load safetensors weights into `model`; `CheckpointError` when corrupt, not its weights
    (names, shapes, dtypes: nothing is cast) or not finite."""
    from agents.run_files import check_state_dict

    state = read_weights(path)
    try:
        check_state_dict(state, model.state_dict(), path, "")
    except CheckpointError as exc:
        raise CheckpointError(f"the weights do not fit the model ({exc.cause})", file=path) from None
    try:
        model.load_state_dict(state)
    except (RuntimeError, KeyError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise CheckpointError(f"the weights do not fit the model ({first})", file=path) from None


def save_training_state(path: Path, state: dict[str, Any]) -> None:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    _remove_stale_temporaries(path)
    atomic_write_bytes(path, buffer.getvalue())


def load_training_state(path: Path) -> dict[str, Any]:
    """The training state saved by `save_training_state` (plain data only; nothing unpickled
    runs code); `CheckpointError` when the file is missing, truncated, corrupt or holds objects."""
    data = _read_bytes(path)
    if not data:
        raise CheckpointError("empty file (an interrupted write?)", file=path)
    if not data.startswith(_ZIP_MAGIC):  # torch saves zip archives: say what this is instead
        raise CheckpointError(f"not a torch checkpoint: {_what_it_is(data)}", file=path)
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise CheckpointError(
            "a torch checkpoint holding pickled objects other than tensors, numbers, strings, lists "
            "and dicts: refused (nothing was executed); it was not written by agents.supervised",
            file=path,
        ) from None
    except (RuntimeError, EOFError, ValueError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(f"a zip archive, truncated or corrupt ({first})", file=path) from None
    if not isinstance(state, dict):
        raise CheckpointError(f"holds a {type(state).__name__}, not a training state", file=path)
    return state


_ZIP_MAGIC = b"PK\x03\x04"
"""The first bytes of a zip archive, the format of ``torch.save`` (and of safetensors' none)."""


def _what_it_is(data: bytes) -> str:
    """What a file that is not a zip archive holds, as far as its first bytes tell (no guess)."""
    if data[:1] == b"\x80" and data[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return "a pickle stream, not the zip archive torch writes (refused unread)"
    return f"neither a zip archive (what torch writes) nor a pickle: it begins with bytes {data[:8].hex(' ')}"


def save_model_config(path: Path, config: dict[str, Any]) -> None:
    _remove_stale_temporaries(path)
    atomic_write_json(path, config)


def load_json_object(path: Path) -> dict[str, Any]:
    """A JSON object file of a run directory (model.json, args.json); `CheckpointError` otherwise."""
    data = _read_bytes(path)
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise CheckpointError("not UTF-8 text", file=path) from None
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"not valid JSON ({exc.msg})", file=path, line=exc.lineno) from None
    if not isinstance(value, dict):
        raise CheckpointError(f"holds a JSON {type(value).__name__}, not an object", file=path)
    return value


RUN_FILES = ("args.json", "model.json", "best.safetensors", "last.pt", "metrics.json")
"""The files a run directory holds (a training run; evaluation results live under eval/)."""


def check_run_files(run_dir: Path) -> None:
    """`CheckpointError` when one of `RUN_FILES` is there but not a regular file (a directory, a
    FIFO): resuming would fail on it only when it is written, after the work."""
    for name in RUN_FILES:
        path = run_dir / name
        if (path.exists() or path.is_symlink()) and not path.is_file():
            kind = "a directory" if path.is_dir() else "not a regular file"
            raise CheckpointError(f"is {kind} where the run's {name} belongs", file=path)


def load_model_config(path: Path) -> dict[str, Any]:
    return load_json_object(path)
