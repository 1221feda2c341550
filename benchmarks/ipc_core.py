"""Benchmark: the planning core on the IPC 2023 Learning Track tasks, beside Fast Downward.

    python benchmarks/ipc_core.py [--part grounding search coverage long] [--domains ...]
                                  [--coverage-limit 10000] [--time-limit 60]
                                  [--long-searches gbfs astar] [--reselect]
                                  [--long-time-limit 300] [--long-journal PATH]

Four measurements, each against Fast Downward (the ``up-fast-downward`` wheel) in the same run:

- **grounding**: seconds to parse and ground every training task (``load_task``: our reader and
  validator, Fast Downward's translator run in process, the compilation into arrays) against
  Fast Downward's translator alone on the same files (its ``main()`` in process, output to a
  scratch file); both best of three. Also the paper domains at their test sizes.
- **search**: evaluations per second of GBFS + hFF (``eager_greedy([ff()])``) over every shared
  testing-easy task, and of A* + LM-cut (``astar(lmcut())``) over every tenth training task,
  counting the tasks both solve within the time limit and Fast Downward in at least a millisecond
  (its log says 0 s for some faster ones). Both planners expand the same nodes (our
  search is Fast Downward's, node for node, which the script checks and prints), so the ratio is
  Fast Downward's total search time over ours. Ours is the best of three runs after a warm-up
  (compilation excluded); Fast Downward's search time is from its log.
- **long**: long searches (`LONG_TASKS`: per domain a task on which Fast Downward evaluates 1M to
  10M states within ``--long-time-limit`` CPU s, 300 by default, GBFS + hFF among the test sets,
  A* + LM-cut among the training tasks), evaluations per CPU second and peak resident memory,
  ours beside Fast Downward's, each planner in a process of its own (`long_search`), and what
  each search added to the memory its process had when the search started. A domain without a
  task in `LONG_TASKS` gets one by bisection over a set's tasks in order of size, the largest
  first, easy before medium before hard (the next set only when the largest task of one is too
  small; the Fast Downward run that lands in the range is the measurement); ``--reselect``
  chooses all again. Where no task is solved in the range, a task on which Fast Downward's search
  runs out of time after 1M-10M evaluations is used (*capped*: our search stops at Fast
  Downward's evaluations, and the two are compared when both hold the same states). The probes
  and rows are kept in ``--long-journal`` as they finish: an interrupted run resumes from them.
- **coverage**: tasks of ``testing-easy`` solved by GBFS + hFF within ``--coverage-limit``
  evaluations (and ``--time-limit`` seconds), ours and Fast Downward's (solved when its
  ``eager_greedy([ff()])`` run needed at most that many evaluations), with the total evaluations
  on the tasks both solve.

The tasks are read from ``../shared/ipc23-lt`` (see its SOURCE.md). Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

# beside this file: python puts benchmarks/ on the path
from long_search import candidates, compare, fast_downward, select

import domains
from pddlgym_sl import load_task
from pddlgym_sl.fd import run_fast_downward
from pddlgym_sl.search import astar, gbfs

IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"
IPC_DOMAINS = tuple(sorted(p.parent.name for p in IPC.glob("*/domain.pddl")))
# the tasks of the speed comparison: every shared testing-easy task (GBFS) and every tenth training
# task (A*, whose optimal searches grow faster)
SPEED_TASKS = {"gbfs": "testing-easy/*.pddl", "astar": "training/p[0-9]0.pddl"}
# tasks Fast Downward searches in less time are left out of the rate: its log then says 0 s for
# some of them, which would make its rate look infinite
MIN_FD_SECONDS = 0.001
# the paper domains at the largest sizes of their test split (Table 3 of the paper)
PAPER_TEST = {
    "blocksworld": {"blocks": 14},
    "ferry": {"locations": 14, "cars": 14},
    "gripper": {"balls": 30},
    "visitall": {"x": 10, "y": 10, "ratio": 1.0},
}


def best_of(n: int, fn) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def fd_translate(domain_file: Path, problem_file: Path) -> None:
    """Fast Downward's translator, in this process, as its command line runs it."""
    from fast_downward.translate import main as fd_main
    from fast_downward.translate import options

    with tempfile.NamedTemporaryFile(suffix=".sas") as sas, contextlib.redirect_stdout(io.StringIO()):
        saved = options.options
        options.set_options([str(domain_file), str(problem_file), "--sas-file", sas.name])
        try:
            fd_main.main()
        finally:
            options.options = saved


