"""Between PyTorch tensors and the kernels' arrays: zero-padded channel layouts and cached weights.

Channel axes are padded to multiples of the SIMD width (`pad_lanes`); a weight's layout for a
kernel is built once per set of values (`packed`) rather than on every call.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor

from agents.models.nlm.fast.simd import LANES
from pddlgym_sl.memory import available_now_bytes

__all__ = ["DTYPES", "Workspace", "allocate", "as_array", "needs_grad", "packed", "pad_lanes", "pad_last"]

CHECKED_BYTES = 64 << 20
"""Allocations from this size on are checked against the memory the machine has available."""


def allocate(size: int, dtype: np.dtype | type) -> np.ndarray:
    """``np.empty(size, dtype)``, or a `MemoryError` when it is large and the machine cannot give it
    without swapping (``MemAvailable``). The NLM's arity-3 arrays hold ``n³`` entries per channel:
    on a task of a thousand objects one is 32 GB, which Linux grants on request and then fills page
    by page until the kernel kills the process (and perhaps others); refused here, the search ends
    with status ``memory_limit`` (`pddlgym_sl.search.driver.search`)."""
    nbytes = int(size) * np.dtype(dtype).itemsize
    if nbytes >= CHECKED_BYTES:
        available = available_now_bytes()
        if available is not None and nbytes > available:
            raise MemoryError(
                f"the NLM needs an array of {nbytes / 2**20:,.0f} MB; the machine has "
                f"{available / 2**20:,.0f} MB available"
            )
    return np.empty(size, dtype)


DTYPES = {torch.float32: np.float32, torch.float64: np.float64}
"""The numpy dtype of the kernels' arrays for a tensor dtype."""


def needs_grad(*tensors: Tensor | None) -> bool:
    """Whether autograd must record a kernel call on these inputs. When it need not (inference:
    no grad mode, or no input requires a gradient), the kernels are called directly instead of
    through their ``autograd.Function``, whose per-call bookkeeping costs as much as a kernel on
    the few states of one search expansion."""
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def pad_lanes(channels: int) -> int:
    """``channels`` rounded up to a multiple of the SIMD width (at least one vector)."""
    return max(LANES, -(-channels // LANES) * LANES)


def as_array(t: Tensor, channels: int | None = None) -> np.ndarray:
    """``t`` as a C-contiguous array (no copy when it already is one), its last axis zero-padded
    to ``channels`` when given."""
    a = t.detach().contiguous().numpy()
    # numpy's padding: torch's F.pad costs ~0.2 ms on the small tensors of one search expansion
    return a if channels is None or a.shape[-1] == channels else pad_last(a, channels)


_PACKED: dict[tuple, tuple[bytes, Any]] = {}


def packed(t: Tensor, make: Callable[..., Any], *key: Any) -> Any:
    """``make(t as an array, *key)``, cached per tensor and ``key`` while ``t``'s values stay the
    same (compared in full: weights are small, and an in-place change through ``.data`` bumps no
    version counter): the kernels' weight layouts are rebuilt after the weights change (an
    optimiser step, a checkpoint load), not on every call (a search evaluates many small batches
    with the same weights)."""
    a = t.detach().numpy()
    k = (id(t), a.dtype, a.shape, *key)
    hit = _PACKED.get(k)
    data = a.tobytes()  # a bytes comparison costs a fraction of np.array_equal's call overhead
    if hit is not None and hit[0] == data:
        return hit[1]
    if len(_PACKED) > 512:  # entries of tensors that no longer exist
        _PACKED.clear()
    value = make(a, *key)
    _PACKED[k] = (data, value)
    return value


def pad_last(a: np.ndarray, channels: int) -> np.ndarray:
    """``a`` with its last axis zero-padded to ``channels`` (C-contiguous)."""
    if a.shape[-1] == channels:
        return np.ascontiguousarray(a)
    out = np.zeros((*a.shape[:-1], channels), a.dtype)
    out[..., : a.shape[-1]] = a
    return out


class Workspace:
    """Arrays reused from one call to the next, by name: views of a flat buffer per name, grown when
    a larger one is asked for.

    Why: a forward pass over a few states of 100 objects allocates several megabytes of ``[B, N, N,
    C]`` arrays, and fresh memory costs a page fault (with its zeroing) per page on first touch: in
    search that took a quarter of the process's time, as system time. An array from `get` is valid
    until the next `get` of the same name: only for arrays that do not outlive one forward pass
    (and one workspace per thread).
    """

    def __init__(self) -> None:
        self._buffers: dict[str, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, ...], dtype: np.dtype | type) -> np.ndarray:
        """An uninitialised C-contiguous array of ``shape`` and ``dtype`` (the buffer of ``name``)."""
        size = math.prod(shape)  # (np.prod of a tuple costs about 15 µs)
        buffer = self._buffers.get(name)
        if buffer is None or buffer.size < size or buffer.dtype != np.dtype(dtype):
            grown = 0 if buffer is None or buffer.dtype != np.dtype(dtype) else buffer.size + buffer.size // 4
            buffer = self._buffers[name] = allocate(max(size, grown), dtype)
        return buffer[:size].reshape(shape)

    def zeros(self, name: str, shape: tuple[int, ...], dtype: np.dtype | type) -> np.ndarray:
        """`get`, filled with zeros."""
        out = self.get(name, shape, dtype)
        out.fill(0)
        return out
