"""Unit functions for the tests of `pddlgym_sl.parallel` (module level: worker processes import
them), and the process census the kill tests use: every live process whose environment carries a
marker that only the test's own command (and what it starts) inherits."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

MARKER = "PDDLGYM_SL_TEST_MARKER"


def square(x: int) -> int:
    return x * x


def worker_facts(_: int) -> dict:
    """What a worker sees: its thread settings, whether it leads its own group, its parent."""
    return {
        "omp": os.environ.get("OMP_NUM_THREADS"),
        "numba": os.environ.get("NUMBA_NUM_THREADS"),
        "leader": os.getpgrp() == os.getpid(),
        "pid": os.getpid(),
        "ppid": os.getppid(),
    }


def fail_on(x: int, bad: int) -> int:
    if x == bad:
        raise ValueError(f"unit {x} fails")
    time.sleep(0.05)
    return x


def sleep_for(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


_STATE: dict[str, int] = {}


def init_state(value: int) -> None:
    _STATE["value"] = value
    _STATE["calls"] = _STATE.get("calls", 0) + 1


def read_state(_: int) -> tuple[int, int]:
    return _STATE["value"], _STATE["calls"]


def new_marker() -> dict[str, str]:
    """An environment for a command under test: ours, plus a fresh marker."""
    return {**os.environ, MARKER: uuid.uuid4().hex}


def ours(env: dict[str, str]) -> list[str]:
    """The command lines of the live (not zombie) processes that carry `env`'s marker (Linux)."""
    needle = f"{MARKER}={env[MARKER]}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if needle not in environ.read_bytes().split(b"\0"):
                continue
            state = (environ.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (environ.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state != "Z":
            found.append(f"{environ.parent.name}: {cmdline[:160]}")
    return found


def left_after(env: dict[str, str], since: float, seconds: float = 2.0) -> list[str]:
    """What of ours still runs `seconds` after `since` (polling: nothing left, nothing can start)."""
    while time.time() < since + seconds and ours(env):
        time.sleep(0.05)
    return ours(env)


def as_foreground_job() -> None:
    """``preexec_fn`` of a command that the test interrupts as Ctrl-C would: SIGINT's default
    disposition, as a terminal's foreground job has it. A process started in the background of a
    non-interactive shell inherits SIGINT ignored (POSIX), and Python then installs no
    KeyboardInterrupt handler: a test suite run that way would see Ctrl-C ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
