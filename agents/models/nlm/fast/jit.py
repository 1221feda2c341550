"""numba options shared by the NLM kernels, and the small inlined helpers every kernel uses.

Every kernel of this package is compiled with `JIT` (cached compilation, the GIL released so that
batch slices run on Python threads, no ZeroDivisionError checks); helpers called in inner loops
with `INLINE`, since a call that passes arrays costs about as much as the work of one row.
"""

from __future__ import annotations

from typing import Any

from numba import njit

from pddlgym_sl.numba_cache import CACHE

__all__ = ["INLINE", "JIT", "fill_padding", "real_objects"]

JIT: dict[str, Any] = {"cache": CACHE, "nogil": True, "error_model": "numpy"}
"""numba options of every kernel (cached compilation, GIL released, no ZeroDivisionError checks)."""
INLINE: dict[str, Any] = {**JIT, "inline": "always"}
"""Options of helpers called in inner loops: inlined at numba's IR level, since a call that
passes arrays costs about as much as the work of one row."""


@njit(**INLINE)
def real_objects(mask, b, objs):
    """Write the real objects of batch row ``b`` into ``objs``; return their number."""
    n = 0
    for o in range(mask.shape[1]):
        if mask[b, o]:
            objs[n] = o
            n += 1
    return n


@njit(**INLINE)
def fill_padding(out, b, n, value):
    """Set batch row ``b`` of ``out`` to ``value`` when it has padding (``n`` real objects of
    ``out.shape[1]``): the kernels write every entry of a real tuple, so that outputs can be
    allocated uninitialised (zero-filling them costs a pass over memory)."""
    if n < out.shape[1]:
        out[b] = value
