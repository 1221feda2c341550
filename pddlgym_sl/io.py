"""Atomic file writes: a reader (or a crashed run being resumed) never sees a half-written file.

Data is written to a temporary file in the destination directory, flushed to disk, then moved
over the destination with `os.replace` (atomic on POSIX file systems).
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` atomically (parent directories are created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=1, allow_nan=False) + "\n")


def atomic_save_npz(path: str | Path, compress: bool = True, **arrays: np.ndarray) -> None:
    """`np.savez_compressed` (or `np.savez`) to `path` atomically. Store strings as unicode arrays,
    never objects, so that loading needs no pickle."""
    buffer = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())
