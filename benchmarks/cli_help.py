"""Benchmark: wall time of ``--help`` of every command, beside ``python -c pass`` in the same run.

    python benchmarks/cli_help.py [--repeat 3]

Each command runs in a fresh interpreter (``python -m <module> --help``, output discarded); the
row is the best of ``--repeat`` runs and its ratio to the best ``python -c pass`` (the
interpreter's own start-up). The target (issue 18): every ``--help`` under 2 s on a laptop, i.e.
no torch, torch-geometric, SB3 or matplotlib imported just to list the flags
(``tests/test_cli_help.py`` checks that part without a clock).
"""

from __future__ import annotations

import argparse
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def best_wall(argv: list[str], repeat: int) -> float:
    """The fastest of `repeat` runs of `argv` (seconds); exits non-zero runs loudly."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr[-2000:]}")
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (the best counts)")
    args = parser.parse_args()
    commands = runpy.run_path(str(ROOT / "tests" / "commands.py"))["COMMANDS"]  # the CLI tests' list

    reference = best_wall([sys.executable, "-c", "pass"], args.repeat)
    print(f"{'command':<36} {'seconds':>8} {'x python -c pass':>17}")
    print(f"{'python -c pass':<36} {reference:>8.2f} {1.0:>17.1f}")
    for module in commands:
        seconds = best_wall([sys.executable, "-m", module, "--help"], args.repeat)
        print(f"{module + ' --help':<36} {seconds:>8.2f} {seconds / reference:>17.1f}")


if __name__ == "__main__":
    main()
