"""Run one command so that it and everything it starts die with the process that started us.

    python -I -S guard.py PARENT_PID COMMAND [ARG ...]

Started by `pddlgym_sl.parallel.children.guarded` for programs whose own children we cannot reach:
Fast Downward's driver starts a translator and a search process and gives them no parent-death
signal, so killing the driver (or the worker above it) left them running for as long as their
time limit; a training or evaluation command of a sweep. The guard

- asks Linux to send it SIGTERM when its parent dies (``PR_SET_PDEATHSIG``), and also checks
  the parent's pid four times a second (other systems, and a parent gone before the request);
- becomes a child subreaper (Linux), so that what the command starts stays below it even when
  an intermediate process dies;
- on SIGTERM, SIGINT or SIGHUP, or when its parent is gone, SIGKILLs every process below it and
  dies by the same signal;
- when the command ends, SIGKILLs anything it left behind and exits as the command did (the same
  exit code, or the same signal), so that its caller cannot tell it was there.

It imports nothing but the standard library and is run by path with ``-I -S`` (no site, no user
environment for the interpreter itself; the command gets the full environment), so it starts in
about 10 ms.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_POLL_SECONDS = 0.25
_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _prctl(option: int, value: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux: from /proc; elsewhere none is found). Also what
    `pddlgym_sl.fd` kills below a Fast Downward driver (this module imports only the standard
    library, so the package can import it too)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_below(child: subprocess.Popen | None) -> None:
    """SIGKILL every process below this one (the command first), and reap what became ours."""
    if child is not None:
        with contextlib.suppress(OSError):
            child.kill()
    for _ in range(3):  # a process may fork while we kill: a few passes
        pids = descendants(os.getpid())
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError, OSError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _die_like(status: int) -> None:
    """Exit as a process with Popen returncode `status` did: the code, or the signal (no core file)."""
    if status >= 0:
        os._exit(status)
    number = -status
    with contextlib.suppress(OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.stdout.flush()
    with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP take no handler
        signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
    os.kill(os.getpid(), number)
    os._exit(128 + number)  # a signal whose default action does not end the process


def main(argv: list[str]) -> None:
    parent, command = int(argv[0]), argv[1:]
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != parent:  # the parent died before the request above
        os._exit(128 + signal.SIGTERM)
    child: subprocess.Popen | None = None

    def stop(signum, frame):
        _kill_below(child)
        _die_like(-signum)

    for number in _SIGNALS:
        signal.signal(number, stop)
    try:
        child = subprocess.Popen(command)
    except OSError as exc:
        print(f"guard: cannot start {command[0]}: {exc}", file=sys.stderr)
        os._exit(127)
    while True:
        try:
            status = child.wait(timeout=_POLL_SECONDS)
            break
        except subprocess.TimeoutExpired:
            if os.getppid() != parent:
                stop(signal.SIGTERM, None)
    _kill_below(None)
    _die_like(status)


if __name__ == "__main__":
    main(sys.argv[1:])
