"""Memory of this process: what it uses now and at its peak, and the default limit of a search.

A search must end with status ``memory_limit`` before the process runs out of memory (an
out-of-memory kill loses everything, a swap storm stalls the machine). The search engine counts
the bytes of its own arrays; this module gives it the rest: the resident memory the process
already had (`rss_bytes`), the default limit (`default_memory_limit`: three quarters of the
memory this process may use, so that one search leaves room for the machine), and how much
virtual address space the process may still reserve (`address_space_left`, for processes run
under ``ulimit -v``, as planning competitions do).
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

from pddlgym_sl.errors import ConfigError

__all__ = [
    "DEFAULT_FRACTION",
    "address_space_left",
    "available_bytes",
    "default_memory_limit",
    "memory_limit_bytes",
    "peak_rss_bytes",
    "rss_bytes",
]

DEFAULT_FRACTION = 0.75
"""The share of `available_bytes` a search may use when no limit is given."""

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int:
    """Resident memory of this process now (Linux: /proc/self/statm; elsewhere its peak)."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return peak_rss_bytes()


def peak_rss_bytes() -> int:
    """The largest resident memory this process has had (``ru_maxrss``)."""
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def _cgroup_limit() -> int | None:
    """The memory limit of this process's cgroup (v2 ``memory.max`` or v1), None if unlimited."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            raw = Path(path).read_text().strip()
        except OSError:
            continue
        if raw.isdigit() and int(raw) < 1 << 60:
            return int(raw)
    return None


def available_bytes() -> int:
    """The memory this process may use: the machine's physical memory, or its cgroup's limit or
    its address-space limit (``ulimit -v``) when lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit in (_cgroup_limit(), _rlimit_as()):
        if limit is not None:
            total = min(total, limit)
    return int(total)


def _rlimit_as() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def address_space_left() -> int | None:
    """Bytes of virtual address space this process may still map under ``ulimit -v``, or None
    when there is no such limit."""
    limit = _rlimit_as()
    if limit is None:
        return None
    try:
        used = int(Path("/proc/self/statm").read_text().split()[0]) * _PAGE
    except (OSError, IndexError, ValueError):
        used = rss_bytes()
    return max(0, limit - used)


def default_memory_limit() -> int:
    """The limit of a search when none is given: `DEFAULT_FRACTION` of `available_bytes`."""
    return int(DEFAULT_FRACTION * available_bytes())


def memory_limit_bytes(memory_limit_mb: float | None) -> int:
    """A limit given in MB (None: `default_memory_limit`) in bytes; `ConfigError` unless positive."""
    if memory_limit_mb is None:
        return default_memory_limit()
    if isinstance(memory_limit_mb, bool) or not memory_limit_mb > 0:
        raise ConfigError(f"memory_limit must be a positive number of MB, not {memory_limit_mb!r}")
    return int(memory_limit_mb * 1024 * 1024)
