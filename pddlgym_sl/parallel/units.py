"""Run units of work, resumably, in this process, in local worker processes or threads, or on Ray.

A *unit* is what a command resumes by: one problem's labels, one training run, one evaluation
problem. The unit function does the work and writes its result atomically (or returns it to the
caller's ``on_result``, which writes it); the caller leaves out the units that are finished on
disk, so a re-run after any interruption redoes only the units that were not. `run_units` is the
one loop that every parallel command shares:

- **local** (the default): with ``jobs`` 1 the units run one after the other in this process;
  otherwise in a `concurrent.futures` pool of ``jobs`` worker processes (spawned clean, each in
  its own process group, dying with this process: `children.become_worker`) or, for units that
  only wait on a command (`children.run_command`), threads;
- **ray**: one Ray task per unit on the cluster at ``address`` (`ray_backend`); Ray's scheduler
  decides how many run at once (one CPU each), and reruns a unit whose worker died.

At most ``jobs`` units are in flight locally (nothing waits in a pool's queue), a unit with
``after`` starts once that unit has succeeded (never when it failed), and ``on_result`` runs here,
in the caller's process, as each unit ends. Ctrl-C or SIGTERM (`interrupt.stop_on_signals`)
stops every unit in flight at once (their workers' process groups are killed, Ray tasks
cancelled) and the KeyboardInterrupt goes on to the command, which prints one line.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pddlgym_sl.errors import ConfigError, WorkerError
from pddlgym_sl.extras import require_extra
from pddlgym_sl.parallel.children import become_worker, child_environment, kill_group, stop_commands
from pddlgym_sl.parallel.interrupt import ignore_signals

__all__ = ["BACKENDS", "Backend", "Outcome", "Unit", "WorkerError", "run_units"]

BACKENDS = ("local", "ray")
BackendName = Literal["local", "ray"]


@dataclass(frozen=True)
class Unit:
    """One unit of work: `key` names it (unique among the units of a run), `args` are the unit
    function's arguments, `after` is the key of a unit that must succeed first."""

    key: str
    args: tuple[Any, ...] = ()
    after: str | None = None


@dataclass(frozen=True)
class Backend:
    """Where units run: ``local`` (``jobs`` at once; 1: in this process) or ``ray`` (the Ray
    cluster at ``address``: ``auto``, ``host:port``, or None for ``$RAY_ADDRESS`` or a Ray
    instance of this machine; ``retries``: how often a unit whose worker died is run again)."""

    kind: BackendName = "local"
    jobs: int = 1
    address: str | None = None
    retries: int = 3

    def __post_init__(self) -> None:
        if self.kind not in BACKENDS:
            raise ConfigError(f"unknown backend {self.kind!r}: choose one of {', '.join(BACKENDS)}")
        if self.jobs < 1:
            raise ConfigError(f"--jobs must be > 0, not {self.jobs}")
        if self.address is not None and self.kind != "ray":
            raise ConfigError("--address needs --backend ray")
        if self.retries < 0:
            raise ConfigError(f"retries must be >= 0, not {self.retries}")
        if self.kind == "ray":  # before any work: the [cluster] extra must be there
            require_extra("cluster", "--backend ray")


@dataclass
class Outcome:
    """What `run_units` did: the keys of the units that succeeded, and of those that failed or were
    not run (key -> reason), in the order they ended."""

    succeeded: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


class _Executor(Protocol):
    width: int | None  # units in flight at most (None: as many as are ready)

    def submit(self, unit: Unit) -> Any: ...

    def wait(self, handles: Sequence[Any]) -> list[Any]: ...

    def result(self, handle: Any) -> Any: ...

    def stop(self) -> None: ...

    def close(self) -> None: ...


class _Inline:
    """Units one after the other in this process (``jobs`` 1)."""

    width = 1

    def __init__(self, fn: Callable, initializer: Callable | None, initargs: tuple) -> None:
        self.fn = fn
        if initializer is not None:
            initializer(*initargs)

    def submit(self, unit: Unit) -> cf.Future:
        future: cf.Future = cf.Future()
        try:
            future.set_result(self.fn(*unit.args))
        except Exception as exc:  # handed to the loop like a worker's exception
            future.set_exception(exc)
        return future

    def wait(self, handles):
        return list(handles)

    def result(self, handle):
        return handle.result()

    def stop(self) -> None:
        stop_commands()

    def close(self) -> None:
        pass


def _start_worker(parent: int, initializer: Callable | None, initargs: tuple) -> None:
    """Initializer of a local pool's worker processes (see `children.become_worker`)."""
    become_worker(parent)
    if initializer is not None:
        initializer(*initargs)


