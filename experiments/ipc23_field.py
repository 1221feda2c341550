"""What the field reports on the IPC 2023 Learning Track, to stand beside our runs (`ipc23_lt.py`).

- `official_coverage`: the competition's planners on exactly the tasks we ran, from
  ``../shared/ipc23-lt/official_runs.csv`` (1 core, 1,800 s, 8 GiB; no evaluation cap).
- `WL_GOOSE_ECAI25`: WL-GOOSE at 60 s and 4 GB per task (Chen, ECAI 2025, as quoted in
  ``ANCHORS.md``): per domain, the original ICAPS 2024 configuration (398 of 900) and the best
  configuration per domain (an oracle over configurations); the best single configuration's
  total, 447 of 900, is published without a per-domain split.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path

__all__ = ["OFFICIAL", "WL_GOOSE_ECAI25", "WL_GOOSE_ECAI25_BEST_TOTAL", "official_coverage"]

OFFICIAL = {
    "huzar_plan": "HUZAR",
    "gofai_plan": "GOFAI",
    "downward_smac_plan": "FD SMAC",
    "muninn_plan": "Muninn",
}
"""The competition's planners that ran every domain (csv name -> label); ASNets and h-policy ran
only some."""

WL_GOOSE_ECAI25 = {  # domain: (ICAPS 2024 configuration, best configuration per domain), of 90 each
    "blocksworld": (55, 66),
    "childsnack": (15, 47),
    "ferry": (63, 66),
    "floortile": (1, 3),
    "miconic": (79, 88),
    "rovers": (34, 45),
    "satellite": (33, 51),
    "sokoban": (32, 33),
    "spanner": (60, 64),
    "transport": (26, 50),
}
WL_GOOSE_ECAI25_BEST_TOTAL = 447
"""Of 900 tasks (30 per domain and difficulty)."""
TASKS_PER_DOMAIN = 90


@functools.cache
def _rows(csv_path: Path) -> tuple[dict[str, str], ...]:
    """The rows of ``official_runs.csv``, read once: the tables ask for every domain and set."""
    with open(csv_path, newline="") as f:
        return tuple(csv.DictReader(f))


def official_coverage(csv_path: Path, domain: str, difficulty: str, problems: set[str]) -> dict[str, int]:
    """Tasks of `problems` (file names, ``p01.pddl``) of one domain and difficulty (``easy``) each
    official planner solved; a planner with no run on some of them is left out."""
    solved: dict[str, int] = {}
    runs: dict[str, set[str]] = {}
    for row in _rows(csv_path):
        name = row["problem"].removeprefix(f"{difficulty}-")
        if row["domain"] != domain or row["problem"] == name or name not in problems:
            continue
        runs.setdefault(row["algorithm"], set()).add(name)
        solved[row["algorithm"]] = solved.get(row["algorithm"], 0) + (row["coverage"] == "1")
    return {
        label: solved[algorithm] for algorithm, label in OFFICIAL.items() if runs.get(algorithm) == problems
    }
