"""SIGINT and SIGTERM end a command the same way: its workers are stopped, and one line says what
is kept and how to resume (no traceback).

Python turns SIGINT into KeyboardInterrupt; `stop_on_signals` makes SIGTERM raise `Terminated`,
a KeyboardInterrupt too, so that one ``except KeyboardInterrupt`` (the one in `run_units`
that kills the workers, then the command's own) handles both. `interrupted` prints the line
and gives the exit status a shell gives a process killed by that signal (130, 143).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

__all__ = ["RESUME", "Terminated", "ignore_signals", "interrupted", "note_kept", "stop_on_signals"]

RESUME = "run the same command again to resume"


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP), raised in the main thread like Ctrl-C's KeyboardInterrupt."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_terminated(signum, frame):
    raise Terminated(signum)


def install_sigterm() -> dict[int, object]:
    """SIGTERM and SIGHUP raise `Terminated` (main thread only); return the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {n: signal.signal(n, _raise_terminated) for n in (signal.SIGTERM, signal.SIGHUP)}


def restore(previous: dict[int, object]) -> None:
    for number, handler in previous.items():
        signal.signal(number, handler)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise `Terminated` within the block (as SIGINT raises KeyboardInterrupt)."""
    previous = install_sigterm()
    try:
        yield
    finally:
        restore(previous)


@contextlib.contextmanager
def ignore_signals() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP ignored within the block: a second Ctrl-C while the workers are
    being stopped must not interrupt the stopping."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    numbers = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {n: signal.signal(n, signal.SIG_IGN) for n in numbers}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def note_kept(exc: KeyboardInterrupt, kept: str) -> None:
    """Say on `exc` what the interrupted work keeps (the innermost layer knows best); `interrupted`
    prints it instead of its caller's more general words."""
    exc.kept = kept  # type: ignore[attr-defined]


def interrupted(exc: KeyboardInterrupt, kept: str, resume: str = RESUME, *, now: bool = False) -> int:
    """Print the one line of an interrupted command (``interrupted (SIGINT): <kept>; <resume>``)
    and return its exit status, 128 + the signal's number. `kept` says what is kept, unless
    `note_kept` said it more precisely on the way up.

    `now` (a command run from the command line): end the process at once instead of returning,
    without the interpreter's teardown, which takes seconds once torch and scipy are loaded and
    would keep an interrupted command alive after its line; what it keeps is on disk already."""
    kept = getattr(exc, "kept", kept)
    signum = getattr(exc, "signum", signal.SIGINT)
    if now and threading.current_thread() is threading.main_thread():  # a second Ctrl-C: no traceback
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_IGN)
    print(f"interrupted ({signal.Signals(signum).name}): {kept}; {resume}", file=sys.stderr, flush=True)
    status = 128 + int(signum)
    if now:
        sys.stdout.flush()
        os._exit(status)
    return status
