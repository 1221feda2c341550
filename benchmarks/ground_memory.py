"""Benchmark: the grounding estimate (`pddlgym_sl.ground_size.estimate`) beside the measured peak.

    python benchmarks/ground_memory.py                       # the IPC 2023 LT tasks below
    python benchmarks/ground_memory.py DOMAIN PROBLEM ...    # pairs of files of one's own

Each task is compiled (`compile_task`: Fast Downward's translator and our arrays) in a fresh
process; the row shows the estimate, the peak resident memory the compilation added, their
ratio (the estimate must stay above 1), the instance bound beside the ground actions, and the
seconds. The estimate's constants were chosen from such rows (the module docstring of
`pddlgym_sl.ground_size`); a ratio below 1 on a new task means they need raising.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IPC = ROOT.parent / "shared" / "ipc23-lt"
TASKS = [
    "blocksworld/testing-hard/p01.pddl",
    "childsnack/testing-medium/p18.pddl",
    "ferry/testing-hard/p02.pddl",
    "floortile/testing-hard/p01.pddl",
    "miconic/testing-hard/p22.pddl",
    "rovers/testing-medium/p10.pddl",
    "satellite/testing-hard/p01.pddl",
    "sokoban/testing-medium/p12.pddl",
    "spanner/testing-medium/p14.pddl",
    "transport/testing-medium/p10.pddl",
]
CHILD = """
import json, resource, sys, time
from pddlgym_sl.ground_size import estimate
from pddlgym_sl.pddl import parse_domain, parse_problem
from pddlgym_sl.task import compile_task
import pddlgym_sl.translate, fast_downward.translate.main  # imported before the baseline
domain = parse_domain(sys.argv[1])
problem = parse_problem(sys.argv[2], domain)
est = estimate(domain, problem)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
task = compile_task(domain, problem)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
print(json.dumps({"estimate": est.total_bytes, "peak": peak * 1024, "bound": sum(est.instances.values()),
                  "actions": task.n_actions, "seconds": seconds}))
"""


def measure(domain: Path, problem: Path) -> dict:
    """The child's JSON row for one task (``{"error": ...}`` when it failed)."""
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(domain), str(problem)], capture_output=True, text=True, cwd=ROOT
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> None:
    if argv:
        pairs = [(Path(d), Path(p)) for d, p in zip(argv[::2], argv[1::2], strict=True)]
    elif IPC.is_dir():
        pairs = [(IPC / t.split("/")[0] / "domain.pddl", IPC / t) for t in TASKS]
    else:
        sys.exit(f"the IPC 2023 LT tasks are not at {IPC}; give DOMAIN PROBLEM pairs")
    print(f"{'task':40} {'estimate MB':>11} {'peak MB':>8} {'ratio':>6} {'bound':>9} {'actions':>9} {'s':>6}")
    for domain, problem in pairs:
        row = measure(domain, problem)
        name = "/".join(problem.parts[-3:])
        if "error" in row:
            print(f"{name:40} {row['error']}")
            continue
        ratio = row["estimate"] / max(row["peak"], 1)
        print(
            f"{name:40} {row['estimate'] / 2**20:11.0f} {row['peak'] / 2**20:8.0f} {ratio:6.2f} "
            f"{row['bound']:9,} {row['actions']:9,} {row['seconds']:6.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
