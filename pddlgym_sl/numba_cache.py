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

**When a cached kernel is stale.** numba keys a cached function on its own source file only, but
our kernels inline kernels of other modules, and the search engine is compiled with the heuristic
kernels (`pddlgym_sl.heuristics.compiled`) and open lists of other modules and packages: an edit
to an inlined kernel would leave the cached engine running the old code. So the project's kernels
(those in ``pddlgym_sl/`` and ``agents/``, and in a checkout those of ``tests/`` and ``benchmarks/``,
which inline them) are stamped with a digest of every source file of the two packages that defines
kernels (`kernel_sources_digest`): any edit to one of them recompiles them all, never runs stale
code.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["CACHE", "CACHE_DIR", "cache_dir", "kernel_sources_digest"]

_PACKAGES = (Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent / "agents")
"""The trees whose kernels share one stamp: this package and its sibling ``agents`` (by path only:
nothing here imports it)."""
_KERNEL_MARKERS = (b"njit", b"@overload")
_STAMPED = (*_PACKAGES, _PACKAGES[0].parent / "tests", _PACKAGES[0].parent / "benchmarks")
"""The trees whose cached kernels carry the stamp: the packages, and in a checkout the tests' and
benchmarks' own kernels, which inline the packages' (a test's kernel cached before an edit of the
package must not run the old code)."""


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


def _source_files() -> list[Path]:
    return sorted(f for root in _PACKAGES if root.is_dir() for f in root.rglob("*.py"))


@functools.cache
def kernel_sources_digest() -> str:
    """A digest of the source of every module of `_PACKAGES` that defines kernels, computed once per
    process (a process runs the modules it imported, whatever happens to the files later)."""
    h = hashlib.sha256()
    for f in _source_files():
        with contextlib.suppress(OSError):
            data = f.read_bytes()
            if any(marker in data for marker in _KERNEL_MARKERS):
                h.update(f.relative_to(_PACKAGES[0].parent).as_posix().encode())
                h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def _install_locator() -> None:
    """Put `_ProjectLocator` first among numba's cache locators (module docstring)."""
    from numba.core import caching

    # public names since numba 0.61, underscored before
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    base = getattr(caching, "UserProvidedCacheLocator", None) or caching._UserProvidedCacheLocator

    class _ProjectLocator(base):
        """numba's locator for ``$NUMBA_CACHE_DIR``, stamped with the kernel sources' digest."""

        @classmethod
        def from_function(cls, py_func, py_file):
            path = Path(py_file).resolve()
            if not any(root in path.parents for root in _STAMPED):
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return (super().get_source_stamp(), kernel_sources_digest())

    if not any(c.__name__ == "_ProjectLocator" for c in impl._locator_classes):
        impl._locator_classes.insert(0, _ProjectLocator)


CACHE_DIR: Path | None = _configure()
"""The directory numba caches the kernels in (None: caching is off)."""

CACHE: bool = CACHE_DIR is not None
"""The ``cache=`` argument of every ``@njit`` in the project."""

if CACHE:
    _install_locator()
