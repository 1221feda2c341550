"""Benchmark: this checkout's LM-cut against another version of `pddlgym_sl/heuristics/lmcut.py`.

    git show REV:pddlgym_sl/heuristics/lmcut.py > /tmp/lmcut_rev.py
    python benchmarks/lmcut_versions.py /tmp/lmcut_rev.py [--domains ...] [--tasks p20 p80]

Both versions run in one process on the same states, alternating batch for batch (best of
``--repeats``), so that a machine whose speed drifts between runs, or another job on it, slows
both alike; the ratio is the figure. The other file is loaded as a module of its own beside the
package (it imports the package's queues and relaxed task, as every version does). The states:
the ends of random walks from the initial state (`heuristics.random_walk_states`, seeded, up to
40 steps) of ferry 50/50 and of the training tasks ``--tasks`` of each IPC 2023 LT domain in
``../shared/ipc23-lt``. Both versions must give the same values on every state (the script stops
otherwise): a layout change must not change a value.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import numpy as np

# beside this file: python puts benchmarks/ on the path
from heuristics import random_walk_states

import domains
import pddlgym_sl.heuristics.lmcut as current
from domains.ferry.generator import generate
from pddlgym_sl import CompiledTask, load_task

IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"


def load_version(path: Path) -> ModuleType:
    """`path` as a module named ``lmcut_other``."""
    spec = importlib.util.spec_from_file_location("lmcut_other", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules["lmcut_other"] = module
    spec.loader.exec_module(module)
    return module


def rates(other: ModuleType, task: CompiledTask, states: np.ndarray, repeats: int) -> tuple[float, float]:
    """States per CPU second of the other version and of this one (best of `repeats`)."""

    def timed(module: ModuleType, heuristic, out: np.ndarray) -> float:
        start = time.process_time()
        module.lmcut_batch(states, heuristic.ct, task.fdr, heuristic.work, out, True, True)
        return time.process_time() - start

    mine, theirs = current.LMCut(task), other.LMCut(task)
    out_mine, out_theirs = np.empty(len(states)), np.empty(len(states))
    timed(current, mine, out_mine)  # warm-up: compilation or the kernel cache
    timed(other, theirs, out_theirs)
    best_mine = best_theirs = np.inf
    for _ in range(repeats):
        best_theirs = min(best_theirs, timed(other, theirs, out_theirs))
        best_mine = min(best_mine, timed(current, mine, out_mine))
    if not np.array_equal(out_mine, out_theirs):
        raise SystemExit(f"{task.name}: the two versions give different values")
    return len(states) / best_theirs, len(states) / best_mine


def main(argv: list[str] | None = None) -> int:
    names = sorted(p.parent.name for p in IPC.glob("*/domain.pddl"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("other", type=Path, help="the other version's lmcut.py")
    parser.add_argument("--domains", nargs="+", default=names, choices=names)
    parser.add_argument("--tasks", nargs="+", default=["p20", "p80"], help="training tasks per domain")
    parser.add_argument("--states", type=int, default=800, help="random-walk states per task")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    other = load_version(args.other)
    with tempfile.TemporaryDirectory() as tmp:
        ferry = Path(tmp) / "ferry-50-50.pddl"
        ferry.write_text(generate(50, 50, 1))
        jobs = [("ferry 50/50", domains.domain_file("ferry"), ferry)]
        for d in args.domains:
            for t in args.tasks:
                problem = IPC / d / "training" / f"{t}.pddl"
                if problem.exists():
                    jobs.append((f"{d}/{t}", IPC / d / "domain.pddl", problem))
        print(f"LM-cut states per CPU second: {args.other} / this checkout, best of {args.repeats}")
        print(f"{'task':22} {'states':>6} {'other':>10} {'this':>10} {'ratio':>6}")
        for label, domain_file, problem_file in jobs:
            task = load_task(domain_file, problem_file)
            states = task.states_to_array(random_walk_states(task, args.states, 40, seed=0))
            theirs, mine = rates(other, task, states, args.repeats)
            print(f"{label:22} {len(states):6d} {theirs:10.0f} {mine:10.0f} {mine / theirs:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
