"""Running a sweep's jobs as subprocesses, at most ``width`` at once, in dependency order."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tqdm import tqdm

from agents.apps.sweep.jobs import Job

__all__ = ["CHILD_ENV", "Scheduler"]

CHILD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "PYTHONUNBUFFERED": "1",
}


def _child_env() -> dict[str, str]:
    return {**os.environ, **CHILD_ENV}


class Scheduler:
    """Runs jobs as subprocesses, at most `width` at once, respecting `Job.after`."""

    def __init__(self, jobs: list[Job], width: int, logs: Path, bar: tqdm, quiet: bool) -> None:
        self.waiting = list(jobs)
        self.width = max(1, width)
        self.logs = logs
        self.bar = bar
        self.quiet = quiet
        self.running: dict[str, tuple[Job, subprocess.Popen, Any, float]] = {}
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

    def _start(self, job: Job) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        log = (self.logs / f"{job.name}.log").open("a")
        log.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} $ {shlex.join(job.command)}\n")
        log.flush()
        proc = subprocess.Popen(job.command, stdout=log, stderr=subprocess.STDOUT, env=_child_env())
        (self.logs / f"{job.name}.pid").write_text(f"{proc.pid}\n")
        self.running[job.name] = (job, proc, log, time.perf_counter())
        self.say(f"start  {job.name}")

    def _reap(self) -> None:
        for name, (job, proc, log, start) in list(self.running.items()):
            rc = proc.poll()
            if rc is None:
                continue
            log.close()
            (self.logs / f"{name}.pid").unlink(missing_ok=True)
            del self.running[name]
            seconds = time.perf_counter() - start
            if rc == 0:
                self.succeeded.add(name)
                self.say(f"done   {name} ({seconds:.0f} s)")
            else:
                self.failed[name] = f"exit status {rc}; see {self.logs / (name + '.log')}"
                self.say(f"FAILED {name} (exit status {rc}; log: {self.logs / (name + '.log')})")
            self._finish(job)

    def run(self) -> None:
        try:
            while self.waiting or self.running:
                for job in list(self.waiting):
                    if job.after in self.failed:
                        self.waiting.remove(job)
                        self.failed[job.name] = f"not run: {job.after} failed"
                        self._finish(job)
                    elif len(self.running) < self.width and (
                        job.after is None or job.after in self.succeeded
                    ):
                        self.waiting.remove(job)
                        self._start(job)
                self.bar.set_postfix_str(", ".join(self.running), refresh=False)
                self._reap()
                if self.running:
                    time.sleep(0.2)
        finally:
            self.stop()

    def stop(self) -> None:
        """Terminate the jobs still running (after an interrupt); their work is resumable."""
        for name, (_, proc, log, _) in list(self.running.items()):
            if proc.poll() is None:
                proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} stopped by the sweep (resumable)\n")
            log.close()
            self.say(f"stopped {name}")
            (self.logs / f"{name}.pid").unlink(missing_ok=True)
            del self.running[name]
