"""Input limits that a user can raise through environment variables (file size, grounding memory)."""

from __future__ import annotations

import os
import re

from pddlgym_sl.errors import ConfigError


def limit_from_env(var: str, default: int) -> int:
    """The positive whole number in ``$var``, or `default` when it is unset; `ConfigError` when
    it is set to anything else."""
    raw = os.environ.get(var)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"${var} must be a whole number, not {raw!r}") from None
    if value < 1:
        raise ConfigError(f"${var} must be positive, not {value}")
    return value


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_BYTES = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)


def bytes_from_env(var: str, default: int) -> int:
    """A positive size in ``$var``: bytes, or a number with a K, M, G or T suffix (powers of
    1024; ``8G``, ``8GiB``, ``1.5T``), or `default` when unset; `ConfigError` otherwise."""
    raw = os.environ.get(var)
    if raw is None:
        return default
    match = _BYTES.fullmatch(raw)
    if match is None:
        raise ConfigError(f"${var} must be a size in bytes such as 8589934592 or 8G, not {raw!r}")
    value = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if value < 1:
        raise ConfigError(f"${var} must be positive, not {raw!r}")
    return value


def format_bytes(n: float) -> str:
    """``1536`` -> ``"1.5 KiB"``: a size in binary units, three significant digits."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")
