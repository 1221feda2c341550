"""Running a sweep's jobs (commands) as units of `pddlgym_sl.parallel.run_units`: at most
``width`` at once on local threads (each waits on its command), or as Ray tasks, in dependency
order; a job whose dependency failed is not run."""

from __future__ import annotations

import shlex
import time
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from agents.sweeping.jobs import Job
from pddlgym_sl.parallel import CHILD_ENV, Backend, Unit, child_env, run_command, run_units

__all__ = ["CHILD_ENV", "Scheduler", "run_job"]


def _stamp() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")


def _command(job: Job) -> list[str]:
    """The job's command now: a training that an earlier attempt began (a worker killed mid-run,
    retried) is continued with ``--resume``; the directory of one killed before it wrote
    anything is removed, as `agents.supervised` refuses an existing one."""
    if job.run_dir is None or job.resume is None:
        return job.command
    if (job.run_dir / "args.json").is_file():
        return job.resume
    if job.run_dir.is_dir() and not any(job.run_dir.iterdir()):
        job.run_dir.rmdir()
    return job.command


def run_job(job: Job, logs: Path) -> tuple[int, float]:
    """Run one job's command to its end (a unit; also on a Ray worker), its output appended to
    ``<logs>/<job>.log`` and its pid in ``<logs>/<job>.pid`` while it runs; return its exit
    status and wall seconds."""
    logs.mkdir(parents=True, exist_ok=True)
    pid_file = logs / f"{job.name}.pid"
    start = time.perf_counter()
    with (logs / f"{job.name}.log").open("a") as log:
        command = _command(job)
        log.write(f"# {_stamp()} $ {shlex.join(command)}\n")
        log.flush()
        try:
            status = run_command(
                command, log=log, env=child_env(), on_start=lambda pid: pid_file.write_text(f"{pid}\n")
            )
        except OSError as exc:
            log.write(f"# cannot start the command: {exc}\n")
            status = 127
        finally:
            pid_file.unlink(missing_ok=True)
    return status, time.perf_counter() - start


class Scheduler:
    """Runs jobs as commands, at most `width` at once (or on Ray), respecting `Job.after`."""

    def __init__(
        self,
        jobs: list[Job],
        width: int,
        logs: Path,
        bar: tqdm,
        quiet: bool,
        backend: str = "local",
        address: str | None = None,
    ) -> None:
        self.jobs = list(jobs)
        self.backend = Backend(backend, max(1, width), address)  # type: ignore[arg-type]
        self.logs = logs.absolute()
        self.bar = bar
        self.quiet = quiet
        self.running: set[str] = set()
        self.succeeded: set[str] = set()
        self.failed: dict[str, str] = {}
        self.left = Counter(j.unit for j in jobs)

    def say(self, text: str) -> None:
        if not self.quiet:
            tqdm.write(text)

    def _finish(self, job: Job) -> None:
        self.left[job.unit] -= 1
        if self.left[job.unit] == 0:
            self.bar.update(1)

    def _started(self, unit: Unit) -> None:
        self.running.add(unit.key)
        self.bar.set_postfix_str(", ".join(sorted(self.running)), refresh=False)
        self.say(f"start  {unit.key}")

    def _ended(self, unit: Unit, result: tuple[int, float]) -> str | None:
        job = unit.args[0]
        status, seconds = result
        self.running.discard(job.name)
        self._finish(job)
        if status == 0:
            self.succeeded.add(job.name)
            self.say(f"done   {job.name} ({seconds:.0f} s)")
            return None
        log = self.logs / f"{job.name}.log"
        self.failed[job.name] = f"exit status {status}; see {log}"
        self.say(f"FAILED {job.name} (exit status {status}; log: {log})")
        return self.failed[job.name]

    def run(self) -> None:
        """Run every job; on an interrupt, the jobs still running are killed (resumable) and
        their logs say so."""
        units = [Unit(job.name, (job, self.logs), job.after) for job in self.jobs]
        try:
            outcome = run_units(
                run_job, units, self.backend, on_result=self._ended, threads=True, on_submit=self._started
            )
        except BaseException:
            for name in sorted(self.running):
                with (self.logs / f"{name}.log").open("a") as log:
                    log.write(f"# {_stamp()} stopped by the sweep (resumable)\n")
                (self.logs / f"{name}.pid").unlink(missing_ok=True)
                self.say(f"stopped {name}")
            raise
        for job in self.jobs:
            reason = outcome.failed.get(job.name, "")
            if reason.startswith("not run"):
                self.failed[job.name] = reason
                self._finish(job)
