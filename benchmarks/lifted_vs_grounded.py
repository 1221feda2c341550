"""Benchmark: lifted GBFS against grounded GBFS, same heuristic, same tasks, in one process.

    python benchmarks/lifted_vs_grounded.py [--domains ...] [--tasks 2] [--set testing-medium]
                                            [--heuristic hff] [--evaluations 20000] [--time-limit 20]
                                            [--symmetry]

On the first ``--tasks`` tasks of each domain's ``--set`` (IPC 2023 LT, which both can run), the
grounded engine (`pddlgym_sl.search.gbfs`: Fast Downward's translator, packed states, the
heuristic's FD-faithful kernel) and the lifted one (`pddlgym_sl.lifted.search.lifted_gbfs`:
joins per expansion, states as sorted fact ids, the heuristic on the projected relaxed program)
each run GBFS to ``--evaluations`` or ``--time-limit``, after a warm-up that compiles their
kernels. Printed per task: the preparation (grounding against lifted loading plus the relaxed
program), evaluations per second of each and their ratio (lifted / grounded), and the bytes a
stored state takes: the grounded engine's node (its packed state, parent, g, status, h) against the
lifted store's (its fact ids, start, length, parent, action, hash). Without ``--symmetry`` the
lifted search generates every successor, as the grounded one does, so both rates are per state
of the same kind of search.

The machine's load average is printed before and after: on a shared machine the rates measure the
neighbours too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from pddlgym_sl import load_task
from pddlgym_sl.lifted import load_lifted_task
from pddlgym_sl.lifted.registry import lifted_heuristic
from pddlgym_sl.lifted.search import LiftedSearch, warm_up_lifted
from pddlgym_sl.search import gbfs
from pddlgym_sl.search.engine import node_bytes
from pddlgym_sl.search.packing import task_packing
from pddlgym_sl.search.warm_up import warm_up

IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"
DOMAINS = (
    "blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban", "spanner",
    "transport",
)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--set", default="testing-medium")
    parser.add_argument("--heuristic", default="hff")
    parser.add_argument("--evaluations", type=int, default=20_000)
    parser.add_argument("--time-limit", type=float, default=20.0)
    parser.add_argument(
        "--symmetry", action="store_true", help="lifted: one successor per class of isomorphic ones"
    )
    parser.add_argument("--ipc", type=Path, default=IPC)
    args = parser.parse_args()
    if not args.ipc.is_dir():
        sys.exit(f"the IPC 2023 LT tasks are not at {args.ipc}")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(
        f"GBFS + {args.heuristic}, up to {args.evaluations:,} evaluations or {args.time_limit:g} s"
        f"{', lifted with symmetry' if args.symmetry else ''}\n"
    )
    print(
        "| task | ground s | lifted load s | grounded evals/s | lifted evals/s | lifted / grounded | "
        "grounded B/state | lifted B/state | lifted / grounded |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|"
    )
    rate_ratios, byte_ratios = [], []
    for domain in args.domains:
        for problem in sorted((args.ipc / domain / args.set).glob("*.pddl"))[: args.tasks]:
            files = (args.ipc / domain / "domain.pddl", problem)
            t0 = time.perf_counter()
            grounded = load_task(*files)
            t1 = time.perf_counter()
            lifted = load_lifted_task(*files)
            h = lifted_heuristic(args.heuristic, lifted)
            t2 = time.perf_counter()
            warm_up(gbfs, grounded, args.heuristic)
            warm_up_lifted(lifted, h, symmetry=args.symmetry)
            g = gbfs(grounded, args.heuristic, max_evaluations=args.evaluations, time_limit=args.time_limit)
            run = LiftedSearch(
                lifted,
                h,
                max_evaluations=args.evaluations,
                time_limit=args.time_limit,
                symmetry=args.symmetry,
            )
            while run.step():
                pass
            r = run.result
            assert r is not None
            g_rate, l_rate = g.evaluations / g.seconds, r.evaluations / r.seconds
            packing, _ = task_packing(grounded)
            g_bytes = node_bytes(packing.n_words, np.dtype(np.int32))
            rate_ratios.append(l_rate / g_rate)
            byte_ratios.append(run.node_bytes / g_bytes)
            cells = [f"{domain} {problem.stem}", f"{t1 - t0:.1f}", f"{t2 - t1:.1f}", f"{g_rate:,.0f}"]
            cells += [f"{l_rate:,.0f}", f"{l_rate / g_rate:.2f}", str(g_bytes), f"{run.node_bytes:.0f}"]
            cells += [f"{run.node_bytes / g_bytes:.1f}"]
            print("| " + " | ".join(cells) + " |", flush=True)
    rates, sizes = statistics.geometric_mean(rate_ratios), statistics.geometric_mean(byte_ratios)
    print(
        f"\ngeometric mean over {len(rate_ratios)} tasks, lifted / grounded: evaluations/s {rates:.2f}, ",
        end="",
    )
    print(f"bytes/state {sizes:.1f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
