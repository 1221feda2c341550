"""Compile (or load from numba's cache) the kernels a search will use, before its timer starts.

The first search of a process pays for numba: compiling the successor, queue and heuristic kernels
takes tens of seconds on a fresh cache (seconds when loading them from the cache,
`pddlgym_sl.numba_cache`), far more than a small search itself. Reported search times must not
include it: a caller runs `warm_up` on the task first, reports its time separately
(``compile_seconds``), and then times the real search. A warm-up still running after
`ANNOUNCE_AFTER` seconds says so on stderr, once, so that a first run does not sit silent for
tens of seconds.

`warm_up_in_background` compiles GBFS's kernels into numba's disk cache from a child process,
so that a command whose planning comes after other work (the quick start plans after training)
has them compiled on the other core meanwhile, and its own warm-up then only loads them.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

WARM_UP_EVALUATIONS = 20
"""Budget of the warm-up search: enough to expand states and evaluate successors, so that every
kernel of the search loop has run once."""


ANNOUNCE_AFTER = 3.0
"""Seconds after which a running warm-up says that it is compiling (a cached start takes less)."""


def _announce() -> None:
    from pddlgym_sl.numba_cache import CACHE_DIR

    where = f", cached in {CACHE_DIR} for later runs" if CACHE_DIR else ""
    print(f"compiling the search kernels (numba; once{where}) ...", file=sys.stderr, flush=True)


def warm_up(search: Callable[..., Any], task: Any, heuristic: Any, **kwargs: Any) -> float:
    """Run `search` on `task` with `heuristic` under a budget of `WARM_UP_EVALUATIONS` evaluations
    (``kwargs`` go to `search` as well); return its wall-clock seconds, the compile time."""
    start = time.perf_counter()
    notice = threading.Timer(ANNOUNCE_AFTER, _announce)
    notice.daemon = True
    notice.start()
    try:
        search(task, heuristic, max_evaluations=WARM_UP_EVALUATIONS, **kwargs)
    finally:
        notice.cancel()
    return time.perf_counter() - start


class _Zeros:
    """A batch heuristic of zeros: its GBFS compiles the engine's batch path (the one a learned
    heuristic's searches take)."""

    def batch(self, states: np.ndarray) -> np.ndarray:
        return np.zeros(len(states))


def _compile_gbfs(domain_file: str, problem_file: str, heuristics: tuple[str, ...]) -> None:
    from pddlgym_sl.search import gbfs
    from pddlgym_sl.task import load_task

    task = load_task(domain_file, problem_file)
    for name in heuristics:
        gbfs(task, _Zeros() if name == "batch" else name, max_evaluations=WARM_UP_EVALUATIONS)


def warm_up_in_background(
    domain_file: Path, problem_file: Path, heuristics: tuple[str, ...] = ("hff", "batch")
) -> multiprocessing.process.BaseProcess | None:
    """Start a child process that compiles GBFS's kernels for each of `heuristics` (names of
    `pddlgym_sl.heuristics`, or ``batch``: a heuristic evaluated in Python batches) on the task,
    into numba's disk cache; return it (join it before searching), or None where there is no disk
    cache to fill. What it compiles is what a later search would compile: the work is moved to
    another core, not skipped."""
    from pddlgym_sl.numba_cache import CACHE

    if not CACHE:
        return None
    child = multiprocessing.get_context("spawn").Process(
        target=_compile_gbfs, args=(str(domain_file), str(problem_file), heuristics), daemon=True
    )
    child.start()
    return child
