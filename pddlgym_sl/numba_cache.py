"""Where numba caches the compiled kernels: a per-user directory, never next to the sources.

numba's ``cache=True`` writes machine code into ``__pycache__`` beside each source file by default.
That pollutes shared installs, fails in read-only ones, and, when neither the install directory nor
numba's own fallback is writable, makes ``import`` raise ("cannot cache function ...: no locator
available"). Every kernel module imports `CACHE` from here, so this module runs before the first
kernel is decorated, and picks:

1. ``$NUMBA_CACHE_DIR`` when set (numba's own variable, used as it is);
2. else ``$XDG_CACHE_HOME/pddlgym_sl/numba`` or ``~/.cache/pddlgym_sl/numba``;
3. else, when that is not writable, ``<tempdir>/pddlgym_sl-numba-<uid>``;
4. else no cache: `CACHE` is False and every kernel compiles once per process.

Every ``@njit`` of the project passes ``cache=CACHE``. The directory also reaches subprocesses
(evaluation workers, the test suite's CLI runs) through ``$NUMBA_CACHE_DIR``, so they share it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["CACHE", "CACHE_DIR", "cache_dir"]


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def _candidates() -> list[Path]:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return [Path(os.environ["NUMBA_CACHE_DIR"]).expanduser()]
    xdg = os.environ.get("XDG_CACHE_HOME")
    user = [Path(xdg).expanduser()] if xdg else []
    with contextlib.suppress(RuntimeError):  # no home directory can be determined
        user.append(Path.home() / ".cache")
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return [
        *(base / "pddlgym_sl" / "numba" for base in user),
        Path(tempfile.gettempdir()) / f"pddlgym_sl-numba-{uid}",
    ]


def cache_dir() -> Path | None:
    """The first writable directory of the module docstring's list, or None."""
    return next((path for path in _candidates() if _writable(path)), None)


def _configure() -> Path | None:
    path = cache_dir()
    if path is not None:
        os.environ["NUMBA_CACHE_DIR"] = str(path)
        numba = sys.modules.get("numba")
        if numba is not None:  # imported before us: its config already read the environment
            numba.config.CACHE_DIR = str(path)
    return path


CACHE_DIR: Path | None = _configure()
"""The directory numba caches the kernels in (None: caching is off)."""

CACHE: bool = CACHE_DIR is not None
"""The ``cache=`` argument of every ``@njit`` in the project."""
