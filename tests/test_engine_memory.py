"""The engine's compact storage: packed states (round trip, successors), the open lists' order
(against a sorted reference), the operator recovered for a plan step, and the memory limit (a search
that needs more ends with status ``memory_limit`` within the limit, in a fresh process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import domains
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.plan import main as plan_main
from pddlgym_sl.plan import resolve_task
from pddlgym_sl.search import gbfs
from pddlgym_sl.search import open_lists as ol
from pddlgym_sl.search.packing import apply_packed, pack_state, task_packing, unpack

DOMAINS = tuple(domains.DOMAIN_NAMES)
IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"


@pytest.fixture(scope="module")
def tasks_by_domain() -> dict:
    """A generated problem of each bundled domain (their plan defaults)."""
    return {d: resolve_task(d, None, {}, 1) for d in DOMAINS}


def _random_walk(task, steps: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    state, states = task.init, [task.init]
    for _ in range(steps):
        succ = task.successors(state)
        if not succ:
            break
        state = succ[rng.integers(len(succ))][1]
        states.append(state)
    return states


@pytest.mark.parametrize("domain", DOMAINS)
def test_packed_states_round_trip_and_follow_the_operators(domain, tasks_by_domain):
    task = tasks_by_domain[domain]
    packing, init = task_packing(task)
    assert packing.n_words * 32 >= sum(int(m).bit_count() for m in packing.var_mask)
    words = np.empty(task.n_words, dtype=np.uint64)
    child = np.empty(packing.n_words, dtype=np.uint32)
    for state in _random_walk(task, 40, seed=1):
        packed = pack_state(task, packing, state.words)
        unpack(packed, packing, words)
        assert words.tobytes() == bytes(state)
        for a, succ in task.successors(state):
            apply_packed(packed, a, packing, child)
            assert child.tobytes() == pack_state(task, packing, succ.words).tobytes()
    assert init.tobytes() == pack_state(task, packing, task.init.words).tobytes()


@pytest.mark.skipif(not IPC.is_dir(), reason="needs ../shared/ipc23-lt")
@pytest.mark.parametrize("domain", ["childsnack", "floortile", "rovers", "sokoban", "transport"])
def test_packed_ipc_states_round_trip(domain):
    from pddlgym_sl import load_task

    task = load_task(IPC / domain / "domain.pddl", sorted((IPC / domain / "testing-easy").glob("*.pddl"))[0])
    packing, _ = task_packing(task)
    words = np.empty(task.n_words, dtype=np.uint64)
    for state in _random_walk(task, 60, seed=2):
        unpack(pack_state(task, packing, state.words), packing, words)
        assert words.tobytes() == bytes(state)


def test_packing_is_denser_than_fact_bits_on_multi_valued_variables():
    task = resolve_task("ferry", None, {"locations": 20, "cars": 20}, 1)
    packing, _ = task_packing(task)
    assert packing.n_words * 4 < task.n_words * 8  # 20 locations: 5 bits per car instead of 21


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 40)), min_size=1, max_size=700))
def test_bucket_queue_pops_by_key_then_first_in_first_out(ops):
    b = ol.new_buckets(n_keys=4, n_chunks=2)
    reference: list[tuple[int, int, int]] = []
    seq = 0
    for is_push, key in ops:
        if is_push or not reference:
            b = ol.grow_buckets(b, key + 1, 2)
            ol.buckets_push(b, key, seq)
            reference.append((key, seq, seq))
            seq += 1
        else:
            reference.sort()
            assert ol.buckets_pop(b) == reference.pop(0)[2]
    reference.sort()
    while reference:
        assert ol.buckets_pop(b) == reference.pop(0)[2]
    assert ol.buckets_pop(b) == -1


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 2), st.lists(st.tuples(st.booleans(), st.integers(0, 6), st.integers(0, 3)), max_size=300)
)
def test_heap_pops_by_keys_then_first_in_first_out(nk, ops):
    h = ol.new_heap(nk, capacity=2)
    reference: list[tuple] = []
    seq = 0
    for is_push, k0, k1 in ops:
        if is_push or not reference:
            h = ol.grow_heap(h, 1)
            ol.heap_push(h, float(k0), float(k1), seq)
            reference.append((k0, k1 if nk > 1 else 0, seq))
            seq += 1
        else:
            reference.sort()
            assert ol.heap_pop(h) == reference.pop(0)[2]
    reference.sort()
    while reference:
        assert ol.heap_pop(h) == reference.pop(0)[2]
    assert ol.heap_pop(h) == -1


def test_plans_replay_with_the_recovered_operators(tasks_by_domain):
    for domain in DOMAINS:
        task = tasks_by_domain[domain]
        result = gbfs(task, "hff", max_evaluations=None)
        assert result.solved
        assert task.is_goal(task.validate_plan(result.plan_indices)[-1])


def test_a_bad_memory_limit_is_refused(tasks_by_domain):
    with pytest.raises(ConfigError, match="memory_limit"):
        gbfs(tasks_by_domain["ferry"], "hff", memory_limit=0)


_LIMITED = """
import json, resource, sys
from pddlgym_sl.memory import rss_bytes
from pddlgym_sl.plan import resolve_task
from pddlgym_sl.search import gbfs
task = resolve_task("ferry", None, {"locations": 40, "cars": 40}, 1)
gbfs(task, "blind", max_evaluations=50)  # compile first: compilation has its own peak
base = rss_bytes()
limit_mb = base / 2**20 + float(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
result = gbfs(task, "blind", max_evaluations=None, memory_limit=limit_mb)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"status": result.status, "evaluations": result.evaluations, "limit": limit_mb * 2**20,
                  "peak": peak, "before": before}))
