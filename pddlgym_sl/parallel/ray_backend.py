"""The Ray backend of `run_units`: one Ray task per unit (``pip install 'pddlgym-sl[cluster]'``).

Imported only for ``--backend ray``; nothing else in the package needs Ray. The driver joins the
cluster at the backend's address (``ray.init``: ``auto`` or ``host:port``; without one,
``$RAY_ADDRESS`` or a Ray instance started on this machine for the run) and sends each unit as a
task of one CPU, run in the driver's working directory. The workers' environment gets
`children.CHILD_ENV` (one thread each, as local workers) and this process's ``PYTHONPATH`` when
it has one. Each worker process runs the unit function's initializer once before its first unit.

Units read their inputs and write their results by path, so every node must see the same files
at the same paths (a shared file system), and the same Python environment.

Failures: a worker that dies (killed, out of memory, its node lost) has its unit run again by Ray,
up to ``Backend.retries`` times; units write their results atomically and overwrite what a killed
attempt left, so a rerun unit is done once. An exception raised by the unit function is not
retried: it comes back to the driver, as it would locally. Ctrl-C or SIGTERM of the driver
cancels every task in flight (their worker processes are killed, and the commands they started
with them) and disconnects.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from pddlgym_sl.errors import ConfigError, WorkerError
from pddlgym_sl.extras import require_extra
from pddlgym_sl.parallel.children import CHILD_ENV
from pddlgym_sl.parallel.interrupt import install_sigterm, restore

__all__ = ["RayExecutor", "runtime_env", "units_at_once_on_this_node"]

_initialized_run: str | None = None  # in a worker: the token of the run whose initializer has run


def _run_unit(
    token: str, cwd: str, fn: Callable, initializer: Callable | None, initargs: tuple, args: tuple
) -> Any:
    """A Ray task: in the driver's working directory (relative paths mean the same), run the run's
    initializer once per worker process, then the unit."""
    global _initialized_run
    if os.getcwd() != cwd:
        os.chdir(cwd)
    if token != _initialized_run:
        if initializer is not None:
            initializer(*initargs)
        _initialized_run = token
    return fn(*args)


def units_at_once_on_this_node() -> int | None:
    """In a Ray worker: how many units its node runs at once (its CPUs: each unit takes one), so
    that a worker can take its share of the node's memory; None outside a Ray worker."""
    import sys

    ray = sys.modules.get("ray")  # a process that never imported Ray is no Ray worker
    if ray is None or not ray.is_initialized():
        return None
    node = ray.get_runtime_context().get_node_id()
    cpus = next((n["Resources"].get("CPU", 1) for n in ray.nodes() if n["NodeID"] == node), 1)
    return max(1, int(cpus))


def check_reachable(address: str | None) -> None:
    """`ConfigError` when nothing listens at a ``host:port`` address (Ray itself retries such an
    address for minutes); other forms (``auto``, ``ray://``) are left to Ray."""
    if address is None or "://" in address or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot join the Ray cluster at {address}: nothing answers ({exc})") from None


def runtime_env() -> dict[str, Any]:
    """The workers' environment: `CHILD_ENV`, and ``PYTHONPATH`` when this process has one."""
    env = dict(CHILD_ENV)
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return {"env_vars": env}


class RayExecutor:
    """Units as Ray tasks (see the module docstring); the executor of `run_units` for ``ray``."""

    width = None  # Ray's scheduler queues the tasks: every ready unit is submitted

    def __init__(self, fn: Callable, backend, initializer: Callable | None, initargs: tuple) -> None:
        require_extra("cluster", "--backend ray")
        import ray

        self.ray = ray
        self.fn, self.initializer, self.initargs = fn, initializer, initargs
        self.token = uuid.uuid4().hex
        self.cwd = os.getcwd()
        self.owned = not ray.is_initialized()
        if self.owned:
            check_reachable(backend.address)
            try:
                ray.init(
                    address=backend.address,
                    runtime_env=runtime_env(),
                    logging_level=logging.WARNING,
                    log_to_driver=False,
                    include_dashboard=False,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                where = backend.address or os.environ.get("RAY_ADDRESS") or "this machine"
                raise ConfigError(f"cannot join the Ray cluster at {where}: {first}") from None
        # ray.init sets a SIGTERM handler that exits at once: ours stops the tasks first
        self.previous = install_sigterm()
        options = {"num_cpus": 1, "max_retries": backend.retries, "retry_exceptions": False}
        self.remote = ray.remote(**options)(_run_unit)
        self.retries = backend.retries
        self.handles: set[Any] = set()

    def submit(self, unit) -> Any:
        handle = self.remote.remote(self.token, self.cwd, self.fn, self.initializer, self.initargs, unit.args)
        self.handles.add(handle)
        return handle

    def wait(self, handles: Sequence[Any]) -> list[Any]:
        ready, _ = self.ray.wait(list(handles), num_returns=1)
        more, _ = self.ray.wait(list(handles), num_returns=len(handles), timeout=0)
        return list(dict.fromkeys([*ready, *more]))

    def result(self, handle: Any) -> Any:
        from ray.exceptions import RayError, RayTaskError

        self.handles.discard(handle)
        try:
            return self.ray.get(handle)
        except RayTaskError as exc:  # the unit function raised: raise its exception here
            cause = getattr(exc, "cause", None)
            if isinstance(cause, BaseException):
                raise cause from None
            raise
        except RayError as exc:  # the worker died more often than Ray retries, or its node was lost
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise WorkerError(
                f"a unit's Ray worker died {1 + self.retries} times ({first}); finished units are "
                "kept: run the same command again to resume"
            ) from None

    def stop(self) -> None:
        try:
            for handle in list(self.handles):
                self.ray.cancel(handle, force=True)
        finally:
            self.close()

    def close(self) -> None:
        restore(self.previous)
        if self.owned and self.ray.is_initialized():
            self.ray.shutdown()
