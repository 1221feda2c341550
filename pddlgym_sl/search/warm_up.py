"""Compile (or load from numba's cache) the kernels a search will use, before its timer starts.

The first search of a process pays for numba: compiling the successor, queue and heuristic kernels
takes tens of seconds on a fresh cache (seconds when loading them from the cache,
`pddlgym_sl.numba_cache`), far more than a small search itself. Reported search times must not
include it: a caller runs `warm_up` on the task first, reports its time separately
(``compile_seconds``), and then times the real search. A warm-up still running after
`ANNOUNCE_AFTER` seconds says so on stderr, once, so that a first run does not sit silent for
tens of seconds.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

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
