"""`pddlgym_sl.parallel`: the units loop on each local backend (results, dependencies, failures,
early stop, worker settings), the guard that takes a command's children with it, interrupts that
end a command with one line and leave nothing running, and Ray kept out of the default install."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.parallel import CHILD_ENV, Backend, Unit, WorkerError, run_units
from pddlgym_sl.parallel.children import guarded
from tests import parallel_helpers as helpers
from tests.problems import ROOT

LINUX = Path("/proc/self/environ").exists()
needs_proc = pytest.mark.skipif(not LINUX, reason="needs Linux's /proc")
LOCAL = [Backend(jobs=1), Backend(jobs=2)]


@pytest.mark.parametrize("backend", LOCAL, ids=["inline", "processes"])
def test_every_unit_runs_once_and_results_come_back_here(backend):
    seen = {}
    outcome = run_units(
        helpers.square,
        [Unit(str(x), (x,)) for x in range(7)],
        backend,
        on_result=lambda u, r: seen.update({u.key: r}),
    )
    assert seen == {str(x): x * x for x in range(7)}
    assert sorted(outcome.succeeded, key=int) == [str(x) for x in range(7)] and outcome.failed == {}


def test_threads_dependencies_and_failures():
    """A unit after a failed one is not run; one after a succeeded one runs after it."""
    order = []

    def verdict(unit, result):
        order.append(unit.key)
        return "bad result" if result == 4 else None  # b: 2 * 2

    units = [Unit("a", (1,)), Unit("b", (2,)), Unit("a2", (3,), after="a"), Unit("b2", (4,), after="b")]
    outcome = run_units(helpers.square, units, Backend(jobs=2), on_result=verdict, threads=True)
    assert set(outcome.succeeded) == {"a", "a2"} and order.index("a") < order.index("a2")
    assert outcome.failed == {"b": "bad result", "b2": "not run: b failed"} and "b2" not in order
    with pytest.raises(ValueError, match="unknown units"):
        run_units(helpers.square, [Unit("x", (1,), after="y")])
    with pytest.raises(ValueError, match="wait on each other"):
        run_units(helpers.square, [Unit("x", (1,), after="y"), Unit("y", (2,), after="x")])


@pytest.mark.parametrize("backend", LOCAL, ids=["inline", "processes"])
def test_a_unit_that_raises_stops_the_run_and_its_error_comes_here(backend):
    done = []
    units = [Unit(str(x), (x, 3)) for x in range(12)]
    with pytest.raises(ValueError, match="unit 3 fails"):
        run_units(helpers.fail_on, units, backend, on_result=lambda u, r: done.append(r))
    assert 3 not in done and len(done) < 12


def test_keep_going_ends_the_run_early_in_order():
    done = []
    outcome = run_units(
        helpers.square,
        [Unit(str(x), (x,)) for x in range(10)],
        on_result=lambda u, r: done.append(u.key),
        keep_going=lambda: len(done) < 4,
    )
    assert done == ["0", "1", "2", "3"] and outcome.succeeded == done


@needs_proc
def test_workers_get_one_thread_their_own_group_and_the_initializer_once():
    facts = []
    run_units(
        helpers.worker_facts,
        [Unit(str(x), (x,)) for x in range(4)],
        Backend(jobs=2),
        on_result=lambda u, r: facts.append(r),
    )
    assert {(f["omp"], f["numba"]) for f in facts} == {
        (CHILD_ENV["OMP_NUM_THREADS"], CHILD_ENV["NUMBA_NUM_THREADS"])
    }
    assert all(f["leader"] and f["ppid"] == os.getpid() for f in facts)
    assert len({f["pid"] for f in facts}) <= 2  # two workers, each reused
    states = []
    run_units(
        helpers.read_state,
        [Unit(str(x), (x,)) for x in range(4)],
        Backend(jobs=2),
        initializer=helpers.init_state,
        initargs=(7,),
        on_result=lambda u, r: states.append(r),
    )
    assert set(states) == {(7, 1)} and len(states) == 4  # once per worker process


def test_this_process_keeps_its_environment():
    before = {k: os.environ.get(k) for k in CHILD_ENV}
    run_units(helpers.square, [Unit(str(x), (x,)) for x in range(3)], Backend(jobs=2))
    assert {k: os.environ.get(k) for k in CHILD_ENV} == before


def test_backend_arguments_are_checked():
    with pytest.raises(ConfigError, match="--address needs --backend ray"):
        Backend("local", 2, "auto")
    with pytest.raises(ConfigError, match="unknown backend"):
        Backend("slurm")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="--jobs must be > 0"):
        Backend(jobs=0)
    from pddlgym_sl.data.generate import Args as GenerateArgs

    with pytest.raises(ConfigError, match="--address needs --backend ray"):
        GenerateArgs(domain="ferry", split="train", address="auto")


# ----------------------------------------------------------------------------- the guard
def _guard_status(code: str) -> int:
    return subprocess.run(guarded([sys.executable, "-c", code]), timeout=60).returncode


def test_the_guard_exits_as_its_command_did():
    assert _guard_status("raise SystemExit(3)") == 3
    assert _guard_status("pass") == 0
    assert _guard_status("import os, signal; os.kill(os.getpid(), signal.SIGKILL)") == -signal.SIGKILL
    assert _guard_status("import os, signal; os.kill(os.getpid(), signal.SIGXCPU)") == -signal.SIGXCPU


@needs_proc
def test_kill_9_of_the_caller_takes_the_commands_grandchildren_with_it():
    """A command under the guard whose own child does not die with it (as Fast Downward's
    translator and search): kill -9 of the process that started it leaves nothing running."""
    env = helpers.new_marker()
    code = textwrap.dedent(
        """
        import subprocess, sys, time
        from pddlgym_sl.parallel.children import guarded
        sleep = "import time; time.sleep(120)"
        child = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {sleep!r}]); {sleep}"
        subprocess.Popen(guarded([sys.executable, "-c", child]))
        time.sleep(120)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=ROOT, start_new_session=True)
    deadline = time.time() + 60
    while len(helpers.ours(env)) < 4 and time.time() < deadline:  # caller, guard, child, grandchild
        time.sleep(0.05)
    assert len(helpers.ours(env)) == 4, helpers.ours(env)
    os.kill(proc.pid, signal.SIGKILL)  # the caller only, not its group
    proc.wait()
    assert helpers.left_after(env, time.time()) == []


