"""Where the compiled kernels are cached (`pddlgym_sl.numba_cache`): a per-user directory that
respects ``$NUMBA_CACHE_DIR``, and no cache (instead of an import error) when nothing is writable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.problems import DOMAINS, FERRY_3_2, ROOT

# Encodes a state with two encoders and evaluates goal count: kernels of three modules get compiled.
SCRIPT = """
import json, sys
from pddlgym_sl import load_task
from pddlgym_sl.envs.encoders import Schema, make_encoder
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.numba_cache import CACHE, CACHE_DIR
task = load_task(sys.argv[1], sys.argv[2])
schema = Schema.from_domain_file(sys.argv[1])
for name in ("ilg", "flat"):
    make_encoder(name, schema, task).encode(task.init)
h = float(make_heuristic("goal_count", task).batch(task.init.words.reshape(1, -1))[0])
print(json.dumps({"cache": CACHE, "dir": None if CACHE_DIR is None else str(CACHE_DIR), "h": h}))
"""


def _run(tmp_path, env_changes: dict[str, str | None]) -> dict:
    problem = tmp_path / "p.pddl"
    problem.write_text(FERRY_3_2)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(DOMAINS / "ferry" / "domain.pddl"), str(problem)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_numba_cache_dir_is_respected(tmp_path):
    cache = tmp_path / "numba-cache"
    result = _run(tmp_path, {"NUMBA_CACHE_DIR": str(cache)})
    assert result["cache"] is True and result["dir"] == str(cache)
    indexes = {p.name.split(".")[0] for p in cache.rglob("*.nbi")}
    assert {"flat", "ilg", "simple"} <= indexes, sorted(indexes)
    assert result["h"] == _h_here(tmp_path)


def test_xdg_cache_home_is_the_default(tmp_path):
    result = _run(tmp_path, {"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert result["dir"] == str(tmp_path / "xdg" / "pddlgym_sl" / "numba")
    assert list((tmp_path / "xdg" / "pddlgym_sl" / "numba").rglob("*.nbi"))


def test_unwritable_home_falls_back_to_the_temp_directory(tmp_path):
    """$HOME unusable (a path under a regular file, which even root cannot create): the temp
    directory's per-user folder is used, never the sources' __pycache__."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    (tmp_path / "tmp").mkdir()
    result = _run(tmp_path, {"HOME": str(blocker / "home"), "TMPDIR": str(tmp_path / "tmp")})
    assert result["dir"] == str(tmp_path / "tmp" / f"pddlgym_sl-numba-{os.getuid()}")
    assert result["h"] == _h_here(tmp_path)


def test_unwritable_cache_dir_runs_without_a_cache(tmp_path):
    """Regression (issue 19): with no writable cache location, importing an encoder raised
    "cannot cache function ...: no locator available"; now the kernels compile in-process."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = _run(tmp_path, {"NUMBA_CACHE_DIR": str(blocker / "numba")})
    assert result["cache"] is False and result["dir"] is None
    assert result["h"] == _h_here(tmp_path)


def _h_here(tmp_path) -> float:
    from pddlgym_sl import load_task
    from pddlgym_sl.heuristics import make_heuristic

    task = load_task(DOMAINS / "ferry" / "domain.pddl", tmp_path / "p.pddl")
    return float(make_heuristic("goal_count", task).batch(task.init.words.reshape(1, -1))[0])


def test_every_kernel_uses_the_per_user_cache():
    """``cache=True`` would write beside the sources again: every compiled kernel takes ``CACHE``."""
    root = Path(__file__).resolve().parents[1]
    offenders = [
        f"{path.relative_to(root)}:{n}"
        for package in ("pddlgym_sl", "agents")
        for path in sorted((root / package).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "cache=True" in line.replace(" ", "") and not line.lstrip().startswith(("#", "numba's"))
    ]
    assert offenders == []


def test_kernels_are_stamped_with_every_kernel_source(tmp_path, monkeypatch):
    """An edit to any module that defines kernels changes the stamp of all the project's kernels (a
    kernel inlined into another module's must not leave the latter's cached code stale); an edit to a
    module without kernels does not."""
    from numba.core import caching

    from pddlgym_sl import numba_cache

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    assert impl._locator_classes[0].__name__ == "_ProjectLocator"
    package = tmp_path / "pddlgym_sl"
    package.mkdir()
    (package / "kernel.py").write_text("from numba import njit\n")
    (package / "plain.py").write_text("X = 1\n")
    monkeypatch.setattr(numba_cache, "_PACKAGES", (package, tmp_path / "agents"))

    def digest() -> str:
        numba_cache.kernel_sources_digest.cache_clear()
        return numba_cache.kernel_sources_digest()

    before = digest()
    (package / "plain.py").write_text("X = 2\n")
    assert digest() == before
    (package / "kernel.py").write_text("from numba import njit  # changed\n")
    assert digest() != before


def test_the_tests_own_kernels_carry_the_stamp_too():
    """A kernel defined in a test inlines the packages' kernels: it is stamped like them, so that an
    edit of a package recompiles it instead of loading code cached before the edit."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    locator = impl._locator_classes[0]
    assert locator.from_function(test_the_tests_own_kernels_carry_the_stamp_too, __file__) is not None
    assert (
        locator.from_function(caching.CacheImpl if hasattr(caching, "CacheImpl") else len, caching.__file__)
        is None
    )
