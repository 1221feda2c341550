"""A cap on how much memory a block of code may add to the process (Linux), for the translator.

`pddlgym_sl.ground_size` refuses a task before grounding when its estimate is too large, but an
estimate can be wrong. `address_space_cap` lowers the process's address-space limit
(``RLIMIT_AS``) for the duration of a block to its current size plus an allowance: the smaller
of the grounding limit (`ground_size.max_ground_bytes`) and the memory the machine has
available when the block starts (``MemAvailable``), so that a translator that outgrows it gets
a `MemoryError` at once instead of pushing the machine into swap. The previous limit is
restored when the block ends, however it ends.

The limit is the process's, not the block's: another thread that allocates while the block runs
counts against it too. Blocks may nest or run in several threads; only the outermost sets and
restores the limit. Where ``RLIMIT_AS`` or ``/proc`` is not available (macOS, Windows) the block
runs without a cap, and the estimate alone bounds grounding.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

SLACK_BYTES = 256 << 20
"""Added to every allowance: small tasks and the allocator's own reserves never meet the cap."""

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int] | None = None


def _proc_value(path: str, key: str) -> int | None:
    """A ``key: N kB`` line of a /proc file, in bytes (None when absent)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def available_bytes() -> int | None:
    """Memory the machine can give without swapping (``MemAvailable``), None if unknown."""
    return _proc_value("/proc/meminfo", "MemAvailable")


def address_space_bytes() -> int | None:
    """The process's current virtual size (``VmSize``), None if unknown."""
    return _proc_value("/proc/self/status", "VmSize")


@contextlib.contextmanager
def address_space_cap(allowance: int) -> Iterator[int | None]:
    """Cap the process's address space at its current size plus ``min(allowance, MemAvailable)``
    (plus `SLACK_BYTES`) while the block runs; yields the allowance in force (None: no cap)."""
    global _depth, _saved
    with _lock:
        _depth += 1
        outer = _depth == 1
        granted = None
        if outer:
            granted = _set_cap(allowance)
    try:
        yield granted
    finally:
        with _lock:
            _depth -= 1
            if outer and _saved is not None:
                resource.setrlimit(resource.RLIMIT_AS, _saved)
                _saved = None


def _set_cap(allowance: int) -> int | None:
    global _saved
    if resource is None or not hasattr(resource, "RLIMIT_AS"):
        return None
    size, available = address_space_bytes(), available_bytes()
    if size is None:
        return None
    granted = allowance if available is None else min(allowance, available)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + granted + SLACK_BYTES
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft != resource.RLIM_INFINITY and soft <= cap:
        return granted  # a lower limit is in force already
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ValueError, OSError):
        return None
    _saved = (soft, hard)
    return granted
