"""numba options shared by the NLM kernels, and the small inlined helpers every kernel uses.

Every kernel of this package is compiled with `JIT` (cached compilation, the GIL released so that
batch slices run on Python threads, no ZeroDivisionError checks); helpers called in inner loops
with `INLINE`, since a call that passes arrays costs about as much as the work of one row. The
helpers: the real objects of a batch row and the padding of outputs, and the lane-wise steps
that several kernels take alike (running max / min, with arguments, and the sigmoid's gradient),
each the same operations in the same order wherever it is used.
"""

from __future__ import annotations

from typing import Any

from numba import njit

from agents.models.nlm.fast.simd import vgt_select, vmul, vsub
from pddlgym_sl.numba_cache import CACHE

__all__ = ["INLINE", "JIT", "fill_padding", "real_objects", "vmax_min", "vmax_min_arg", "vsigmoid_grad"]

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


@njit(**INLINE)
def vmax_min(v, mx, mn):
    """The lane-wise running max ``mx`` and min ``mn`` updated with ``v``."""
    return vgt_select(v, mx, v, mx), vgt_select(mn, v, v, mn)


@njit(**INLINE)
def vmax_min_arg(v, kv, mx, kx, mn, kn):
    """`vmax_min` with the arguments: ``(mx, kx, mn, kn)`` updated with ``v`` at argument ``kv``
    (the first of equal extremes keeps its argument)."""
    return (
        vgt_select(v, mx, v, mx),
        vgt_select(v, mx, kv, kx),
        vgt_select(mn, v, v, mn),
        vgt_select(mn, v, kv, kn),
    )


@njit(**INLINE)
def vsigmoid_grad(g, y, one):
    """The gradient ``g σ'(x) = g y (1 - y)`` before an activated output ``y = σ(x)`` (``one``: 1 in
    every lane)."""
    return vmul(g, vmul(y, vsub(one, y)))
