"""Load a task under a time and a memory limit, as planning competitions count grounding.

`load_task_bounded` parses, grounds (Fast Downward's translator, in process) and compiles a task
in a forked child process and hands the `CompiledTask` back through a pipe. Why a child: the
translator is Python that cannot be stopped from outside at a safe point (an exception raised by
a timer signal could land in the middle of restoring the address-space cap, or leave the
translator's module state half-built), whereas a child can be killed at its deadline and holds
its own address-space cap (`pddlgym_sl.memory.address_space_cap`), so grounding that outgrows
the memory limit fails in the child and leaves this process as it was. Fast Downward runs its
translator as a process of its own under the same limits for the same reasons.

The price is a fork and a pickle of the task (about 0.8 s for a task of 476k actions, 79 MB):
worth it only where the limits matter (``agents.evaluate --limits-cover-grounding``). Linux and
macOS only (fork); elsewhere the task is loaded in process without the limits.
"""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from pddlgym_sl.errors import GroundingError, InputLimitError, PDDLError, TimeLimitError
from pddlgym_sl.memory import address_space_cap, memory_limit_bytes
from pddlgym_sl.task import CompiledTask, load_task

__all__ = ["load_task_bounded"]


def _load_in_child(send, domain_file: str, problem_file: str, memory_limit: float | None) -> None:
    """The child: load under the memory cap, send ``("task", task)`` or ``("error", ...)``."""
    try:
        with address_space_cap(memory_limit_bytes(memory_limit)):
            task = load_task(domain_file, problem_file)
        send.send(("task", task))
    except PDDLError as exc:
        send.send(("error", type(exc), exc.cause, exc.file, exc.line))
    except MemoryError:
        send.send(("error", InputLimitError, "loading the task ran out of memory", problem_file, None))
    finally:
        send.close()


def load_task_bounded(
    domain_file: str | Path,
    problem_file: str | Path,
    time_limit: float | None = None,
    memory_limit: float | None = None,
) -> CompiledTask:
    """`pddlgym_sl.load_task` within `time_limit` seconds of wall clock (until the child starts
    sending the task back) and `memory_limit` MB more than the forked child started with (None:
    the default search limit, `pddlgym_sl.memory.default_memory_limit`).

    Raises:
        TimeLimitError: the task was not loaded in time (the child is killed).
        InputLimitError: grounding ran out of the memory it was given.
        PDDLError: whatever `load_task` raises on bad input, as it raises it.
    """
    domain_file, problem_file = str(domain_file), str(problem_file)
    if "fork" not in multiprocessing.get_all_start_methods():
        return load_task(domain_file, problem_file)
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(
        target=_load_in_child, args=(send, domain_file, problem_file, memory_limit), daemon=True
    )
    deadline = None if time_limit is None else time.monotonic() + time_limit
    child.start()
    send.close()
    try:
        if not receive.poll(None if deadline is None else max(0.0, deadline - time.monotonic())):
            raise TimeLimitError(f"loading and grounding took more than {time_limit:g} s", file=problem_file)
        try:
            message = receive.recv()
        except EOFError:  # the child died without a word: killed (by the kernel's OOM killer, ...)
            child.join()
            raise GroundingError(
                f"the process loading the task died (exit status {child.exitcode})", file=problem_file
            ) from None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    if message[0] == "task":
        return message[1]
    kind, cause, file, line = message[1:]
    raise kind(cause, file=file, line=line)