class _Pool:
    """Units in a `concurrent.futures` pool: spawned worker processes, or threads for units that
    wait on commands."""

    def __init__(
        self, fn: Callable, jobs: int, threads: bool, initializer: Callable | None, initargs: tuple
    ) -> None:
        self.fn, self.width, self.threads = fn, jobs, threads
        if threads:
            if initializer is not None:
                initializer(*initargs)
            self.pool: cf.Executor = cf.ThreadPoolExecutor(jobs, thread_name_prefix="unit")
        else:
            # spawn: workers start clean (numba, torch and tqdm are not fork-safe everywhere)
            self.pool = cf.ProcessPoolExecutor(
                jobs,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(os.getpid(), initializer, initargs),
            )

    def submit(self, unit: Unit) -> cf.Future:
        with child_environment():  # workers are spawned on submit and inherit it
            return self.pool.submit(self.fn, *unit.args)

    def wait(self, handles):
        done, _ = cf.wait(handles, return_when=cf.FIRST_COMPLETED)
        return list(done)

    def result(self, handle: cf.Future):
        try:
            return handle.result()
        except BrokenProcessPool:
            raise WorkerError(
                "a worker process died (killed, out of memory, or unable to start: see above); "
                "finished units are kept: run the same command again to resume"
            ) from None

    def stop(self) -> None:
        if self.threads:
            stop_commands()
        else:
            for process in list(getattr(self.pool, "_processes", {}).values()):
                if process.pid is not None:
                    kill_group(process.pid)
        self.pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def _executor(
    fn: Callable, backend: Backend, threads: bool, initializer: Callable | None, initargs: tuple
) -> _Executor:
    if backend.kind == "ray":
        from pddlgym_sl.parallel.ray_backend import RayExecutor

        return RayExecutor(fn, backend, initializer, initargs)
    if backend.jobs == 1:
        return _Inline(fn, initializer, initargs)
    return _Pool(fn, backend.jobs, threads, initializer, initargs)


def run_units(
    fn: Callable[..., Any],
    units: Sequence[Unit],
    backend: Backend = Backend(),
    *,
    on_result: Callable[[Unit, Any], bool | str | None] | None = None,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    threads: bool = False,
    keep_going: Callable[[], bool] | None = None,
    on_submit: Callable[[Unit], None] | None = None,
) -> Outcome:
    """Run ``fn(*unit.args)`` for every unit on `backend`; return what succeeded and failed.

    `fn`, `initializer` and the arguments must be importable and picklable for worker processes
    and Ray (module-level functions, plain data). `initializer(*initargs)` runs once in each
    process that runs units (here for ``jobs`` 1 and threads). `on_result(unit, result)` runs in
    this process as each unit ends; returning False or a reason (a string) marks the unit failed,
    and the units ``after`` it are not run. `threads`: local units run in threads (units that
    wait on a command).
    `keep_going()`, asked before each unit starts, can end the run early (units not started are
    left out of the outcome); `on_submit(unit)` is called as each unit is handed to the backend
    (locally: as it starts). An exception in a unit stops the others and is raised here; so is
    KeyboardInterrupt (Ctrl-C, or SIGTERM under `interrupt.stop_on_signals`), after every unit in
    flight has been stopped."""
    keys = {unit.key for unit in units}
    if len(keys) != len(units):
        raise ValueError("unit keys must be unique")
    unknown = {unit.after for unit in units if unit.after is not None} - keys
    if unknown:
        raise ValueError(f"units depend on unknown units: {sorted(unknown)}")
    outcome = Outcome()
    if not units:
        return outcome
    executor = _executor(fn, backend, threads, initializer, initargs)
    waiting = list(units)
    in_flight: dict[Any, Unit] = {}
    try:
        while waiting or in_flight:
            for unit in list(waiting):
                if unit.after in outcome.failed:
                    waiting.remove(unit)
                    outcome.failed[unit.key] = f"not run: {unit.after} failed"
                    continue
                ready = unit.after is None or unit.after in outcome.succeeded
                room = executor.width is None or len(in_flight) < executor.width
                if not (ready and room):
                    continue
                if keep_going is not None and not keep_going():
                    waiting.clear()
                    break
                waiting.remove(unit)
                if on_submit is not None:
                    on_submit(unit)
                in_flight[executor.submit(unit)] = unit
            if not in_flight:
                if waiting:
                    raise ValueError(f"units wait on each other: {[u.key for u in waiting]}")
                continue
            for handle in executor.wait(list(in_flight)):
                unit = in_flight.pop(handle)
                result = executor.result(handle)
                verdict = on_result(unit, result) if on_result is not None else None
                if verdict is False or isinstance(verdict, str):
                    outcome.failed[unit.key] = verdict or "failed"
                else:
                    outcome.succeeded.append(unit.key)
    except BaseException:
        with ignore_signals():
            executor.stop()
        raise
    with ignore_signals():
        executor.close()
    return outcome
