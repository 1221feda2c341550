"""Benchmark: heuristic evaluations per second, ours against pyperplan and Fast Downward.

    python benchmarks/heuristics.py [--states 300] [--seconds 0.5] [--fd-seconds 5]

For one mid-size generated problem per domain, a fixed set of states is sampled by random walks
from the initial state (seeded). Every heuristic of ours is timed on that set through `batch`
(one compiled call for all states, the interface search uses; a warm-up call first, so JIT
compilation is excluded) and through one-state `__call__`; pyperplan's implementation of the same
heuristic is timed on the same states in the same process (best pass within a time budget per
heuristic, since it is slow). The ``x pyperplan`` column is our batch rate over pyperplan's.

LM-cut is also compared with Fast Downward on the same problem. FD runs a breadth-first search
that evaluates LM-cut on every generated state (``eager(tiebreaking([g(), lmcut()]),
reopen_closed=false, max_time=...)``: A* or GBFS solve some of these problems after a hundred
evaluations, too few to time) and its rate is ``Evaluations / Search time`` from its log (search
time includes successor generation and hashing, so this understates FD's pure LM-cut rate a
little). Ours is timed on the first states of our own breadth-first order from the initial state,
the same kind of states (``x FD`` column); the random-walk ratio is shown too.
Targets: LM-cut >= 50x pyperplan and >= 0.5x Fast Downward; hmax/hadd/hFF >= 20,000/s on ferry
with 10 locations and 10 cars.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from pyperplan.heuristics.blind import BlindHeuristic
from pyperplan.heuristics.lm_cut import LmCutHeuristic
from pyperplan.heuristics.relaxation import hAddHeuristic, hFFHeuristic, hMaxHeuristic
from pyperplan.search.searchspace import make_root_node
from pyperplan_reference import pyperplan_task

import domains
from pddlgym_sl import CompiledTask, State, load_task
from pddlgym_sl.data.sampling import random_walk
from pddlgym_sl.fd import run_fast_downward
from pddlgym_sl.heuristics import HEURISTICS, make_heuristic

PROBLEMS = {
    "blocksworld": {"blocks": 12},
    "ferry": {"locations": 10, "cars": 10},
    "gripper": {"balls": 20},
    "visitall": {"x": 6, "y": 6, "ratio": 1.0},
}
PYPERPLAN = {
    "blind": BlindHeuristic,
    "hmax": hMaxHeuristic,
    "hadd": hAddHeuristic,
    "hff": hFFHeuristic,
    "lmcut": LmCutHeuristic,
}


def random_walk_states(task: CompiledTask, n: int, max_length: int, seed: int) -> list[State]:
    """`n` states, each the end of a random walk of uniform length in [0, max_length]."""
    rng = np.random.default_rng(seed)
    return [random_walk(task, task.init, int(rng.integers(0, max_length + 1)), rng) for _ in range(n)]


def breadth_first_states(task: CompiledTask, n: int) -> list[State]:
    """The first `n` distinct states in breadth-first order from the initial state."""
    seen = {task.init}
    order = [task.init]
    i = 0
    while i < len(order) and len(order) < n:
        for _, succ in task.successors(order[i]):
            if succ not in seen:
                seen.add(succ)
                order.append(succ)
        i += 1
    return order[:n]


def rate(fn: Callable[[], object], n_items: int, seconds: float) -> float:
    """Items per second of `fn` (which processes `n_items`), best of repeated runs over `seconds`."""
    best = float("inf")
    spent = 0.0
    while spent < seconds or best == float("inf"):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        spent += elapsed
    return n_items / best


def pyperplan_rate(heuristic, nodes: list, budget: float) -> float:
    """Best rate of passes over `nodes` (a pass stops early once `budget` seconds are spent)."""
    best = 0.0
    spent = 0.0
    while spent < budget:
        start = time.perf_counter()
        count = 0
        for node in nodes:
            heuristic(node)
            count += 1
            if spent + time.perf_counter() - start > budget:
                break
        elapsed = time.perf_counter() - start
        spent += elapsed
        best = max(best, count / elapsed)
    return best


def fd_lmcut_rate(domain_file: Path, problem_file: Path, seconds: float) -> tuple[float, int]:
    search = f"eager(tiebreaking([g(), lmcut()]), reopen_closed=false, max_time={seconds:g})"
    run = run_fast_downward(domain_file, problem_file, search)
    if not run.evaluations or not run.search_time:
        return float("nan"), 0
    return run.evaluations / run.search_time, run.evaluations


def fmt(x: float) -> str:
    if x != x:  # nan
        return "-"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def bench_domain(name: str, params: dict, args: argparse.Namespace, tmp: Path) -> list[str]:
    problem_file = tmp / f"{name}.pddl"
    problem_file.write_text(domains.generate_problem(name, seed=1, **params))
    domain_file = domains.domain_file(name)
    task = load_task(domain_file, problem_file)
    states = random_walk_states(task, args.states, args.walk_length, seed=0)
    batch = np.array(task.states_to_array(states))
    pp_task = pyperplan_task(domain_file, problem_file)
    nodes = [make_root_node(frozenset(task.true_facts(s))) for s in states]

    label = ", ".join(f"{k}={v}" for k, v in params.items())
    lines = [
        f"\n{name} ({label}): {task.n_facts} facts, {task.n_actions} actions, "
        f"{len(states)} random-walk states",
        f"  {'heuristic':11s}{'mean h':>8s}{'batch/s':>12s}{'call/s':>10s}{'pyperplan/s':>13s}"
        f"{'x pyperplan':>13s}",
    ]
    for key in HEURISTICS:
        h = make_heuristic(key, task)
        values = h.batch(batch)  # warm-up: compiles (or loads) the kernels
        h(states[0])
        ours = rate(lambda h=h: h.batch(batch), len(batch), args.seconds)
        one = rate(lambda h=h: [h(s) for s in states], len(states), args.seconds / 2)
        pp = float("nan")
        if key in PYPERPLAN:
            pp = pyperplan_rate(PYPERPLAN[key](pp_task), nodes, args.pyperplan_seconds)
        finite = values[np.isfinite(values)]
        lines.append(
            f"  {key:11s}{finite.mean() if len(finite) else float('nan'):8.2f}{fmt(ours):>12s}"
            f"{fmt(one):>10s}{fmt(pp):>13s}{fmt(ours / pp):>13s}"
        )

    lmcut = make_heuristic("lmcut", task)
    bfs = np.array(task.states_to_array(breadth_first_states(task, args.bfs_states)))
    ours_bfs = rate(lambda: lmcut.batch(bfs), len(bfs), args.seconds)
    ours_walk = rate(lambda: lmcut.batch(batch), len(batch), args.seconds)
    fd, fd_evals = fd_lmcut_rate(domain_file, problem_file, args.fd_seconds)
    lines.append(
        f"  lmcut vs Fast Downward: FD {fmt(fd)}/s ({fd_evals} BFS evaluations); ours {fmt(ours_bfs)}/s "
        f"on {len(bfs)} BFS states (mean h {lmcut.batch(bfs).mean():.2f}): x FD {ours_bfs / fd:.2f} "
        f"(random-walk states: x FD {ours_walk / fd:.2f})"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=300, help="random-walk states per problem")
    parser.add_argument("--walk-length", type=int, default=40, help="longest random walk")
    parser.add_argument("--seconds", type=float, default=0.5, help="timing budget per measurement")
    parser.add_argument("--pyperplan-seconds", type=float, default=3.0, help="budget per pyperplan heuristic")
    parser.add_argument("--bfs-states", type=int, default=4000, help="BFS states for the FD comparison")
    parser.add_argument("--fd-seconds", type=float, default=5.0, help="Fast Downward search time")
    parser.add_argument("--domains", nargs="*", default=list(PROBLEMS), choices=list(PROBLEMS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.domains:
            print("\n".join(bench_domain(name, PROBLEMS[name], args, Path(tmp))), flush=True)


if __name__ == "__main__":
    main()
