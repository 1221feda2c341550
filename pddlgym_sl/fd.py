"""Fast Downward as a subprocess: run a search configuration and parse its log and plan.

Fast Downward is the reference planner of the paper (optimal plans by A* with LM-cut) and the
reference implementation of LM-cut. The planner ships inside the ``up-fast-downward`` wheel; this
module only locates the wheel's driver script ``fast-downward.py`` (without importing
``up_fast_downward``, which needs ``unified_planning``) and runs it with the current Python::

    run = run_fast_downward("domain.pddl", "problem.pddl", "astar(lmcut())", time_limit=60)
    run.plan, run.cost, run.expansions, run.initial_h["lmcut"]

Every run happens in a fresh temporary directory (the driver writes ``output.sas`` and
``sas_plan`` to its working directory), which is removed afterwards whatever happens; its name
carries our process id, so that the directory of a process that was killed (``kill -9`` leaves
no chance to clean up) is removed by the next run. The planner's processes stay in our process
group, so killing the group (Ctrl-C, ``kill -9 -PGID``, a job scheduler) ends them too; and they
run under `pddlgym_sl.parallel.children.guarded`, which kills the driver, its translator and its
search as soon as our process dies, however it dies (the driver gives its components no such
signal: they outlived a killed caller by up to their time limit). The wall-clock guard
kills the driver and every process under it. Failures
that are the planner's business (timeout, out of memory, unsolvable) are reported in the
returned `FDRun`; a missing planner, unreadable input or a crash raises `SolverError`.
Set the environment variable ``PDDLGYM_SL_FD_DRIVER`` to the path of a ``fast-downward.py`` to
use another Fast Downward build.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pddlgym_sl.errors import SolverError
from pddlgym_sl.io import process_alive
from pddlgym_sl.parallel.children import guarded
from pddlgym_sl.parallel.guard import descendants

DRIVER_ENV = "PDDLGYM_SL_FD_DRIVER"
_PACKAGE = "up_fast_downward"
_INSTALL_HINT = "install the pip package `up-fast-downward` (pip install up-fast-downward)"

# Fast Downward exit codes (driver/returncodes.py of the planner).
PLAN_FOUND = frozenset({0, 1, 2, 3})
UNSOLVABLE = frozenset({10, 11})
_OUT_OF_TIME = frozenset({2, 3, 21, 23, 24})
_OUT_OF_MEMORY = frozenset({1, 3, 20, 22, 24})
_EXPECTED = PLAN_FOUND | UNSOLVABLE | _OUT_OF_TIME | _OUT_OF_MEMORY | {12, 13}
_SIGXCPU, _SIGKILL = 24, 9
_MEMORY_FAILURE = re.compile(r"MemoryError|bad_alloc|Cannot allocate memory|failed to map segment", re.I)


def _killed_by(returncode: int) -> int | None:
    """Signal that killed the planner or one of its components, if any: the driver itself shows a
    negative code; a component killed by signal n makes the driver exit with ``256 - n``."""
    if returncode < 0:
        return -returncode
    if returncode > 128:
        return 256 - returncode
    return None


_NUMBER = r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|infinity|inf)"
_INITIAL_H = re.compile(rf"Initial heuristic value for (.+?): {_NUMBER}\s*$", re.M | re.I)
_DEAD_END = re.compile(r"Initial state is a dead end", re.I)


@dataclass(frozen=True)
class FDRun:
    """Outcome of one Fast Downward run.

    Attributes:
        returncode: the driver's exit code (see Fast Downward's exit-code documentation); -9 when
            the wall-clock guard of `run_fast_downward` had to kill the planner.
        log: the planner's stdout and stderr.
        plan: action names of the (last, best) plan found, e.g. ``["(board c0 l1)", ...]``, or None.
        cost: plan cost, or None without a plan.
        evaluations, expansions, generated: search statistics ("Evaluated N state(s).",
            "Expanded N state(s).", "Generated N state(s).").
        search_time: "Search time: Xs" in seconds.
        initial_h: initial heuristic value per heuristic name (``inf`` for a dead end).
        timed_out, out_of_memory: the planner hit the time or memory limit.
        unsolvable: the planner proved the task unsolvable.
        wall_time: seconds the subprocess ran.
    """

    returncode: int
    log: str
    plan: list[str] | None
    cost: float | None
    evaluations: int | None
    expansions: int | None
    search_time: float | None
    generated: int | None = None
    initial_h: dict[str, float] = field(default_factory=dict)
    timed_out: bool = False
    out_of_memory: bool = False
    unsolvable: bool = False
    wall_time: float = 0.0

    @property
    def solved(self) -> bool:
        return self.plan is not None


def driver_path() -> Path:
    """Path of Fast Downward's ``fast-downward.py``; `SolverError` naming the pip package if absent."""
    override = os.environ.get(DRIVER_ENV)
    if override:
        path = Path(override)
        if not path.is_file():
            raise SolverError(f"{DRIVER_ENV}={override} is not a file")
        return path
    try:
        spec = importlib.util.find_spec(_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / "downward" / "fast-downward.py"
        if path.is_file():
            return path
    raise SolverError(f"Fast Downward not found: {_INSTALL_HINT}")


@lru_cache(maxsize=1)
def _version_of(driver: Path) -> str | None:
    try:
        text = (driver.parent / "driver" / "version.py").read_text()
    except OSError:
        return None
    match = re.search(r"__version__\s*=\s*[\"']([^\"']+)", text)
    return match.group(1) if match else None


def fast_downward_version() -> str | None:
    """Version of the Fast Downward release in use (e.g. ``"26.6"``), None if unknown."""
    return _version_of(driver_path())


def _limit_args(time_limit: float | None, memory_limit_mb: int | None) -> list[str]:
    args = []
    if time_limit is not None:
        if time_limit <= 0:
            raise SolverError(f"time_limit must be positive, got {time_limit}")
        # The driver takes whole seconds of CPU time.
        args += ["--overall-time-limit", f"{max(1, math.ceil(time_limit))}s"]
    if memory_limit_mb is not None:
        if memory_limit_mb <= 0:
            raise SolverError(f"memory_limit_mb must be positive, got {memory_limit_mb}")
        args += ["--overall-memory-limit", f"{int(memory_limit_mb)}M"]
    return args


def _read_plan(workdir: Path) -> tuple[list[str] | None, float | None]:
    """Parse the last plan file the driver wrote (``sas_plan``, or ``sas_plan.N`` for anytime
    configurations: the last one is the best)."""
    files = sorted(
        workdir.glob("sas_plan*"),
        key=lambda p: int(p.suffix[1:]) if p.suffix[1:].isdigit() else -1,
    )
    if not files:
        return None, None
    plan: list[str] = []
    cost = None
    for line in files[-1].read_text().splitlines():
        line = line.strip()
        if line.startswith(";"):
            match = re.search(r"cost\s*=\s*" + _NUMBER, line, re.I)
            if match:
                cost = float(match.group(1))
        elif line:
            plan.append("(" + " ".join(line.strip("()").lower().split()) + ")")
    return plan, (float(len(plan)) if cost is None else cost)


def _last_number(pattern: str, log: str, kind=float):
    matches = re.findall(pattern, log, flags=re.M)
    return kind(matches[-1]) if matches else None


def _to_float(text: str) -> float:
    return math.inf if text.lower() in ("infinity", "inf") else float(text)


def parse_initial_h(log: str) -> dict[str, float]:
    """``{"lmcut": 6.0}`` from "Initial heuristic value for lmcut: 6" lines (``inf`` when the
    initial state is reported as a dead end)."""
    values = {name.strip(): _to_float(value) for name, value in _INITIAL_H.findall(log)}
    if not values and _DEAD_END.search(log):
        values["dead_end"] = math.inf
    return values


def run_fast_downward(
    domain_file: str | Path,
    problem_file: str | Path,
    search: str,
    *,
    time_limit: float | None = None,
    memory_limit_mb: int | None = None,
    driver_args: tuple[str, ...] = (),
) -> FDRun:
    """Run Fast Downward's ``--search`` configuration `search` on a domain/problem pair.

    Args:
        domain_file, problem_file: PDDL files (checked to exist).
        search: a search configuration, e.g. ``"astar(lmcut())"``.
        time_limit: overall CPU-time limit of translator plus search, in seconds (rounded up to
            whole seconds, as the driver requires; the driver's own start-up counts, so a limit
            of 1 s can stop the translator before it starts). A wall-clock guard of three times
            the limit plus 30 s kills the planner if it does not stop by itself.
        memory_limit_mb: overall address-space limit in MiB.
        driver_args: extra driver options placed before the input files (e.g. ``("--debug",)``).

    Returns:
        An `FDRun`. Timeouts, memory outs and unsolvable tasks are flags on the result.

    Raises:
        SolverError: Fast Downward is not installed, an input file is missing, or the planner
            failed (translator or search error, unexpected exit code).
    """
    driver = driver_path()
    domain_path, problem_path = Path(domain_file).resolve(), Path(problem_file).resolve()
    for path in (domain_path, problem_path):
        if not path.is_file():
            raise SolverError(f"input file not found: {path}")
    cmd = [
        sys.executable,
        str(driver),
        *_limit_args(time_limit, memory_limit_mb),
        *driver_args,
        str(domain_path),
        str(problem_path),
        "--search",
        search,
    ]
    guard = None if time_limit is None else 3 * time_limit + 30
    _remove_orphaned_workdirs()
    with tempfile.TemporaryDirectory(prefix=f"{_WORKDIR_PREFIX}{os.getpid()}_") as tmp:
        workdir = Path(tmp)
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(
                guarded(cmd),
                cwd=workdir,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
            )
        except OSError as exc:
            raise SolverError(f"cannot start Fast Downward ({exc})") from None
        killed = False
        try:
            log, _ = proc.communicate(timeout=guard)
        except subprocess.TimeoutExpired:
            killed = True
            _kill_tree(proc)
            log, _ = proc.communicate()
        except BaseException:
            _kill_tree(proc)
            proc.communicate()
            raise
        wall = time.perf_counter() - start
        returncode = -9 if killed else proc.returncode
        plan, plan_cost = _read_plan(workdir)

    signal_number = None if killed else _killed_by(returncode)
    # The CPU-time limit ends a component with SIGXCPU (SIGKILL one second later); a limit so
    # small that nothing is left after the driver's own start-up kills the translator at once.
    limit_hit = signal_number == _SIGXCPU or (signal_number == _SIGKILL and time_limit is not None)
    # Under a memory limit too small for a component to start, it dies with a critical error (the
    # translator's MemoryError gives exit code 30) instead of Fast Downward's out-of-memory code.
    memory_hit = (
        memory_limit_mb is not None
        and returncode not in _EXPECTED
        and _MEMORY_FAILURE.search(log) is not None
    )
    if not killed and not limit_hit and not memory_hit and returncode not in _EXPECTED:
        lines = [line for line in log.strip().splitlines() if line.strip() and not line.startswith("INFO")]
        tail = "\n".join(lines[-12:])
        raise SolverError(
            f"Fast Downward failed with exit code {returncode} on {problem_path.name} "
            f"(search {search!r}):\n{tail}",
            file=problem_path,
        )
    cost = _last_number(r"Plan cost: " + _NUMBER, log)
    if plan is not None and cost is None:
        cost = plan_cost
    return FDRun(
        returncode=returncode,
        log=log,
        plan=plan,
        cost=cost if plan is not None else None,
        evaluations=_last_number(r"Evaluated (\d+) state\(s\)\.", log, int),
        expansions=_last_number(r"Expanded (\d+) state\(s\)\.", log, int),
        generated=_last_number(r"Generated (\d+) state\(s\)\.", log, int),
        search_time=_last_number(r"Search time: " + _NUMBER + "s", log),
        initial_h=parse_initial_h(log),
        timed_out=killed or limit_hit or returncode in _OUT_OF_TIME,
        out_of_memory=returncode in _OUT_OF_MEMORY or memory_hit,
        unsolvable=returncode in UNSOLVABLE,
        wall_time=wall,
    )


_WORKDIR_PREFIX = "pddlgym_sl_fd_"


def _remove_orphaned_workdirs() -> None:
    """Remove the working directories of runs whose process no longer exists (killed with -9)."""
    for path in Path(tempfile.gettempdir()).glob(f"{_WORKDIR_PREFIX}*_*"):
        pid = path.name[len(_WORKDIR_PREFIX) :].split("_", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not process_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL the driver and every process under it (translator, search)."""
    for pid in [*descendants(proc.pid), proc.pid]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


#: Our heuristic names -> Fast Downward's.
FD_HEURISTIC_NAMES = {
    "blind": "blind",
    "goal_count": "goalcount",
    "hmax": "hmax",
    "hadd": "add",
    "hff": "ff",
    "lmcut": "lmcut",
}


def fd_initial_values(
    domain_file: str | Path, problem_file: str | Path, names: tuple[str, ...] = tuple(FD_HEURISTIC_NAMES)
) -> dict[str, float]:
    """Fast Downward's values of several heuristics (our names, see `FD_HEURISTIC_NAMES`) on the
    initial state, from one run: an ``eager_greedy`` search with bound 0 evaluates the initial
    state with every heuristic and stops. ``inf`` for a dead end."""
    fd_names = [FD_HEURISTIC_NAMES[n] for n in names]
    run = run_fast_downward(
        domain_file, problem_file, f"eager_greedy([{', '.join(f'{n}()' for n in fd_names)}], bound=0)"
    )
    if run.initial_h:
        return {n: run.initial_h.get(fd, math.inf) for n, fd in zip(names, fd_names, strict=True)}
    if run.unsolvable or _DEAD_END.search(run.log):
        return dict.fromkeys(names, math.inf)
    raise SolverError("Fast Downward reported no initial heuristic values", file=problem_file)


def fd_initial_heuristic(domain_file: str | Path, problem_file: str | Path, name: str = "lmcut") -> float:
    """Fast Downward's value of heuristic `name` (e.g. ``"lmcut"``, ``"hmax"``, ``"add"``,
    ``"ff"``) on the initial state: an ``eager_greedy`` search with bound 0 evaluates the initial
    state and stops. ``inf`` for a dead end."""
    run = run_fast_downward(domain_file, problem_file, f"eager_greedy([{name}()], bound=0)")
    if run.initial_h:
        return run.initial_h.get(name, next(iter(run.initial_h.values())))
    if run.unsolvable or _DEAD_END.search(run.log):
        return math.inf
    raise SolverError(f"Fast Downward reported no initial heuristic value for {name!r}", file=problem_file)
