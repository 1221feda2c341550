"""Range checks of command-line arguments, shared by the CLIs' tyro ``Args`` dataclasses, and the
paths of arguments read back from a file (`with_paths`).

tyro checks types, not ranges: ``--batch-size -5`` reached torch as "negative dimensions are not
allowed", ``--val-every 0`` a ZeroDivisionError, ``--time-limit -3`` ran the whole split as
failures. Each ``Args.__post_init__`` calls `check_ranges`, so a bad value is refused before any
work, whether it comes from the command line (tyro prints the message and exits with status 2), a
``--config`` file or a stored ``args.json``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pddlgym_sl.errors import ConfigError

__all__ = ["ArgumentRangeError", "check_ranges", "with_paths"]


class ArgumentRangeError(ConfigError):
    """A number out of range; `field` is the ``Args`` field (the flag is ``--field-name``), so
    that a reader of a stored ``args.json`` can name the field instead of a flag."""

    def __init__(self, field: str, requirement: str, value: Any) -> None:
        self.field, self.requirement, self.value = field, requirement, value
        super().__init__(f"{_flag(field)} must be {requirement}, not {value!r}")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_ranges(
    args: Any,
    *,
    positive: Iterable[str] = (),
    non_negative: Iterable[str] = (),
    unit_interval: Iterable[str] = (),
    at_most: dict[str, float] | None = None,
) -> None:
    """`ArgumentRangeError` (a `ConfigError`) naming the flag unless each named field of `args` is
    None or a number that is > 0 (`positive`), >= 0 (`non_negative`) or in (0, 1]
    (`unit_interval`), and at most its value in `at_most`; NaN fails every test."""
    tests = (
        (positive, lambda v: v > 0, "> 0"),
        (non_negative, lambda v: v >= 0, ">= 0"),
        (unit_interval, lambda v: 0 < v <= 1, "in (0, 1]"),
    )
    for names, ok, what in tests:
        for name in names:
            value = getattr(args, name)
            if value is not None and not (_is_number(value) and ok(value)):
                raise ArgumentRangeError(name, what, value)
    for name, most in (at_most or {}).items():
        value = getattr(args, name)
        if value is not None and not (_is_number(value) and value <= most):
            raise ArgumentRangeError(name, f"at most {most:,}", value)


def with_paths(args_class: type, values: dict[str, Any]) -> dict[str, Any]:
    """`values` (from a JSON or YAML file) with the fields that `args_class` annotates as ``Path``
    turned back into paths (None stays None)."""
    paths = {f.name for f in dataclasses.fields(args_class) if "Path" in str(f.type)}
    return {k: Path(v) if k in paths and v is not None else v for k, v in values.items()}