def grounding(selected: tuple[str, ...]) -> None:
    print("== grounding: seconds per task (best of 3), ours / Fast Downward's translator")
    header = ("domain", "tasks", "ours total", "FD total", "ratio", "worst", "worst task")
    print("{:12} {:>5} {:>10} {:>9} {:>6} {:>6} {:>12}".format(*header))
    worst_overall = 0.0
    for d in selected:
        tasks = sorted((IPC / d / "training").glob("*.pddl"))
        ours = fd = worst = 0.0
        worst_task = ""
        domain_file = IPC / d / "domain.pddl"
        for p in tasks:
            a = best_of(3, lambda p=p, f=domain_file: load_task(f, p))
            b = best_of(3, lambda p=p, f=domain_file: fd_translate(f, p))
            ours, fd = ours + a, fd + b
            if a / b > worst:
                worst, worst_task = a / b, p.name
        worst_overall = max(worst_overall, worst)
        print(f"{d:12} {len(tasks):5d} {ours:10.2f} {fd:9.2f} {ours / fd:6.2f} {worst:6.2f} {worst_task:>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for d, params in PAPER_TEST.items():
            p = Path(tmp) / f"{d}.pddl"
            p.write_text(domains.generate_problem(d, seed=1, **params))
            a = best_of(3, lambda p=p, d=d: load_task(domains.domain_file(d), p))
            b = best_of(3, lambda p=p, d=d: fd_translate(domains.domain_file(d), p))
            worst_overall = max(worst_overall, a / b)
            print(f"{'paper ' + d:12} {1:5d} {a:10.2f} {b:9.2f} {a / b:6.2f}")
    print(f"largest ratio on any task: {worst_overall:.2f}")


def _fd_search(domain_file: Path, problem_file: Path, config: str, time_limit: float) -> dict:
    run = run_fast_downward(domain_file, problem_file, config, time_limit=time_limit)
    return {
        "solved": run.solved,
        "evaluations": run.evaluations or 0,
        "expansions": run.expansions,
        "seconds": run.search_time,
    }


def search(selected: tuple[str, ...], time_limit: float) -> None:
    for name, fn, heuristic, config in (
        ("gbfs", gbfs, "hff", "eager_greedy([ff()])"),
        ("astar", astar, "lmcut", "astar(lmcut())"),
    ):
        print(
            f"== {name} + {heuristic}: evaluations per second over the {SPEED_TASKS[name]} tasks both "
            f"solve within {time_limit:g} s, Fast Downward in at least {MIN_FD_SECONDS:g} s "
            "(ours: best of 3, compilation excluded)"
        )
        header = ("domain", "tasks", "evals", "ours/s", "FD/s", "x FD", "same nodes")
        print("{:12} {:>5} {:>9} {:>9} {:>9} {:>6} {:>10}".format(*header))
        for d in selected:
            evals = ours_s = fd_s = 0.0
            tasks = same = 0
            for task_file in sorted((IPC / d).glob(SPEED_TASKS[name])):
                ref = _fd_search(IPC / d / "domain.pddl", task_file, config, time_limit)
                if not ref["solved"] or ref["seconds"] < MIN_FD_SECONDS:
                    continue
                task = load_task(IPC / d / "domain.pddl", task_file)
                fn(task, heuristic, max_evaluations=10)  # compilation
                runs = [fn(task, heuristic, max_evaluations=None, time_limit=time_limit) for _ in range(3)]
                best = min(runs, key=lambda r: r.seconds)
                if not best.solved:
                    continue
                tasks += 1
                same += (best.evaluations, best.expansions) == (ref["evaluations"], ref["expansions"])
                evals += best.evaluations
                ours_s += best.seconds
                fd_s += ref["seconds"]
            if tasks:
                ours_rate, fd_rate = evals / ours_s, evals / max(fd_s, 1e-3)
                print(
                    f"{d:12} {tasks:5d} {evals:9.0f} {ours_rate:9.0f} {fd_rate:9.0f} "
                    f"{ours_rate / fd_rate:6.2f} {same:>5d}/{tasks:<4d}"
                )


LONG_TASKS = Path(__file__).with_name("long_tasks.json")
"""The tasks of the long part (chosen by `long`): {search: {domain: [{"task", "fd_seconds",
"fd_evaluations"}]}}, with ``"capped": true`` and ``"time_limit"`` for a task on which Fast
Downward's search ran out of time (`long_search.select`)."""


LONG_SEARCHES = {
    "gbfs": ("hff", ("testing-easy", "testing-medium", "testing-hard")),
    "astar": ("lmcut", ("training",)),
}
"""Search -> (our heuristic, the task sets it is selected from)."""


class LongJournal:
    """What the long part has measured, kept across runs (``--long-journal``, a JSON file written
    atomically after each Fast Downward probe and each finished row), so that an interrupted run
    resumes: a probe already made is not made again, and a domain whose row is there is printed
    from it (``--reselect`` measures all again)."""

    def __init__(self, path: Path, fresh: bool):
        self.path = path
        self.data = {"fd_runs": {}, "rows": {}}
        if path.exists() and not fresh:
            self.data = json.loads(path.read_text())

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1) + "\n")
        os.replace(tmp, self.path)

    def fast_downward(self, domain_file: Path, problem_file: Path, search: str, time_limit: float) -> dict:
        """`long_search.fast_downward`, or its run kept from before (same task, search and limit)."""
        key = f"{search} {problem_file.relative_to(IPC)} {time_limit:.3f}"
        if key not in self.data["fd_runs"]:
            self.data["fd_runs"][key] = fast_downward(domain_file, problem_file, search, time_limit)
            self._save()
        return self.data["fd_runs"][key]

    def row(self, search: str, domain: str) -> dict | None:
        return self.data["rows"].get(f"{search} {domain}")

    def keep_row(self, search: str, domain: str, row: dict) -> None:
        self.data["rows"][f"{search} {domain}"] = row
        self._save()


