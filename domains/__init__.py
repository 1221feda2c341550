"""The paper's four planning domains: PDDL domain files, problem generators and Table 3's splits.

>>> import domains
>>> domains.domain_file("ferry").name
'domain.pddl'
>>> text = domains.generate_problem("ferry", seed=1, locations=5, cars=5)
>>> [spec.filename for spec in domains.split_specs("ferry", "test")[:1]]
['ferry-l10-c10-s1.pddl']

Explicit registry, no discovery: `DOMAIN_NAMES` lists the domains; each has a directory holding
``domain.pddl`` (package data, so `domain_file` works from an installed wheel) and a ``generator``
module with a pure ``generate(**params, seed, split=None) -> str``. Importing this package loads
only the standard library (``pddlgym_sl.errors`` is imported lazily, when an error is raised,
because importing ``pddlgym_sl`` pulls in numpy and numba).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from domains.blocksworld import generator as _blocksworld
from domains.ferry import generator as _ferry
from domains.gripper import generator as _gripper
from domains.splits import ABBREVIATIONS, SPLIT_NAMES, ProblemSpec, specs_for
from domains.visitall import generator as _visitall

__all__ = [
    "DOMAIN_NAMES",
    "SPLIT_NAMES",
    "ProblemSpec",
    "domain_file",
    "generate_problem",
    "problem_text",
    "split_specs",
    "write_split",
]

DOMAIN_NAMES = ("blocksworld", "ferry", "gripper", "visitall")

_GENERATORS: dict[str, Callable[..., str]] = {
    "blocksworld": _blocksworld.generate,
    "ferry": _ferry.generate,
    "gripper": _gripper.generate,
    "visitall": _visitall.generate,
}
_PACKAGE_DIR = Path(__file__).resolve().parent


def _config_error(message: str) -> NoReturn:
    from pddlgym_sl.errors import ConfigError  # lazy: importing pddlgym_sl loads numba

    raise ConfigError(message)


def _check_domain(name: str) -> str:
    if name not in DOMAIN_NAMES:
        _config_error(f"unknown domain {name!r}; expected one of {', '.join(DOMAIN_NAMES)}")
    return name


def domain_file(name: str) -> Path:
    """Path of the PDDL domain file of ``name`` (one of `DOMAIN_NAMES`)."""
    return _PACKAGE_DIR / _check_domain(name) / "domain.pddl"


def generate_problem(name: str, seed: int, **params: int | float) -> str:
    """PDDL problem text from the split-independent stream, e.g. ``(name="ferry", seed=1, locations=5,
    cars=5)``. Parameters: blocksworld ``blocks``; ferry ``locations``, ``cars``; gripper ``balls``;
    visitall ``x``, ``y``, ``ratio``.
    """
    return _generate(_check_domain(name), None, seed, params)


def _generate(name: str, split: str | None, seed: int, params: dict[str, int | float]) -> str:
    expected = set(ABBREVIATIONS[name])
    if set(params) != expected:
        _config_error(f"{name} takes parameters {sorted(expected)}, got {sorted(params)}")
    try:
        return _GENERATORS[name](**params, seed=seed, split=split)
    except ValueError as exc:
        _config_error(f"{name}: {exc}")


def split_specs(name: str, split: str) -> list[ProblemSpec]:
    """The sorted problem specs of a split (``train``, ``val``, ``test`` or ``plan``) of Table 3."""
    _check_domain(name)
    if split not in SPLIT_NAMES:
        _config_error(f"unknown split {split!r}; expected one of {', '.join(SPLIT_NAMES)}")
    return specs_for(name, split)


def problem_text(spec: ProblemSpec) -> str:
    """The PDDL text of one spec (deterministic: same spec, same bytes)."""
    return _generate(_check_domain(spec.domain), spec.split, spec.seed, spec.kwargs)


def write_split(name: str, split: str, out_dir: str | Path, *, limit: int | None = None) -> list[Path]:
    """Write the problems of a split into ``out_dir`` (created if needed); return their paths.

    ``limit`` keeps only the first ``limit`` specs. Writes are atomic (temporary file in the same
    directory, then `os.replace`), and a file that already holds the right bytes is left untouched.
    """
    if limit is not None and limit < 0:
        _config_error(f"limit must be >= 0, got {limit}")
    return _write_specs(split_specs(name, split)[:limit], Path(out_dir))[0]


def _write_specs(specs: list[ProblemSpec], out_dir: Path) -> tuple[list[Path], int]:
    """Write specs; return the paths and how many files were (re)written."""
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
