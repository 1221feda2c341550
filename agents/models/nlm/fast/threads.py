"""Running GIL-free kernels on batch slices in Python threads.

The kernels release the GIL: `parallel` runs them on batch slices (`split_batch`) in
``torch.get_num_threads()`` Python threads (no second OpenMP runtime beside PyTorch's), or on the
calling thread alone inside `inline_kernels` (for a caller that keeps the other cores busy).
`memo_shard` gives a thread's forward passes their own arity-3 memo.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

__all__ = ["inline_kernels", "kernel_threads", "memo_shard", "parallel", "split_batch"]

_POOL: tuple[int, int, ThreadPoolExecutor] | None = None  # (pid of the creating process, threads, pool)
_CHUNKS_PER_THREAD = 4
"""Batch slices per thread: a thread that finishes early (or a core shared with another process)
takes more of them."""
_MIN_SLICE_WORK = 4096.0
"""Least work (sum of ``n_real**power`` over its rows) of a batch slice: handing a job to a pool
thread and waiting for it costs tens of microseconds, more than a kernel spends on the few states
of one search expansion (on 10 objects, the arity-3 block takes ~0.2 ms per state), so small
batches run inline."""


_LOCAL = threading.local()  # .inline: this thread runs the kernels itself (`inline_kernels`)


def kernel_threads() -> int:
    """Threads the kernels may use from the calling thread: ``torch.get_num_threads()``, or 1
    inside `inline_kernels`."""
    return 1 if getattr(_LOCAL, "inline", False) else torch.get_num_threads()


@contextlib.contextmanager
def inline_kernels() -> Iterator[None]:
    """Run the kernels called from this thread on this thread only, whatever
    ``torch.get_num_threads()`` says: for a caller that keeps the other cores busy with its own
    work (`agents.learned_heuristic` computes the search's bounds beside the forward pass), where
    handing batch slices to pool threads would make three threads share two cores."""
    before = getattr(_LOCAL, "inline", False)
    _LOCAL.inline = True
    try:
        yield
    finally:
        _LOCAL.inline = before


def current_shard() -> int:
    """The memo shard of the calling thread (`memo_shard`; 0 unless set)."""
    return getattr(_LOCAL, "shard", 0)


@contextlib.contextmanager
def memo_shard(shard: int) -> Iterator[None]:
    """Run the inference plans called from this thread on their memo shard ``shard``: two threads
    that run forward passes of one network at the same time (the searches of a lockstep batch, split
    between them) each keep their own memo (`agents.models.nlm.fast.inference.InferencePlan`), which
    is not shared between threads."""
    before = current_shard()
    _LOCAL.shard = shard
    try:
        yield
    finally:
        _LOCAL.shard = before


def parallel(jobs: list[Callable[[], Any]]) -> None:
    """Run zero-argument callables (GIL-free kernels) on `kernel_threads` threads; inline when
    there is one thread or one job."""
    global _POOL
    threads = min(kernel_threads(), len(jobs))
    if threads <= 1:
        for job in jobs:
            job()
        return
    # a forked child (e.g. a DataLoader worker) inherits the pool without its threads: new pool
    if _POOL is None or _POOL[0] != os.getpid() or _POOL[1] != threads:
        if _POOL is not None and _POOL[0] == os.getpid():
            _POOL[2].shutdown(wait=False)
        pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="nlm-kernels")
        _POOL = (os.getpid(), threads, pool)
    for future in [_POOL[2].submit(job) for job in jobs]:
        future.result()


def split_batch(mask: np.ndarray, power: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` batch slices of about equal work ``n_real**power`` per batch row: one when
    `kernel_threads` is 1 or the batch is small, else a few per thread (at least 2 rows and
    `_MIN_SLICE_WORK` each)."""
    nb = mask.shape[0]
    threads = kernel_threads()
    if threads <= 1 or nb < 4:
        return [(0, nb)]
    work = np.cumsum(mask.sum(1).astype(np.float64) ** power + 1.0)
    parts = max(1, min(threads * _CHUNKS_PER_THREAD, nb // 2, int(work[-1] / _MIN_SLICE_WORK)))
    if parts == 1:
        return [(0, nb)]
    bounds = [0, *np.searchsorted(work, work[-1] * np.arange(1, parts) / parts).tolist(), nb]
    return [(lo, hi) for lo, hi in itertools.pairwise(bounds) if hi > lo]
