"""The paper's four planning domains: PDDL domain files, problem generators and Table 3's splits.

>>> import domains
>>> domains.domain_file("ferry").name
'domain.pddl'
>>> text = domains.generate_problem("ferry", seed=1, locations=5, cars=5)
>>> [spec.filename for spec in domains.split_specs("ferry", "test")[:1]]
['ferry-l10-c10-s1.pddl']

Explicit registry, no discovery: `DOMAINS` (`domains.registry`) maps each name to its
`DomainSpec` (`domains.spec`), the one record of a domain's facts (parameters, splits, presets,
plan defaults, Gymnasium id; the registry's order is the display order), from which every other
list of domains derives. Each domain has a directory holding ``domain.pddl`` (package data, so
`domain_file` works from an installed wheel), a ``generator`` module with a pure
``generate(**params, seed, split=None) -> str`` and an ``__init__`` defining its ``SPEC``.
`DOMAIN_NAMES` is the tuple of registered names, read from `DOMAINS` on each access. Importing
this package loads only the standard library (``pddlgym_sl.errors`` is imported lazily, when an
error is raised, because importing ``pddlgym_sl`` pulls in numpy and numba).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import NoReturn

from domains.registry import DOMAINS
from domains.spec import DomainSpec, SplitGrid
from domains.splits import SPLIT_NAMES, ProblemSpec, specs_for

__all__ = [
    "DOMAINS",
    "DOMAIN_NAMES",
    "SPLIT_NAMES",
    "DomainSpec",
    "ProblemSpec",
    "SplitGrid",
    "domain_file",
    "generate_problem",
    "problem_text",
    "split_specs",
    "write_specs",
    "write_split",
]


def __getattr__(name: str) -> tuple[str, ...]:
    """``DOMAIN_NAMES``: the registered domain names in display order (live: a domain added to
    `DOMAINS` at run time is listed)."""
    if name == "DOMAIN_NAMES":
        return tuple(DOMAINS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _config_error(message: str) -> NoReturn:
    from pddlgym_sl.errors import ConfigError  # lazy: importing pddlgym_sl loads numba

    raise ConfigError(message)


def _spec(name: str) -> DomainSpec:
    if name not in DOMAINS:
        _config_error(f"unknown domain {name!r}; expected one of {', '.join(DOMAINS)}")
    return DOMAINS[name]


def domain_file(name: str) -> Path:
    """Path of the PDDL domain file of ``name`` (one of `DOMAIN_NAMES`)."""
    return _spec(name).domain_file


def generate_problem(name: str, seed: int, **params: int | float) -> str:
    """PDDL problem text from the split-independent stream, e.g. ``(name="ferry", seed=1, locations=5,
    cars=5)``. Parameters: blocksworld ``blocks``; ferry ``locations``, ``cars``; gripper ``balls``;
    visitall ``x``, ``y``, ``ratio``.
    """
    return _generate(name, None, seed, params)


def _generate(name: str, split: str | None, seed: int, params: dict[str, int | float]) -> str:
    spec = _spec(name)
    expected = set(spec.parameters)
    if set(params) != expected:
        _config_error(f"{name} takes parameters {sorted(expected)}, got {sorted(params)}")
    try:
        return spec.generate(**params, seed=seed, split=split)
    except ValueError as exc:
        _config_error(f"{name}: {exc}")


def split_specs(name: str, split: str) -> list[ProblemSpec]:
    """The sorted problem specs of a split (``train``, ``val``, ``test`` or ``plan``) of Table 3."""
    _spec(name)
    if split not in SPLIT_NAMES:
        _config_error(f"unknown split {split!r}; expected one of {', '.join(SPLIT_NAMES)}")
    return specs_for(name, split)


def problem_text(spec: ProblemSpec) -> str:
    """The PDDL text of one spec (deterministic: same spec, same bytes)."""
    return _generate(spec.domain, spec.split, spec.seed, spec.kwargs)


def write_split(name: str, split: str, out_dir: str | Path, *, limit: int | None = None) -> list[Path]:
    """Write the problems of a split into ``out_dir`` (created if needed); return their paths.

    ``limit`` keeps only the first ``limit`` specs. Writes are atomic (temporary file in the same
    directory, then `os.replace`), and a file that already holds the right bytes is left untouched.
    """
    if limit is not None and limit < 0:
        _config_error(f"limit must be >= 0, got {limit}")
    return write_specs(split_specs(name, split)[:limit], Path(out_dir))[0]


def write_specs(specs: list[ProblemSpec], out_dir: Path) -> tuple[list[Path], int]:
    """Write the problems of ``specs`` into ``out_dir`` (atomically; a file that already holds the
    right bytes is left untouched); return their paths and how many files were (re)written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths, written = [], 0
    for spec in specs:
        path = out_dir / spec.filename
        data = problem_text(spec).encode("utf-8")
        paths.append(path)
        if path.is_file() and path.read_bytes() == data:
            continue
        fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{spec.filename}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o644)  # mkstemp creates 0600
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        written += 1
    return paths, written
