"""Atomic file writes: a reader (or a crashed run being resumed) never sees a half-written file.

Data is written to a temporary file in the destination directory, flushed to disk, then moved
over the destination with `os.replace` (atomic on POSIX file systems). The temporary's name
carries the writer's host and pid (``.<name>.<host>~<pid>.<random>.tmp``), so that a resumed
job can remove what writers killed mid-write left (`remove_orphaned_temporaries`) without
touching the files that live writers, here or on other nodes, are writing.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from pddlgym_sl.errors import ConfigError

_HOST = re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname()) or "host"
_TEMPORARY = re.compile(r"^\..+\.(?P<host>[A-Za-z0-9_-]+)~(?P<pid>\d+)\.[^.]+\.tmp$")


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` atomically (parent directories are created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{_HOST}~{os.getpid()}.", suffix=".tmp")
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


def process_alive(pid: int) -> bool:
    """Whether a process `pid` exists on this machine (one we may not signal counts): the test
    behind removing what a dead writer or solver run left behind."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_orphaned_temporaries(directory: str | Path) -> int:
    """Remove, anywhere under `directory`, the temporaries of atomic writes whose writer, a
    process of this machine, is dead (killed mid-write); return how many were removed."""
    removed = 0
    for tmp in Path(directory).rglob(".*.tmp"):
        match = _TEMPORARY.match(tmp.name)
        if match and match["host"] == _HOST and not process_alive(int(match["pid"])):
            tmp.unlink(missing_ok=True)
            removed += 1
    return removed


@contextmanager
def exclusive_lock(path: str | Path, what: str) -> Iterator[None]:
    """Hold an exclusive advisory lock on the file `path` (created if missing) for the block, or
    raise `ConfigError` at once when another process holds it (naming `what` and its pid).

    Two writers of one resumable output (a split being labelled, say) would remove each other's
    scratch files and record those crashes as failed problems; the lock turns that into a clear
    refusal. The kernel drops the lock with its process, so a killed writer never leaves it held
    (within one machine: on a shared file system across nodes, flock is not reliable). Where
    there is no ``fcntl`` (Windows), the block runs unlocked. The pid is cleared on release, so a
    finished output holds an empty lock file whichever process or machine wrote it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not a POSIX system
        yield
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise ConfigError(
                f"{what} is in use by another process (pid {holder}, lock {path}): "
                "wait for it to finish or stop it, then run again"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            handle.truncate(0)  # before unlocking: the next holder's pid is never cleared
            fcntl.flock(handle, fcntl.LOCK_UN)
