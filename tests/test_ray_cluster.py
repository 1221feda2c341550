"""The Ray backend against a real cluster started here: a head and a second node, one CPU each
(``ray start``; the ``[cluster]`` extra). A label split and a 2-cell sweep made on the cluster
equal those made by local processes (labels, problems, weights, model files and reports byte
for byte; records, metrics and evaluation results field for field, timings aside), and a Ray
worker killed in the middle of a unit has that unit run again, once (issue 30). Issue 59: the same
for an evaluation with a killed worker, and a sweep and an evaluation that lose the second node
in the middle (each on a cluster of its own): the head finishes what the lost node held, every
cell and problem present once and equal to an undisturbed local run."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.problems import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc"),
]
pytest.importorskip("ray")

TIMINGS = {"seconds", "load_seconds", "compile_seconds", "wall_seconds", "mean_seconds", "solver_seconds",
           "label_seconds"}  # fmt: skip
SHARES = {"memory_limit"}
"""Fields that depend on how many units run at once where they ran: compared on their own."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _in_sessions(sessions: set[int]) -> list[int]:
    """The processes whose session is one of `sessions` (Ray renames its processes, which
    overwrites what /proc shows of their environment: the marker cannot find them)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) in sessions and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _start_cluster():
    """``ray start --head`` and a second ``ray start --address``, one CPU each, on 127.0.0.1, each
    in a session of its own (the head's first): yields (address, sessions), then kills exactly the
    processes of those sessions."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    ray = str(Path(sys.executable).with_name("ray"))
    temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: Ray's socket paths are limited
    port = _free_port()
    common = ["--num-cpus", "1", "--disable-usage-stats", "--node-ip-address", "127.0.0.1"]
    head = [ray, "start", "--head", "--port", str(port), "--temp-dir", str(temp), "--include-dashboard=false"]
    head += [
        "--ray-client-server-port",
        str(_free_port()),
        "--dashboard-agent-listen-port",
        str(_free_port()),
    ]
    node = [
        ray,
        "start",
        "--address",
        f"127.0.0.1:{port}",
        "--dashboard-agent-listen-port",
        str(_free_port()),
    ]
    sessions: list[int] = []
    try:
        for cmd in (head + common, node + common):
            proc = subprocess.Popen(
                cmd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
            sessions.append(proc.pid)
            out, _ = proc.communicate(timeout=300)
            assert proc.returncode == 0, out[-3000:]
        yield f"127.0.0.1:{port}", sessions
    finally:
        for _ in range(3):
            for pid in _in_sessions(set(sessions)):
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)
        assert _in_sessions(set(sessions)) == []
        subprocess.run(["rm", "-rf", str(temp)], check=False)


@pytest.fixture(scope="module")
def cluster():
    """A two-node cluster shared by the tests that keep both nodes (`_start_cluster`)."""
    for address, sessions in _start_cluster():
        yield address, set(sessions)


@pytest.fixture
def doomed_cluster():
    """A two-node cluster of its own, for a test that stops its second node."""
    yield from _start_cluster()


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        found[int(stat.parent.name)] = (int(fields[1]), cmdline)
    return found


def _below(pid: int, processes: dict[int, tuple[int, str]]) -> list[str]:
    out, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, cmdline) in processes.items():
            if ppid == parent:
                out.append(cmdline)
                todo.append(child)
    return out


