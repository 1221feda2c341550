"""Benchmark: optimal-label generation throughput per domain, and loading 100,000 labelled states.

    python benchmarks/labels.py [--problems 8] [--jobs 1]

For each domain, the first N problems of the train split are solved (Fast Downward A* + LM-cut)
and labelled (our heuristics on every plan state) into a temporary directory. Prints
problems/minute, labelled states/second of the labelling step, and the share of time spent in the
solver versus labelling (labelling should be a small fraction). Then copies label files until a
split holds >= 100,000 states, and times their consolidation (done once, when a split is built)
and `load_split` on the result.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import domains
from pddlgym_sl.data.build import build_split
from pddlgym_sl.data.dataset import consolidate, load_split
from pddlgym_sl.data.solve import SolveConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    header = (
        f"{'domain':<12} {'problems':>8} {'states':>7} {'problems/min':>13} {'states/s':>10} {'solver %':>9}"
    )
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        for name in domains.DOMAIN_NAMES:
            split_dir = Path(tmp) / name / "train"
            specs = domains.split_specs(name, "train")[: args.problems]
            start = time.perf_counter()
            m = build_split(
                name,
                domains.domain_file(name),
                "train",
                specs,
                split_dir,
                SolveConfig(time_limit=300),
                jobs=args.jobs,
                progress=False,
            )
            wall = time.perf_counter() - start
            s = m["summary"]
            share = s["solver_seconds"] / max(1e-9, s["solver_seconds"] + s["label_seconds"])
            print(
                f"{name:<12} {s['solved']:>8} {s['states']:>7} {60 * s['solved'] / wall:>13.1f} "
                f"{s['states'] / max(1e-9, s['label_seconds']):>10.0f} {100 * share:>8.1f}%"
            )

        source = Path(tmp) / "ferry" / "train"
        big = Path(tmp) / "big"
        (big / "labels").mkdir(parents=True)
        shutil.copy(source / "domain.pddl", big / "domain.pddl")
        files = sorted((source / "labels").glob("*.npz"))
        per_copy = len(load_split(source))
        copies = -(-100_000 // per_copy)
        for c in range(copies):
            for f in files:
                shutil.copy(f, big / "labels" / f"{c:05d}-{f.name}")
        start = time.perf_counter()
        consolidate(big)
        print(
            f"consolidate: {copies * len(files):,} per-problem label files "
            f"in {time.perf_counter() - start:.2f} s"
        )
        start = time.perf_counter()
        data = load_split(big)
        print(
            f"load_split: {len(data):,} labelled states from {copies * len(files):,} files "
            f"in {time.perf_counter() - start:.2f} s"
        )


if __name__ == "__main__":
    main()
