"""Fast Downward's values on the IPC 2023 Learning Track tasks, recorded for the default tests.

    python -m tests.fd_reference      # rewrites tests/data/fd_reference.json (a few minutes)

The tasks are read from ``../shared/ipc23-lt`` (next to the repository; see its SOURCE.md). For
every training task the file holds Fast Downward's six heuristic values on the initial state
(`pddlgym_sl.fd.fd_initial_values`); for one training task per domain it also holds the
statistics and plan cost of Fast Downward's ``eager_greedy([ff()])``. The default tests compare
our values with these records; the slow tests run Fast Downward itself.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from pddlgym_sl.fd import fast_downward_version, fd_initial_values, run_fast_downward

REPO = Path(__file__).resolve().parents[1]
IPC = REPO.parent / "shared" / "ipc23-lt"
RECORD = Path(__file__).parent / "data" / "fd_reference.json"
IPC_DOMAINS = (
    "blocksworld",
    "childsnack",
    "ferry",
    "floortile",
    "miconic",
    "rovers",
    "satellite",
    "sokoban",
    "spanner",
    "transport",
)
GBFS_TASKS = {d: "training/p30.pddl" for d in IPC_DOMAINS} | {"floortile": "training/p25.pddl"}
"""The training task of each domain whose GBFS + hFF run is recorded (floortile's p30 takes Fast
Downward 26 million evaluations, too long for the default tests)."""


def ipc_tasks(pattern: str = "training/*.pddl") -> list[tuple[str, Path, Path]]:
    """(key "domain/training/pNN.pddl", domain file, problem file) of every matching IPC task."""
    return [
        (f"{d}/{p.relative_to(IPC / d)}", IPC / d / "domain.pddl", p)
        for d in IPC_DOMAINS
        for p in sorted((IPC / d).glob(pattern))
    ]


def fd_gbfs(domain_file: Path, problem_file: Path, time_limit: float = 300) -> dict:
    """Statistics of Fast Downward's ``eager_greedy([ff()])`` on one task."""
    run = run_fast_downward(domain_file, problem_file, "eager_greedy([ff()])", time_limit=time_limit)
    return {
        "solved": run.solved,
        "evaluations": run.evaluations,
        "expansions": run.expansions,
        "generated": run.generated,
        "cost": run.cost,
        "plan": run.plan,
        "search_time": run.search_time,
    }


def _values(job: tuple[str, Path, Path]) -> tuple[str, dict]:
    key, domain_file, problem_file = job
    return key, fd_initial_values(domain_file, problem_file)


def record() -> dict:
    with ProcessPoolExecutor(2) as pool:
        values = dict(pool.map(_values, ipc_tasks()))
    gbfs = {}
    for d in IPC_DOMAINS:
        run = fd_gbfs(IPC / d / "domain.pddl", IPC / d / GBFS_TASKS[d])
        run.pop("search_time")
        gbfs[f"{d}/{GBFS_TASKS[d]}"] = run
    return {"fast_downward": fast_downward_version(), "initial_values": values, "gbfs_hff": gbfs}


if __name__ == "__main__":
    if not IPC.is_dir():
        sys.exit(f"no IPC 2023 LT tasks at {IPC}")
    data = record()
    RECORD.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    print(f"wrote {RECORD}: {len(data['initial_values'])} tasks")