def long(
    selected: tuple[str, ...],
    searches: tuple[str, ...],
    reselect: bool,
    time_limit: float,
    journal: LongJournal,
) -> None:
    """Per domain, a task on which Fast Downward evaluates 1M-10M states within `time_limit` CPU
    seconds (found by bisection for the domains `LONG_TASKS` lacks; ``reselect``: for all), and
    both planners on it; on a capped task (Fast Downward's search out of time) ours stops at the
    evaluations Fast Downward made. Rows and probes are kept in `journal`."""
    chosen = json.loads(LONG_TASKS.read_text()) if LONG_TASKS.exists() else {}
    for search in searches:
        heuristic, sets = LONG_SEARCHES[search]
        print(
            f"== long {search} + {heuristic}: evaluations per CPU second of the search and peak resident "
            "memory (MB), ours / Fast Downward's, each in a process of its own",
            flush=True,
        )
        header = ("domain", "task", "evaluations", "ours/s", "FD/s", "x FD", "ours MB", "FD MB", "x FD")
        header += ("search MB ours / FD", "same")
        row = "{:12} {:>22} {:>11} {:>9} {:>9} {:>5} {:>8} {:>7} {:>5} {:>20} {:>10}"
        print(row.format(*header), flush=True)
        for d in selected:
            kept = journal.row(search, d)
            if kept is not None:
                print(_long_row(d, kept), flush=True)
                continue
            fd_run = None
            if reselect or d not in chosen.get(search, {}):
                for task_set in sets:  # the next set only when even the last task is too small
                    tasks = candidates(IPC / d, (task_set,))
                    entry, fd_run, too_small = select(
                        IPC / d, search, tasks, time_limit=time_limit, run_fd=journal.fast_downward
                    )
                    if not too_small:
                        break
                chosen.setdefault(search, {})[d] = [entry] if entry else []
                LONG_TASKS.write_text(json.dumps(chosen, indent=1) + "\n")
            for entry in chosen[search][d]:
                capped = entry.get("capped", False)
                limit = entry["time_limit"] if capped else max(2 * entry["fd_seconds"], 30.0)
                r = compare(IPC / d / "domain.pddl", IPC / d / entry["task"], search, limit, fd_run)
                r["task"], r["capped"] = entry["task"], capped
                journal.keep_row(search, d, r)
                print(_long_row(d, r), flush=True)