# ------------------------------------------------------------------- interrupts (threads)
SLEEPERS = textwrap.dedent(
    """
    import sys
    from pddlgym_sl.parallel import Backend, Unit, interrupted, run_command, run_units, stop_on_signals

    def sleeper(seconds):
        return run_command([sys.executable, "-c", f"import time; time.sleep({seconds})"])

    if __name__ == "__main__":
        try:
            with stop_on_signals():
                run_units(sleeper, [Unit(str(i), (60,)) for i in range(4)], Backend(jobs=2), threads=True)
        except KeyboardInterrupt as exc:
            sys.exit(interrupted(exc, "nothing to keep"))
    """
)


@needs_proc
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_commands_at_once_with_one_line(tmp_path, signum):
    script = tmp_path / "sleepers.py"
    script.write_text(SLEEPERS)
    env = helpers.new_marker()
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        env=env,
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=helpers.as_foreground_job,
    )
    deadline = time.time() + 60
    while len(helpers.ours(env)) < 5 and time.time() < deadline:  # the script, 2 guards, 2 commands
        time.sleep(0.05)
    assert len(helpers.ours(env)) == 5, helpers.ours(env)
    sent = time.time()
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signum)  # Ctrl-C at a terminal: the whole foreground group
    else:
        os.kill(proc.pid, signum)
    _, err = proc.communicate(timeout=30)
    assert helpers.left_after(env, sent) == []
    assert proc.returncode == 128 + signum
    assert err.strip().splitlines() == [
        f"interrupted ({signal.Signals(signum).name}): nothing to keep; run the same command again to resume"
    ]


# -------------------------------------------------------------------------------- no Ray
def test_ray_is_neither_imported_nor_needed_by_default():
    code = textwrap.dedent(
        """
        import sys
        from pddlgym_sl.parallel import Backend, Unit, run_units
        from tests.parallel_helpers import square
        if __name__ == "__main__":
            run_units(square, [Unit("a", (2,)), Unit("b", (3,))], Backend(jobs=2))
            import pddlgym_sl.data.generate, agents.apps.evaluate, agents.apps.sweep
            assert "ray" not in sys.modules, "ray imported"
            print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_backend_ray_without_ray_names_the_cluster_extra(tmp_path):
    from tests.test_extras import _run_hiding

    args = ["--domain", "ferry", "--split", "train", "--backend", "ray", "--out", str(tmp_path)]
    out = _run_hiding("ray", "pddlgym_sl.data.generate", *args)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "needs the [cluster] extra" in out.stderr and 'pip install -e ".[cluster]"' in out.stderr
    assert not any(tmp_path.iterdir())  # refused before any work


def test_a_worker_that_dies_is_a_typed_error():
    with pytest.raises(WorkerError, match="worker process died"):
        run_units(os._exit, [Unit("a", (3,))], Backend(jobs=2))


def test_a_resume_removes_what_writers_killed_mid_write_left_and_nothing_else(tmp_path):
    """Temporaries of atomic writes carry host and pid: a dead writer's of this machine go; a live
    writer's, another machine's and names of another form stay."""
    from pddlgym_sl.io import _HOST, atomic_write_text, remove_orphaned_temporaries

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    pid = int(dead.stdout)
    sub = tmp_path / "labels"
    atomic_write_text(sub / "a.json", "{}")
    orphan = sub / f".a.json.{_HOST}~{pid}.k3j2h1.tmp"
    kept = [
        sub / f".a.json.{_HOST}~{os.getpid()}.x1.tmp",
        sub / f".a.json.elsewhere~{pid}.x2.tmp",
        sub / ".a.json.x3.tmp",
    ]
    for path in [orphan, *kept]:
        path.write_text("partial")
    assert remove_orphaned_temporaries(tmp_path) == 1
    assert not orphan.exists() and all(p.exists() for p in kept) and (sub / "a.json").read_text() == "{}"


def test_a_ray_address_where_nothing_answers_is_a_typed_error():
    import socket

    from pddlgym_sl.parallel.ray_backend import check_reachable

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    with pytest.raises(ConfigError, match=f"cannot join the Ray cluster at 127.0.0.1:{port}: nothing"):
        check_reachable(f"127.0.0.1:{port}")
    check_reachable("auto")  # left to Ray