"""


def test_a_search_that_needs_more_memory_ends_with_memory_limit_within_it():
    """Blind GBFS on ferry with 40 cars never ends; with 40 MB above what the process holds it must
    stop with status memory_limit, and the process's peak resident memory must stay under the limit."""
    out = subprocess.run([sys.executable, "-c", _LIMITED, "40"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["status"] == "memory_limit"
    assert r["evaluations"] > 100_000  # it used the memory it had, at tens of bytes per state
    assert r["peak"] <= r["limit"] or r["peak"] <= r["before"]


_HOARDING = """
import json, sys
import numpy as np
from pddlgym_sl.memory import rss_bytes
from pddlgym_sl.plan import resolve_task
from pddlgym_sl.search import gbfs
task = resolve_task("ferry", None, {"locations": 40, "cars": 40}, 1)
kept = []
def hoarding(states):  # a heuristic that keeps 8 MB per call, as a memo without a budget would
    kept.append(np.ones(8 << 20, dtype=np.uint8))
    return np.zeros(len(states))
gbfs(task, hoarding, max_evaluations=5)
limit_mb = rss_bytes() / 2**20 + 200
result = gbfs(task, hoarding, max_evaluations=None, memory_limit=limit_mb)
print(json.dumps({"status": result.status, "calls": len(kept), "rss": rss_bytes(),
                  "limit": limit_mb * 2**20}))
"""


def test_a_python_heuristic_that_outgrows_the_limit_ends_the_search_with_memory_limit():
    """The memory a Python heuristic keeps is not among the search's own bytes: the search checks
    the process's resident memory before each call and ends with memory_limit, a call's worth past
    the limit at most."""
    out = subprocess.run([sys.executable, "-c", _HOARDING], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["status"] == "memory_limit"
    assert 20 <= r["calls"] <= 40  # 200 MB of 8 MB calls, with the search's own bytes beside
    assert r["rss"] <= r["limit"] + (16 << 20)


def test_a_heuristic_out_of_memory_ends_the_search_with_memory_limit(tasks_by_domain):
    """A Python heuristic whose arrays cannot be allocated (`MemoryError`: the NLM's arity-3 arrays
    on a task of thousands of objects, `agents.models.nlm.fast.arrays.allocate`) ends the search
    with status memory_limit and its statistics, instead of an exception."""
    calls = []

    def failing(states):
        calls.append(len(states))
        if len(calls) == 3:
            raise MemoryError("no room")
        return np.zeros(len(states))

    result = gbfs(tasks_by_domain["ferry"], failing, max_evaluations=None)
    assert result.status == "memory_limit" and not result.solved
    assert result.evaluations == 1 + calls[1]  # the initial state, then the first expansion's batch


def test_large_nlm_arrays_are_refused_when_the_machine_cannot_give_them(monkeypatch):
    import agents.models.nlm.fast.arrays as arrays

    monkeypatch.setattr(arrays, "available_now_bytes", lambda: 100 << 20)
    assert arrays.allocate(1 << 20, np.float32).size == 1 << 20  # 4 MB: not checked
    with pytest.raises(MemoryError, match="400 MB; the machine has 100 MB available"):
        arrays.allocate(100 << 20, np.float32)
    ws = arrays.Workspace()
    with pytest.raises(MemoryError):
        ws.get("q", (100 << 20,), np.float32)


def test_plan_command_reports_the_memory_limit(capsys, tmp_path):
    problem = tmp_path / "p.pddl"
    problem.write_text(domains.generate_problem("ferry", seed=1, locations=40, cars=40))
    argv = [str(domains.domain_file("ferry")), str(problem), "--heuristic", "blind", "--json"]
    code = plan_main([*argv, "--max-evaluations", "100000000", "--memory-limit", "1"])
    assert code == 1
    assert json.loads(capsys.readouterr().out)["status"] == "memory_limit"


def _child_rss(queue) -> None:
    from pddlgym_sl.memory import rss_bytes

    before = rss_bytes()
    block = np.ones(64 << 20, dtype=np.uint8)  # 64 MiB, written: resident in the child only
    queue.put((before, rss_bytes(), int(block[-1])))


def test_resident_memory_is_the_callers_after_a_fork():
    """`rss_bytes` keeps /proc/self/statm open; a forked child must read its own, not the
    descriptor it inherited (which names the parent, whose memory does not change)."""
    import multiprocessing

    from pddlgym_sl.memory import rss_bytes

    rss_bytes()  # opens the descriptor in this process
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_rss, args=(queue,))
    child.start()
    before, after, _ = queue.get(timeout=60)
    child.join(timeout=60)
    assert after - before >= 48 << 20


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 30), st.integers(0, 30)), min_size=1, max_size=500),
    st.integers(0, 500),
)
def test_paired_buckets_pop_as_astar_orders_and_carry_over_into_a_heap(ops, switch):
    """A*'s buckets keyed by f (f + 1) / 2 + h pop by f, then h, then first in first out (Fast
    Downward's tie-breaking open list); turned into a heap midway, the order goes on unchanged."""
    b = ol.new_buckets(n_keys=4, n_chunks=2, paired=True)
    reference: list[tuple[int, int, int]] = []
    for step, (is_push, f, h) in enumerate(ops):
        f, h = max(f, h), min(f, h)  # 0 <= h <= f, as g >= 0
        if step == switch:
            b = ol.buckets_to_heap(b, 1)
        if is_push or not reference:
            if isinstance(b, ol.Buckets):
                b = ol.grow_buckets(b, int(ol.pair_key(f, h)) + 1, 2)
                ol.buckets_push(b, ol.buckets_key(b, float(f), float(h)), step)
            else:
                b = ol.grow_heap(b, 1)
                ol.heap_push(b, float(f), float(h), step)
            reference.append((f, h, step))
        else:
            reference.sort()
            pop = ol.buckets_pop if isinstance(b, ol.Buckets) else ol.heap_pop
            assert pop(b) == reference.pop(0)[2]
    reference.sort()
    pop = ol.buckets_pop if isinstance(b, ol.Buckets) else ol.heap_pop
    while reference:
        assert pop(b) == reference.pop(0)[2]
    assert pop(b) == -1