def _long_row(domain: str, r: dict) -> str:
    """One line of the long table from `long_search.compare`'s result."""
    fd, ours = r["fd"], r["ours"]
    if not (fd["solved"] and ours["solved"]) and not (fd["out_of_time"] and r["capped"]):
        return f"{domain:12} {r['task']:>22} unsolved: FD {fd['solved']}, ours {ours['status']}"
    fd_rate, ours_rate = fd["evaluations"] / fd["seconds"], ours["evaluations"] / ours["seconds"]
    if fd["out_of_time"]:  # no plans: the same states when both stopped
        same = "capped" if r["same_nodes"] else "CAPPED, NODES DIFFER"
    else:
        same = "nodes" if r["same_nodes"] else "NODES DIFFER"
        same += "+plan" if r["same_plan"] else " PLAN DIFFERS"
    grown = f"{ours['rss_mb'] - ours['base_mb']:.0f} / " + (
        f"{fd['rss_mb'] - fd['base_mb']:.0f}" if fd["base_mb"] is not None else "?"
    )
    return (
        f"{domain:12} {r['task']:>22} {ours['evaluations']:11d} {ours_rate:9.0f} {fd_rate:9.0f} "
        f"{ours_rate / fd_rate:5.2f} {ours['rss_mb']:8.0f} {fd['rss_mb']:7.0f} "
        f"{ours['rss_mb'] / fd['rss_mb']:5.2f} {grown:>20} {same:>10}"
    )


def coverage(selected: tuple[str, ...], limit: int, time_limit: float) -> None:
    print(
        f"== coverage of GBFS + hFF on testing-easy: solved within {limit} evaluations and {time_limit:g} s"
    )
    print("(every plan of ours is validated by replay)")
    print(f"{'domain':12} {'tasks':>5} {'ours':>5} {'FD':>5} {'evals ours':>11} {'evals FD':>9}")
    totals = [0, 0, 0]
    for d in selected:
        tasks = sorted((IPC / d / "testing-easy").glob("*.pddl"))
        solved_ours = solved_fd = evals_ours = evals_fd = 0
        for p in tasks:
            ref = _fd_search(IPC / d / "domain.pddl", p, "eager_greedy([ff()])", time_limit)
            fd_ok = ref["solved"] and ref["evaluations"] <= limit
            task = load_task(IPC / d / "domain.pddl", p)
            result = gbfs(task, "hff", max_evaluations=limit, time_limit=time_limit)
            if result.solved:
                task.validate_plan(result.plan)  # raises on an invalid plan
            solved_ours += result.solved
            solved_fd += fd_ok
            if result.solved and fd_ok:
                evals_ours += result.evaluations
                evals_fd += ref["evaluations"]
        totals = [totals[0] + len(tasks), totals[1] + solved_ours, totals[2] + solved_fd]
        print(f"{d:12} {len(tasks):5d} {solved_ours:5d} {solved_fd:5d} {evals_ours:11d} {evals_fd:9d}")
    print(f"{'total':12} {totals[0]:5d} {totals[1]:5d} {totals[2]:5d}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--part",
        nargs="+",
        default=["grounding", "search", "coverage"],
        choices=["grounding", "search", "coverage", "long"],
    )
    parser.add_argument("--long-searches", nargs="+", default=["gbfs", "astar"], choices=list(LONG_SEARCHES))
    parser.add_argument("--reselect", action="store_true", help="long: choose every task again")
    parser.add_argument(
        "--long-time-limit",
        type=float,
        default=300.0,
        help="long: Fast Downward's CPU seconds per probe (a task it needs more for is a capped one)",
    )
    parser.add_argument(
        "--long-journal",
        type=Path,
        default=Path("runs/benchmarks/ipc_core_long.json"),
        help="long: the probes and rows measured so far (a re-run resumes from them)",
    )
    parser.add_argument("--domains", nargs="+", default=list(IPC_DOMAINS), choices=IPC_DOMAINS)
    parser.add_argument("--coverage-limit", type=int, default=10_000)
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args(argv)
    if not IPC.is_dir():
        print(f"no IPC 2023 LT tasks at {IPC}", file=sys.stderr)
        return 2
    selected = tuple(args.domains)
    if "grounding" in args.part:
        grounding(selected)
    if "search" in args.part:
        search(selected, args.time_limit)
    if "coverage" in args.part:
        coverage(selected, args.coverage_limit, args.time_limit)
    if "long" in args.part:
        journal = LongJournal(args.long_journal, fresh=args.reselect)
        long(selected, tuple(args.long_searches), args.reselect, args.long_time_limit, journal)
    return 0


if __name__ == "__main__":
    sys.exit(main())
