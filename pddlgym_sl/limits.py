"""Input limits that a user can raise through environment variables (file size, ground size)."""

from __future__ import annotations

import os

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
