"""Load check: `agents.evaluate` on 200 IPC 2023 LT easy tasks, local processes and Ray, results counted.

    python benchmarks/evaluate_load.py [--per-domain 20] [--time-limit 10] [--backends local ray]

For each backend (``local``: ``--jobs 2``; ``ray``: ``--backend ray``, a Ray instance started on
this machine, one unit per CPU), GBFS + hFF plans ``--per-domain`` tasks of every domain's
``testing-easy`` set (an even spread, `agents.evaluate --problems`) under ``--time-limit`` seconds
each and no evaluation cap. Each evaluation's output is then checked: one record per task asked
for, no other file, no temporary file left by an interrupted write, and the summary counting the
same tasks; and the backends must agree on which tasks were solved where the limit did not decide
(a task solved in under half the limit by one is solved by the other). While the commands run,
every process below them is sampled (``/proc``, every 0.2 s) for its peak resident memory
(``VmHWM``): printed per process kind (the evaluate driver, its search workers, Ray's own
services). Needs Linux and the ``[cluster]`` extra for ``ray``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IPC = ROOT.parent / "shared" / "ipc23-lt"
DOMAINS = (
    "blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban", "spanner",
    "transport",
)  # fmt: skip


def _children() -> dict[int, list[int]]:
    """parent pid -> child pids, from /proc."""
    tree: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            tree[int(fields[1])].append(int(entry))
    return tree


def _kind(pid: int, root: int) -> str | None:
    """What a process below the command is: the driver, a search worker, or Ray's own service."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    if pid == root:
        return "driver"
    if cmd.startswith("ray::") or "default_worker.py" in cmd:  # a Ray worker, idle or running a unit
        return "worker"
    if "ray" in cmd:
        return "ray services"
    return "worker"  # the local backend's processes (multiprocessing)


class PeakSampler(threading.Thread):
    """Samples ``VmHWM`` of every process below `root` until stopped: the largest per process."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root, self.peaks, self.kinds = root, {}, {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            tree, todo = _children(), [self.root]
            while todo:
                pid = todo.pop()
                todo.extend(tree.get(pid, []))
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                hwm = [line for line in status.splitlines() if line.startswith("VmHWM")]
                kb = int(hwm[0].split()[1]) if hwm else 0
                kind = self.kinds.get(pid) or _kind(pid, self.root)
                if kind is not None:
                    self.kinds[pid] = kind
                    self.peaks[pid] = max(self.peaks.get(pid, 0), kb)
            time.sleep(0.2)

    def by_kind(self) -> dict[str, tuple[int, float]]:
        """kind -> (processes, largest peak in MB)."""
        out: dict[str, list[int]] = defaultdict(list)
        for pid, kb in self.peaks.items():
            out[self.kinds[pid]].append(kb)
        return {k: (len(v), max(v) / 1024) for k, v in sorted(out.items())}


def _check(out: Path, expected: int) -> dict[str, dict]:
    """The records of one evaluation, checked: `expected` of them, once each, nothing else."""
    files = sorted((out / "problems").iterdir())
    records = [json.loads(f.read_text()) for f in files]
    names = [r["problem"] for r in records]
    assert all(f.suffix == ".json" for f in files), f"{out}: files other than records: {files}"
    assert len(records) == expected == len(set(names)), f"{out}: {len(records)} records for {expected} tasks"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["problems"] == expected and summary["solved"] == sum(r["solved"] for r in records)
    return {r["problem"]: r for r in records}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-domain", type=int, default=20)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--backends", nargs="+", default=["local", "ray"], choices=["local", "ray"])
    args = parser.parse_args()
    if not IPC.is_dir():
        sys.exit(f"the IPC 2023 LT tasks are not at {IPC}")
    flags = {"local": ["--jobs", "2"], "ray": ["--backend", "ray"]}
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    found: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory(prefix="evaluate-load-") as tmp:
        for backend in args.backends:
            t0, records = time.perf_counter(), {}
            sampler_peaks: dict[str, tuple[int, float]] = {}
            for domain in DOMAINS:
                out = Path(tmp) / backend / domain
                cmd = [sys.executable, "-m", "agents.evaluate", "--heuristic", "hff", "--tasks",
                       str(IPC / domain / "testing-easy"), "--problems", str(args.per_domain), "--limit",
                       "1000000000", "--time-limit", str(args.time_limit), "--out", str(out), "--quiet",
                       *flags[backend]]  # fmt: skip
                proc = subprocess.Popen(
                    cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
                )
                sampler = PeakSampler(proc.pid)
                sampler.start()
                output, _ = proc.communicate()
                sampler.stop.set()
                sampler.join()
                assert proc.returncode == 0, output[-3000:]
                for kind, (n, mb) in sampler.by_kind().items():
                    was = sampler_peaks.get(kind, (0, 0.0))
                    sampler_peaks[kind] = (was[0] + n, max(was[1], mb))
                records.update({f"{domain}/{k}": v for k, v in _check(out, args.per_domain).items()})
            seconds = time.perf_counter() - t0
            found[backend] = records
            solved = sum(r["solved"] for r in records.values())
            print(f"{backend}: {len(records)} tasks, each recorded once; {solved} solved; {seconds:.0f} s")
            for kind, (n, mb) in sampler_peaks.items():
                print(f"  {kind}: {n} processes, peak resident memory {mb:.0f} MB at most")
    if len(found) == 2:
        a, b = found.values()
        assert a.keys() == b.keys()
        quick = args.time_limit / 2
        differ = [k for k in a if (a[k]["solved"] and a[k]["seconds"] < quick and not b[k]["solved"])
                  or (b[k]["solved"] and b[k]["seconds"] < quick and not a[k]["solved"])]  # fmt: skip
        assert not differ, f"solved by one backend well within the limit, not by the other: {differ}"
        print(f"the backends agree on every task solved within {quick:g} s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