class WorkerKiller(threading.Thread):
    """Kills (SIGKILL) the first of our Ray workers that runs a unit whose processes include
    `needle` (None: any unit, once it has run `after` seconds), and remembers that unit's command
    lines."""

    def __init__(self, sessions: set[int], needle: str | None, after: float = 0.0) -> None:
        super().__init__(daemon=True)
        self.sessions = sessions
        self.needle, self.after, self.killed, self.below = needle, after, None, []
        self.stop = threading.Event()
        self.first_seen: dict[int, float] = {}

    def run(self) -> None:
        while not self.stop.is_set() and self.killed is None:
            processes = _processes()
            for pid, (_, cmdline) in processes.items():
                if not cmdline.startswith("ray::_run_unit"):
                    continue
                below = _below(pid, processes)
                seen = time.perf_counter() - self.first_seen.setdefault(pid, time.perf_counter())
                wanted = any(self.needle in c for c in below) if self.needle else seen >= self.after
                if wanted and pid in _in_sessions(self.sessions):
                    os.kill(pid, signal.SIGKILL)
                    self.killed, self.below = pid, below
                    return
            time.sleep(0.02)


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=1200, **kw
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def _untimed(value):
    """A JSON value without its timings (and a manifest's list of runs, with their dates)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMINGS | SHARES and k != "runs"}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _compare(local: Path, remote: Path, skip=("logs",)) -> tuple[list[str], list[str]]:
    """Compare two result trees: (files equal byte for byte, files equal field for field once the
    timings and the tree's own path are left out); any other difference fails."""

    def files(root: Path) -> set[Path]:
        return {
            p.relative_to(root) for p in root.rglob("*")
            if p.is_file() and not set(skip) & set(p.relative_to(root).parts)
            and not p.name.startswith("events.out") and p.suffix != ".png" and p.name != "last.pt"
        }  # fmt: skip

    ours, theirs = files(local), files(remote)
    assert ours == theirs
    same, fields = [], []
    for rel in sorted(ours):
        a, b = (local / rel).read_bytes(), (remote / rel).read_bytes()
        if a == b:
            same.append(str(rel))
            continue
        assert rel.suffix == ".json", f"{rel} differs"
        ja = json.loads(a.decode().replace(str(local), "<out>"))
        jb = json.loads(b.decode().replace(str(remote), "<out>"))
        assert _untimed(ja) == _untimed(jb), rel
        fields.append(str(rel))
    return same, fields


def test_a_label_split_on_ray_equals_local_and_a_killed_worker_is_retried(cluster, tmp_path):
    address, sessions = cluster
    n = 8
    cmd = ["pddlgym_sl.data.generate", "--domain", "ferry", "--split", "train", "--limit", str(n)]
    cmd += ["--time-limit", "120", "--quiet"]
    _run([*cmd, "--jobs", "2", "--out", str(tmp_path / "local")])
    records = tmp_path / "ray" / "ferry" / "train" / "records"
    killer = WorkerKiller(sessions, "guard.py")  # a worker with a planner under it: mid-unit
    killer.start()
    done = _run([*cmd, "--backend", "ray", "--address", address, "--out", str(tmp_path / "ray")])
    killer.stop.set()
    assert killer.killed is not None, "no Ray worker was caught in the middle of a unit"
    slot = next(
        Path(a).stem for c in killer.below for a in c.split() if a.endswith(".pddl") and "/scratch/" in a
    )
    assert (records / f"{slot}.json").is_file()  # the killed unit was done again
    assert "will be retried" in done.stdout + done.stderr  # Ray said so
    same, fields = _compare(tmp_path / "local" / "ferry" / "train", tmp_path / "ray" / "ferry" / "train")
    assert (
        sum(s.startswith("labels/") for s in same) == n and sum(s.startswith("problems/") for s in same) == n
    )
    # every record compared and equal: field for field, or byte for byte where the rounded timings
    # happen to coincide (a tiny problem's solver seconds often do)
    assert "labels.npz" in same and sorted(f for f in same + fields if f.startswith("records/")) == sorted(
        f"records/{p.name}" for p in records.iterdir()
    )
    manifest = json.loads((records.parent / "manifest.json").read_text())
    assert manifest["summary"]["finished"] == n and len(manifest["problems"]) == n  # nothing twice
    assert not list((records.parent / "scratch").iterdir())


def test_a_sweep_on_ray_equals_local_and_a_killed_worker_is_retried(cluster, tiny_dataset, tmp_path):
    address, sessions = cluster
    cmd = ["agents.sweep", "--domains", "ferry", "--models", "linear", "--dists", "n", "tn"]
    cmd += ["--sigmas", "learn", "--residuals", "hff", "--seeds", "0", "--steps", "5", "--problems", "2"]
    cmd += ["--limit", "200", "--split", "test", "--data", str(tiny_dataset), "--quiet"]
    _run([*cmd, "--jobs", "2", "--out", str(tmp_path / "local")])
    killer = WorkerKiller(sessions, "agents.supervised")  # a training job's worker
    killer.start()
    done = _run([*cmd, "--backend", "ray", "--address", address, "--out", str(tmp_path / "ray")])
    killer.stop.set()
    assert killer.killed is not None, "no Ray worker was caught in the middle of a training"
    assert "will be retried" in done.stdout + done.stderr
    same, fields = _compare(tmp_path / "local", tmp_path / "ray")
    for run in ("ferry__linear__n__learn__hff__s0", "ferry__linear__tn__learn__hff__s0"):
        assert {f"{run}/best.safetensors", f"{run}/model.json", f"{run}/thresholds.json"} <= set(same)
        assert f"{run}/metrics.json" in same + fields
    assert {"report/table1.md", "report/table2.md"} <= set(same)
    logs = sorted(p.name for p in (tmp_path / "ray" / "logs").iterdir())
    assert logs == sorted(p.name for p in (tmp_path / "local" / "logs").iterdir())  # no pid file left


def test_an_evaluation_on_ray_equals_local(cluster, tiny_dataset, tmp_path):
    """``agents.evaluate --backend ray``: each worker process initialises once, results come back
    to the driver, which writes them as the local backend does."""
    address, _ = cluster
    cmd = ["agents.evaluate", "--heuristic", "hff", "--domain", "ferry", "--split", "test"]
    cmd += ["--data", str(tiny_dataset), "--limit", "200", "--quiet"]
    _run([*cmd, "--jobs", "2", "--out", str(tmp_path / "local")])
    _run([*cmd, "--backend", "ray", "--address", address, "--out", str(tmp_path / "ray")])
    same, fields = _compare(tmp_path / "local", tmp_path / "ray")
    assert sorted(same + fields) == ["problems/ferry-l7-c7-s1.json", "problems/ferry-l7-c7-s2.json",
                                     "problems/ferry-l7-c7-s3.json", "summary.json"]  # fmt: skip
    # each search's memory limit is its process's share: of this machine's default for 2 local
    # jobs, of its node's for a Ray worker (a node of 1 CPU runs one unit at once)
    from pddlgym_sl.memory import default_memory_limit

    default = default_memory_limit() / 2**20
    for out, share in (("local", default / 2), ("ray", default)):
        for record in (tmp_path / out / "problems").glob("*.json"):
            assert json.loads(record.read_text())["memory_limit"] == pytest.approx(share, rel=1e-3)


def test_ray_workers_get_one_thread_each_and_the_initializer_once(cluster):
    from pddlgym_sl.parallel import CHILD_ENV, Backend, Unit, run_units
    from tests import parallel_helpers as helpers

    address, _ = cluster
    facts, states = [], []
    backend = Backend("ray", address=address)
    run_units(
        helpers.worker_facts,
        [Unit(str(x), (x,)) for x in range(4)],
        backend,
        on_result=lambda u, r: facts.append(r),
    )
    assert {(f["omp"], f["numba"]) for f in facts} == {
        (CHILD_ENV["OMP_NUM_THREADS"], CHILD_ENV["NUMBA_NUM_THREADS"])
    }
    units = [Unit(str(x), (x,)) for x in range(6)]
    run_units(helpers.read_state, units, backend, initializer=helpers.init_state, initargs=(5,),
              on_result=lambda u, r: states.append(r))  # fmt: skip
    assert set(states) == {(5, 1)} and len(states) == 6


def _evaluation(data: Path) -> list[str]:
    """GBFS + LM-cut on the tiny dataset's 16 training problems: units of a second or so."""
    cmd = ["agents.evaluate", "--heuristic", "lmcut", "--domain", "ferry", "--split", "train"]
    return [*cmd, "--data", str(data), "--limit", "20000", "--quiet"]


def _same_evaluation(local: Path, remote: Path) -> None:
    same, fields = _compare(local, remote)
    problems = sorted(p.name for p in (local / "problems").iterdir())
    assert len(problems) == 16 and sorted(same + fields) == [
        *(f"problems/{p}" for p in problems),
        "summary.json",
    ]


def test_an_evaluation_on_ray_with_a_killed_worker_equals_local(cluster, tiny_dataset, tmp_path):
    """A worker killed in the middle of a search: Ray runs the unit again, and the evaluation has
    every problem once, equal to the local one (issue 59)."""
    address, sessions = cluster
    cmd = _evaluation(tiny_dataset)
    _run([*cmd, "--jobs", "2", "--out", str(tmp_path / "local")])
    killer = WorkerKiller(sessions, None, after=0.2)
    killer.start()
    done = _run([*cmd, "--backend", "ray", "--address", address, "--out", str(tmp_path / "ray")])
    killer.stop.set()
    assert killer.killed is not None, "no Ray worker was caught in the middle of a search"
    assert "will be retried" in done.stdout + done.stderr
    _same_evaluation(tmp_path / "local", tmp_path / "ray")


class NodeStopper(threading.Thread):
    """Kills every process of the second node's session (its raylet, object store and workers:
    the node is lost, as a preempted machine is) once a unit has run on it for `after` seconds."""

    def __init__(self, session: int, after: float) -> None:
        super().__init__(daemon=True)
        self.session, self.after, self.stopped = session, after, False
        self.stop = threading.Event()

    def run(self) -> None:
        started = None
        while not self.stop.is_set():
            processes = _processes()
            busy = any(cmd.startswith("ray::_run_unit") for pid, (_, cmd) in processes.items()
                       if pid in _in_sessions({self.session}))  # fmt: skip
            if busy:
                started = started or time.perf_counter()
                if time.perf_counter() - started >= self.after:
                    for pid in _in_sessions({self.session}):
                        os.kill(pid, signal.SIGKILL)
                    self.stopped = True
                    return
            time.sleep(0.02)


def test_an_evaluation_that_loses_a_node_finishes_on_the_head(doomed_cluster, tiny_dataset, tmp_path):
    address, sessions = doomed_cluster
    cmd = _evaluation(tiny_dataset)
    _run([*cmd, "--jobs", "2", "--out", str(tmp_path / "local")])
    stopper = NodeStopper(sessions[1], after=0.5)
    stopper.start()
    _run([*cmd, "--backend", "ray", "--address", address, "--out", str(tmp_path / "ray")])
    stopper.stop.set()
    assert stopper.stopped, "the second node ran no unit to be stopped in"
    assert _in_sessions({sessions[1]}) == []  # the node is gone; the head finished its units
    _same_evaluation(tmp_path / "local", tmp_path / "ray")


def test_a_sweep_that_loses_a_node_finishes_on_the_head(doomed_cluster, tiny_dataset, tmp_path):
    address, sessions = doomed_cluster
    cmd = ["agents.sweep", "--domains", "ferry", "--models", "linear", "--dists", "n", "tn"]
    cmd += ["--sigmas", "learn", "--residuals", "hff", "--seeds", "0", "--steps", "200", "--problems", "2"]
    cmd += ["--limit", "200", "--split", "test", "--data", str(tiny_dataset), "--quiet"]
    _run([*cmd, "--jobs", "2", "--out", str(tmp_path / "local")])
    stopper = NodeStopper(sessions[1], after=1.0)
    stopper.start()
    _run([*cmd, "--backend", "ray", "--address", address, "--out", str(tmp_path / "ray")])
    stopper.stop.set()
    assert stopper.stopped, "the second node ran no training to be stopped in"
    same, fields = _compare(tmp_path / "local", tmp_path / "ray")
    for run in ("ferry__linear__n__learn__hff__s0", "ferry__linear__tn__learn__hff__s0"):
        assert {f"{run}/best.safetensors", f"{run}/model.json"} <= set(same)
        assert f"{run}/metrics.json" in same + fields
