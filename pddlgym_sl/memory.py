"""Memory of this process: what it uses now and at its peak, the default limit of a search, and a cap
on what a block of code may add (the translator's).

A search must end with status ``memory_limit`` before the process runs out of memory (an
out-of-memory kill loses everything, a swap storm stalls the machine). The search engine counts
the bytes of its own arrays; this module gives it the rest: the resident memory the process
already had (`rss_bytes`), the default limit (`default_memory_limit`: three quarters of the
memory this process may use, so that one search leaves room for the machine), and how much
virtual address space the process may still reserve (`address_space_left`, for processes run
under ``ulimit -v``, as planning competitions do).

`address_space_cap` bounds what a block of code may add to the process (Linux): `pddlgym_sl.ground_size`
refuses a task before grounding when its estimate is too large, but an estimate can be wrong, so
the translator runs under a lowered address-space limit (``RLIMIT_AS``): its current size plus an
allowance, the smaller of the grounding limit (`ground_size.max_ground_bytes`) and the memory the
machine has available when the block starts (``MemAvailable``). A translator that outgrows it gets
a `MemoryError` at once instead of pushing the machine into swap. The previous limit is restored
when the block ends, however it ends. The limit is the process's, not the block's: another thread
that allocates while the block runs counts against it too. Blocks may nest or run in several
threads; only the outermost sets and restores the limit. Where ``RLIMIT_AS`` or ``/proc`` is not
available (macOS, Windows) the block runs without a cap, and the estimate alone bounds grounding.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator
from pathlib import Path

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

from pddlgym_sl.errors import ConfigError

__all__ = [
    "DEFAULT_FRACTION",
    "SLACK_BYTES",
    "address_space_cap",
    "address_space_left",
    "available_now_bytes",
    "default_memory_limit",
    "memory_limit_bytes",
    "peak_rss_bytes",
    "rss_bytes",
    "usable_bytes",
    "virtual_bytes",
]

DEFAULT_FRACTION = 0.75
"""The share of `usable_bytes` a search may use when no limit is given."""

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


_statm: tuple[int, int] | None = None
"""(pid, descriptor) of this process's open /proc/self/statm: every search reads it, and opening
the file costs several times the read. The pid guards against a descriptor inherited through
fork, which would name the parent."""


def rss_bytes() -> int:
    """Resident memory of this process now (Linux: /proc/self/statm; elsewhere its peak)."""
    global _statm
    try:
        pid = os.getpid()
        if _statm is None or _statm[0] != pid:
            _statm = (pid, os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC))
        return int(os.pread(_statm[1], 128, 0).split()[1]) * _PAGE
    except (OSError, IndexError, ValueError, AttributeError):
        return peak_rss_bytes()


def peak_rss_bytes() -> int:
    """The largest resident memory this process has had (``ru_maxrss``)."""
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


@functools.cache
def _cgroup_limit() -> int | None:
    """The memory limit of this process's cgroup (v2 ``memory.max`` or v1), None if unlimited.
    Read once: it is set when the container starts, and reading it per search cost a short
    search a fifth of its time."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            raw = Path(path).read_text().strip()
        except OSError:
            continue
        if raw.isdigit() and int(raw) < 1 << 60:
            return int(raw)
    return None


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


def available_now_bytes() -> int | None:
    """Memory the machine can give without swapping (``MemAvailable``), None if unknown."""
    return _proc_value("/proc/meminfo", "MemAvailable")


def virtual_bytes() -> int | None:
    """The process's current virtual size (``VmSize``), None if unknown."""
    return _proc_value("/proc/self/status", "VmSize")


def usable_bytes() -> int:
    """The memory this process may use: the machine's physical memory, or its cgroup's limit or
    its address-space limit (``ulimit -v``) when lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit in (_cgroup_limit(), _rlimit_as()):
        if limit is not None:
            total = min(total, limit)
    return int(total)


def _rlimit_as() -> int | None:
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def address_space_left() -> int | None:
    """Bytes of virtual address space this process may still map under ``ulimit -v``, or None
    when there is no such limit."""
    limit = _rlimit_as()
    if limit is None:
        return None
    used = virtual_bytes()
    return max(0, limit - (rss_bytes() if used is None else used))


def default_memory_limit() -> int:
    """The limit of a search when none is given: `DEFAULT_FRACTION` of `usable_bytes`."""
    return int(DEFAULT_FRACTION * usable_bytes())


def memory_limit_bytes(memory_limit_mb: float | None) -> int:
    """A limit given in MB (None: `default_memory_limit`) in bytes; `ConfigError` unless positive."""
    if memory_limit_mb is None:
        return default_memory_limit()
    if isinstance(memory_limit_mb, bool) or not memory_limit_mb > 0:
        raise ConfigError(f"memory_limit must be a positive number of MB, not {memory_limit_mb!r}")
    return int(memory_limit_mb * 1024 * 1024)


# ----------------------------------------------------------------- the translator's cap
SLACK_BYTES = 256 << 20
"""Added to every allowance: small tasks and the allocator's own reserves never meet the cap."""

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int] | None = None


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
    size, available = virtual_bytes(), available_now_bytes()
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
