"""Benchmark: what the bound at search costs a trained WL TN model, for each ``--search-bound``.

    python benchmarks/search_bounds.py [--runs runs/ipc-ecai25] [--config wl-tn-ecai]
                                       [--domains blocksworld ...] [--sets testing-easy testing-medium]
                                       [--tasks 3] [--seconds 10]

For each domain, the trained run ``<runs>/<domain>-<config>`` (``runs/ipc-ecai25``: the IPC
experiment's runs, which every ``python -m experiments.ipc23_lt --protocol ecai25`` restores from
its store first; a ``--model wl`` run with a TN head
and the LM-cut bound: the IPC experiment's WL TN, or its rank+TN) searches ``--tasks`` tasks spread
over each test set with GBFS under each search bound of `agents.registries.SEARCH_BOUNDS`
(`agents.models.wl.compiled.heuristic`: ``trained`` the LM-cut bound on every evaluated state,
``hmax`` instead, ``screened`` LM-cut only where μ − hFF < 6σ, ``lazy`` LM-cut on expanded
states only, ``none`` μ), each for at most ``--seconds`` of search (kernels compiled first, by a
warm-up search). Printed per domain and bound: evaluations per second over its searches, the
ratio to ``trained`` in the same process (the reference), and how many searches found a plan
with how many evaluations (lazy expands the eager search's states: same evaluations where both
finish). The machine's load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from agents.learned_heuristic import TrainedModel
from agents.models.wl.compiled import CompiledWLHeuristic
from agents.registries import SEARCH_BOUNDS
from pddlgym_sl import load_task
from pddlgym_sl.envs.problems import spread
from pddlgym_sl.search import gbfs

ROOT = Path(__file__).resolve().parents[1]
IPC = ROOT.parent / "shared" / "ipc23-lt"
DOMAINS = ("blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban",
           "spanner", "transport")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=Path, default=ROOT / "runs/ipc-ecai25")
    parser.add_argument("--config", default="wl-tn-ecai", help="the runs' configuration name")
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    parser.add_argument("--sets", nargs="+", default=["testing-easy", "testing-medium"])
    parser.add_argument("--tasks", type=int, default=3, help="tasks per set, spread over it")
    parser.add_argument("--seconds", type=float, default=10.0, help="search time limit per task and bound")
    args = parser.parse_args()
    if not IPC.is_dir():
        print(f"skipped: the IPC 2023 LT tasks are not at {IPC}")
        return
    print(f"load average {os.getloadavg()[0]:.2f}; {args.seconds:g} s per search at most")
    print("| domain | bound | evaluations/s | × trained | solved | evaluations of the solved |")
    print("|---|---|--:|--:|--:|---|")
    for domain in args.domains:
        run = args.runs / f"{domain}-{args.config}"
        if not (run / "model.json").is_file():
            print(f"| {domain} | (no run at {run}) | | | | |")
            continue
        trained = TrainedModel.load(run)
        files = [f for s in args.sets for f in spread(sorted((IPC / domain / s).glob("p*.pddl")), args.tasks)]
        tasks = [load_task(IPC / domain / "domain.pddl", f) for f in files]
        for bound in SEARCH_BOUNDS:  # each bound's engine is compiled for its own argument types
            gbfs(tasks[0], CompiledWLHeuristic(trained, tasks[0], search_bound=bound), max_evaluations=50)
        rates = {}
        for bound in SEARCH_BOUNDS:
            evaluations = seconds = 0.0
            solved = []
            for task in tasks:
                heuristic = CompiledWLHeuristic(trained, task, search_bound=bound)
                result = gbfs(task, heuristic, time_limit=args.seconds)
                evaluations += result.evaluations
                seconds += result.seconds
                if result.solved:
                    solved.append(result.evaluations)
            rates[bound] = evaluations / max(seconds, 1e-9)
            ratio = rates[bound] / rates["trained"]
            found = ", ".join(f"{n:,}" for n in solved)
            cells = [
                domain,
                bound,
                f"{rates[bound]:,.0f}",
                f"{ratio:.2f}",
                f"{len(solved)}/{len(tasks)}",
                found,
            ]
            print("| " + " | ".join(cells) + " |")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
