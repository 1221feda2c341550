"""Long searches, ours beside Fast Downward's: evaluations per second and peak resident memory.

`benchmarks/ipc_core.py --part long` runs these on `LONG_TASKS`. Each planner runs in a process of
its own, so that its peak resident set (``ru_maxrss``) is its own:

- Fast Downward: its translator, then its search binary (``downward``, from the
  ``up-fast-downward`` wheel) on the translator's output, timed and measured by ``wait4``; the
  evaluations, expansions and search time come from its log, the plan from ``sas_plan``. Its
  search's own ``max_time`` limits it, so a search that runs out of time still reports what it
  did (a CPU-time limit kills it silently; one well above ``max_time`` stays as a backstop).
Rates are evaluations per second of CPU time, the search alone on both sides (Fast Downward's log
reports its search time in CPU seconds; ours is ``time.process_time`` around the search), so that
a busy machine slows both alike.

- ours: a fresh Python process that loads the task (our reader, the translator in process),
  runs a short warm-up search (the kernels come from numba's cache; a cold cache would add the
  compiler's own peak, so the benchmark warms it first in another process), then the search
  with no evaluation cap, or, where Fast Downward's search ran out of time (a *capped* long
  search), capped at the evaluations Fast Downward made: the two searches then hold the same
  states when they stop, and their memory is compared at that point. Its peak includes the
  interpreter, numpy, numba and the translator's objects (about 170 MB before the first state),
  which Fast Downward's search binary does not have; the baseline is printed beside it.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from pddlgym_sl.fd import driver_path

CONFIGS = {
    "gbfs": ("hff", "eager_greedy([ff()], max_time={})"),
    "astar": ("lmcut", "astar(lmcut(), max_time={})"),
}
"""Search name -> (our heuristic, Fast Downward's search configuration with its time limit)."""


def _search_binary() -> Path:
    return driver_path().parent / "builds" / "release" / "bin" / "downward"


def _number(pattern: str, log: str) -> float | None:
    found = re.findall(pattern, log)
    return float(found[-1]) if found else None


def fast_downward(domain_file: Path, problem_file: Path, search: str, time_limit: float) -> dict:
    """Fast Downward's run: solved, out_of_time, evaluations, expansions, seconds (search time),
    plan, rss_mb, base_mb; a task its translator does not ground within `time_limit` (wall clock,
    some hard tasks take hours) is a run that did not search (``"translated": false``)."""
    with tempfile.TemporaryDirectory() as tmp:
        translate = [sys.executable, "-m", "fast_downward.translate", str(domain_file), str(problem_file)]
        try:
            subprocess.run(
                [*translate, "--sas-file", "output.sas"],
                cwd=tmp,
                check=True,
                capture_output=True,
                timeout=time_limit,
            )
        except subprocess.TimeoutExpired:
            return {"translated": False, "solved": False, "out_of_time": False, "evaluations": None}
        log_file = Path(tmp) / "log"
        cpu_limit = int(time_limit) + 60  # a backstop: the search's max_time stops it first
        with open(Path(tmp) / "output.sas") as sas, open(log_file, "w") as log:
            proc = subprocess.Popen(
                [str(_search_binary()), "--search", CONFIGS[search][1].format(time_limit)],
                stdin=sas,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=tmp,
                # a CPU-time limit, as Fast Downward's driver sets one: a busy machine slows the
                # search's wall clock, not its CPU time
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 5)),
            )
        timer = threading.Timer(20 * time_limit, os.kill, (proc.pid, signal.SIGKILL))  # a hung run
        timer.start()
        _, _, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = 0
        log = log_file.read_text()
        plan_file = Path(tmp) / "sas_plan"
        plan = None
        if plan_file.exists():
            plan = [line.strip()[1:-1] for line in plan_file.read_text().splitlines() if line.startswith("(")]
    evaluations = _number(r"Evaluated (\d+) state", log)
    start = re.search(r"\[t=[^,]*, (\d+) KB\] (?:Initial heuristic value|New best heuristic value)", log)
    return {
        "solved": "Solution found" in log,
        "out_of_time": "Time limit reached" in log,
        "evaluations": int(evaluations) if evaluations is not None else None,
        "expansions": int(_number(r"Expanded (\d+) state", log) or 0),
        "seconds": _number(r"Search time: ([\d.]+)s", log),
        "plan": plan,
        # its own "Peak memory" line: wait4's ru_maxrss counts the forked Python before exec too
        "rss_mb": (_number(r"Peak memory: (\d+) KB", log) or usage.ru_maxrss) / 1024,
        "base_mb": int(start.group(1)) / 1024 if start else None,  # when the search starts
    }


_OURS = """
import json, resource, sys, time
from pddlgym_sl import load_task
from pddlgym_sl.memory import rss_bytes
from pddlgym_sl.search import SEARCHES
from pddlgym_sl.search.warm_up import warm_up
domain, problem, search, heuristic, limit, cap = sys.argv[1:7]
task = load_task(domain, problem)
warm_up(SEARCHES[search], task, heuristic)
base = rss_bytes()
peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
cpu = time.process_time()
r = SEARCHES[search](task, heuristic, max_evaluations=int(cap) or None, time_limit=float(limit))
cpu = time.process_time() - cpu
print(json.dumps({"solved": r.solved, "status": r.status, "evaluations": r.evaluations,
                  "expansions": r.expansions, "seconds": cpu, "wall_seconds": r.seconds,
                  "plan": r.plan if r.solved else None,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "base_mb": base / 2**20, "peak_before_mb": peak_before}))
"""


