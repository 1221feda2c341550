"""Processes we start die with us: worker processes, commands, and the programs they run.

Three mechanisms, since no one of them covers every way a parent ends (Ctrl-C, SIGTERM, kill -9
of the process or of its process group, a job scheduler):

- **Process groups.** A worker of a local pool leads its own process group (`become_worker`),
  and so does a command started by `run_command`. Ctrl-C at a terminal signals the foreground
  group, that is the command the user ran and nothing below it, so that command alone decides:
  it kills each worker's group (the worker and whatever it started) and prints one line, instead
  of every worker printing a traceback or, worse, seeing its Fast Downward child die of the
  SIGINT and recording the unit as failed.
- **Parent-death signal** (Linux, ``prctl(PR_SET_PDEATHSIG)`` through ctypes): the kernel sends
  SIGKILL to a worker when its parent dies, however it dies, kill -9 included.
- **A watchdog thread** on the parent's pid: the same on other systems, and a second line of
  defence on Linux.

Programs that we do not write (Fast Downward's driver starts a translator and a search and gives
them no parent-death signal) run under ``guard.py`` (`guarded`), which kills everything below it
when its parent dies.

`CHILD_ENV` is the thread setting of every worker and command: one thread each, so that ``--jobs
N`` uses N cores and not N times the machine's; the environment has to be set before the child
starts (BLAS and OpenMP read it when they load).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

__all__ = [
    "CHILD_ENV",
    "become_worker",
    "child_env",
    "child_environment",
    "guarded",
    "kill_group",
    "run_command",
    "stop_commands",
]

CHILD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "PYTHONUNBUFFERED": "1",
}
"""Environment of every worker and command: one thread for OpenMP, MKL, OpenBLAS and numba (torch
follows OMP_NUM_THREADS), unbuffered output for the logs."""

GUARD = Path(__file__).with_name("guard.py")
_PR_SET_PDEATHSIG = 1
_WATCH_SECONDS = 0.5


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with `CHILD_ENV` (and `extra`) over it."""
    return {**os.environ, **CHILD_ENV, **(extra or {})}


@contextlib.contextmanager
def child_environment() -> Iterator[None]:
    """`CHILD_ENV` in ``os.environ`` for the duration: the workers that multiprocessing spawns
    meanwhile inherit it (it has no other way to give them an environment). This process's own
    libraries are loaded already and keep their settings."""
    saved = {key: os.environ.get(key) for key in CHILD_ENV}
    os.environ.update(CHILD_ENV)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _set_parent_death_signal(number: int) -> bool:
    """Ask Linux to send `number` to this process when its parent dies; False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(number), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _end_own_group() -> None:
    """SIGKILL this process and, when it leads its group, everything in the group."""
    with contextlib.suppress(OSError):
        if os.getpgrp() == os.getpid():
            os.killpg(os.getpid(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


def _watch(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            _end_own_group()
        threading.Event().wait(_WATCH_SECONDS)


def become_worker(parent: int) -> None:
    """Make this (just started) worker process die with `parent`: lead its own process group, ask
    for SIGKILL when the parent dies, and watch the parent's pid from a daemon thread. A worker
    whose parent is already gone ends at once."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    _set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent:
        _end_own_group()
    threading.Thread(target=_watch, args=(parent,), name="parent-watchdog", daemon=True).start()


def guarded(command: Sequence[str]) -> list[str]:
    """`command` run under ``guard.py``: it and everything it starts die with this process."""
    return [sys.executable, "-I", "-S", str(GUARD), str(os.getpid()), *command]


def kill_group(pid: int) -> None:
    """SIGKILL the process group that `pid` leads (the process alone when it leads none)."""
    with contextlib.suppress(OSError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
            return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()


def run_command(
    command: Sequence[str],
    *,
    log: IO | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    on_start=None,
) -> int:
    """Run `command` to its end and return its exit status (negative: the signal that ended it).

    It runs under the guard, in a process group of its own (Ctrl-C reaches the caller, which
    decides), with `env` (default: `child_env`), output to `log` (default: ours). An exception
    in the caller while it waits (KeyboardInterrupt included) kills the command's group first;
    `stop_commands` kills every command still running (from any thread). `on_start(pid)` is
    called with the guard's pid once it runs."""
    proc = subprocess.Popen(
        guarded(command),
        stdout=log,
        stderr=subprocess.STDOUT if log is not None else None,
        stdin=subprocess.DEVNULL,
        env=dict(env) if env is not None else child_env(),
        cwd=cwd,
        start_new_session=True,
    )
    with _LIVE_LOCK:
        _LIVE.add(proc)
    try:
        if on_start is not None:
            on_start(proc.pid)
        return proc.wait()
    except BaseException:
        kill_group(proc.pid)
        proc.wait()
        raise
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)


def stop_commands() -> int:
    """Kill every command that `run_command` runs now (their whole groups); return how many."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for proc in live:
        kill_group(proc.pid)
    for proc in live:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    return len(live)