def ours(
    domain_file: Path, problem_file: Path, search: str, time_limit: float, max_evaluations: int | None = None
) -> dict:
    """Our run, in a fresh process (keys as `fast_downward`'s, plus status and base_mb), capped at
    `max_evaluations` when given."""
    args = [str(domain_file), str(problem_file), search, CONFIGS[search][0], str(time_limit)]
    args.append(str(max_evaluations or 0))
    subprocess.run([sys.executable, "-c", _OURS, *args[:4], "0.001", "0"], check=True, capture_output=True)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _OURS, *args], check=True, capture_output=True, text=True
    ).stdout
    result = json.loads(out)
    result["wall"] = time.perf_counter() - start
    return result


def _plan_names(plan: list[str] | None) -> list[str] | None:
    """Action names without parentheses, lower case (Fast Downward's sas_plan format)."""
    return None if plan is None else [a.strip("()").lower() for a in plan]


def compare(
    domain_file: Path, problem_file: Path, search: str, time_limit: float, fd: dict | None = None
) -> dict:
    """Both runs on one task (Fast Downward's `fd` when given: a run just made, by `select`), and
    whether they searched the same nodes and returned the same plan. Where Fast Downward's search
    ran out of time, ours is capped at its evaluations; it then counts one expansion more (the
    node it took from the open list before the cap stopped it, which Fast Downward's clock,
    checked between expansions, never reaches), and neither has a plan."""
    if fd is None:
        fd = fast_downward(domain_file, problem_file, search, time_limit)
    cap = fd["evaluations"] if fd["out_of_time"] else None
    mine = ours(domain_file, problem_file, search, 20 * (fd["seconds"] or time_limit) + 60, cap)  # wall clock
    if cap is None:
        same = (fd["evaluations"], fd["expansions"]) == (mine["evaluations"], mine["expansions"])
    else:
        same = mine["evaluations"] == cap and mine["expansions"] - fd["expansions"] in (0, 1)
    return {
        "fd": {k: v for k, v in fd.items() if k != "plan"},
        "ours": {k: v for k, v in mine.items() if k != "plan"},
        "same_nodes": same,
        "same_plan": _plan_names(mine["plan"]) == _plan_names(fd["plan"]),
    }


def candidates(domain_dir: Path, difficulties: tuple[str, ...]) -> list[Path]:
    """The tasks of `difficulties` in order of size (as the sets are numbered: p01, p02, ...)."""
    return [p for d in difficulties for p in sorted((domain_dir / d).glob("*.pddl"))]


def select(
    domain_dir: Path,
    search: str,
    tasks: list[Path],
    evaluations: tuple[int, int] = (1_000_000, 10_000_000),
    time_limit: float = 90,
    run_fd=fast_downward,
) -> tuple[dict | None, dict | None, bool]:
    """A task on which Fast Downward's search evaluates `evaluations` states (1M to 10M) within
    `time_limit` CPU seconds, found by bisection over `tasks` (ordered by size, so that the search
    grows roughly along them), and that run of Fast Downward; ``(None, None, too_small)`` when no
    probe lands in the range, `too_small` when even the last task needs fewer evaluations (a
    larger set may hold one). A task Fast Downward solves is preferred; failing one, the largest
    task on which its search ran out of time after evaluating that many states (a capped long
    search, ``"capped": true``). Each probe is printed; `run_fd` runs one (`fast_downward`'s
    signature: a caller may keep its runs, so that an interrupted selection resumes)."""
    lo, hi = 0, len(tasks) - 1
    capped = None
    while lo <= hi:
        mid = (lo + hi) // 2 if lo > 0 or hi < len(tasks) - 1 else hi  # the largest task first
        run = run_fd(domain_dir / "domain.pddl", tasks[mid], search, time_limit)
        n = run["evaluations"] if run["solved"] else None
        name = str(tasks[mid].relative_to(domain_dir))
        took = "unsolved" if n is None else f"{n:,} evaluations in {run['seconds']:.1f} s"
        if run["out_of_time"]:
            took = f"out of time after {run['evaluations']:,} evaluations"
        if not run.get("translated", True):
            took = f"not grounded within {time_limit:.0f} s"
        print(f"  probe {domain_dir.name}/{name}: {took}", flush=True)
        if n is not None and evaluations[0] <= n <= evaluations[1]:
            return {"task": name, "fd_seconds": run["seconds"], "fd_evaluations": n}, run, False
        if run["out_of_time"] and capped is None and run["evaluations"] >= evaluations[0]:
            limit = time_limit
            if run["evaluations"] > evaluations[1]:  # the same task, stopped sooner
                limit = time_limit * 0.8 * evaluations[1] / run["evaluations"]
                run = run_fd(domain_dir / "domain.pddl", tasks[mid], search, limit)
                print(f"  probe {domain_dir.name}/{name}, {limit:.0f} s: {run['evaluations']:,}", flush=True)
            if run["out_of_time"] and evaluations[0] <= run["evaluations"] <= evaluations[1]:
                entry = {"task": name, "fd_seconds": run["seconds"], "fd_evaluations": run["evaluations"]}
                capped = ({**entry, "capped": True, "time_limit": limit}, run)
        if n is not None and n < evaluations[0]:
            lo = mid + 1
        else:
            hi = mid - 1
    if capped is not None:
        return (*capped, False)
    return None, None, lo >= len(tasks)
