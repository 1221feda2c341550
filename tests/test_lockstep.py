"""Lockstep GBFS (`agents.lockstep`): several searches advanced together, one forward pass per round,
each node for node the search it is alone (same states evaluated in the same batches, same values,
bit for bit), on problems of different sizes, with one or two threads."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import domains
from agents import lockstep as lockstep_module
from agents.errors import AgentError
from agents.heads import make_head
from agents.learned_heuristic import LearnedHeuristic, TrainedModel, evaluate_together
from agents.lockstep import LockstepSearch, lockstep, lockstep_gbfs
from agents.models import make_model
from agents.models.mlp import input_names
from agents.models.nlm.fast import arity3_memo
from pddlgym_sl import load_task
from pddlgym_sl.envs.encoders.schema import Schema
from pddlgym_sl.search import gbfs

SIZES = [(4, 3, 1), (7, 6, 2), (5, 5, 3), (3, 2, 4), (6, 7, 5)]  # locations, cars, seed: 5..13 objects


@pytest.fixture(scope="module")
def ferry_tasks(tmp_path_factory):
    root = tmp_path_factory.mktemp("lockstep")
    tasks = []
    for locations, cars, seed in SIZES:
        path = root / f"ferry-{locations}-{cars}-{seed}.pddl"
        path.write_text(domains.generate_problem("ferry", seed=seed, locations=locations, cars=cars))
        tasks.append(load_task(domains.domain_file("ferry"), path))
    return tasks


def _trained(model: str, tasks) -> TrainedModel:
    """An untrained model of the paper's configuration (TN, learned σ, hFF residual, LM-cut bound)."""
    head = make_head("tn", sigma="learn", residual="hff", bound="lmcut")
    torch.manual_seed(0)
    if model == "nlm":
        schema = Schema.from_domain_file(domains.domain_file("ferry"))
        config = {"in_channels": {k: 2 * len(preds) for k, preds in schema.by_arity.items()}}
    elif model == "mlp":
        config = {"vocabulary": sorted(set().union(*(input_names(t) for t in tasks)))}
    else:
        config = {}
    network = make_model(model, n_outputs=head.n_outputs, **config).eval()
    return TrainedModel(network, head, model, "ferry", None)


class _Recorder:
    """The batches each search evaluated and the values it got, keyed by its heuristic."""

    def __init__(self) -> None:
        self.log: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}

    def add(self, heuristic, states, values) -> None:
        self.log.setdefault(id(heuristic), []).append((np.array(states), np.array(values)))

    def alone(self, heuristic):
        def evaluate(states):
            values = heuristic.batch(states)
            self.add(heuristic, states, values)
            return values

        return evaluate


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request):
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


@pytest.mark.parametrize("model", ["nlm", "nlm-incremental", "hgn", "mlp"])
@pytest.mark.parametrize("width", [2, 5])
def test_lockstep_is_node_for_node_the_search_alone(ferry_tasks, model, width, threads, monkeypatch):
    if model == "nlm-incremental":  # the NLM's memo with references on these small problems too
        monkeypatch.setattr(arity3_memo, "INCREMENTAL_FROM", 0)
        model = "nlm"
    trained = _trained(model, ferry_tasks)
    budget = 60
    alone, together = _Recorder(), _Recorder()
    single_h = [LearnedHeuristic(trained, t) for t in ferry_tasks]
    single = [
        gbfs(t, alone.alone(h), max_evaluations=budget) for t, h in zip(ferry_tasks, single_h, strict=True)
    ]

    def recording(heuristics, batches, uppers=None, confidences=False):
        out = evaluate_together(heuristics, batches, uppers, confidences)
        for h, states, (values, _) in zip(heuristics, batches, out, strict=True):
            together.add(h, states, values)
        return out

    monkeypatch.setattr(lockstep_module, "evaluate_together", recording)
    lock_h = [LearnedHeuristic(trained, t) for t in ferry_tasks]
    results = lockstep_gbfs(ferry_tasks, lock_h, width=width, max_evaluations=budget)
    assert sum(len(v) for v in together.log.values()) == sum(len(v) for v in alone.log.values())
    for a, b, ha, hb in zip(single, results, single_h, lock_h, strict=True):
        assert (a.status, a.plan, a.evaluations, a.expansions, a.generated) == (
            b.status,
            b.plan,
            b.evaluations,
            b.expansions,
            b.generated,
        )
        seq_a, seq_b = alone.log[id(ha)], together.log[id(hb)]
        assert len(seq_a) == len(seq_b) > 1
        for (sa, va), (sb, vb) in zip(seq_a, seq_b, strict=True):
            np.testing.assert_array_equal(sa, sb)
            np.testing.assert_array_equal(va, vb)  # bit for bit
    assert any(r.solved for r in results) and any(not r.solved for r in results)


def test_agents_asks_mkl_for_reproducible_products_unless_told_otherwise():
    """Without strict reproducibility, MKL rounded the MLP's and STRIPS-HGN's products differently
    with their operands' alignment on an AMD EPYC here (values a few ulps apart in lockstep and
    alone: the test above failed with two threads); `agents` sets MKL_CBWR before the first one."""
    import subprocess
    import sys

    code = "import os, agents; print(os.environ['MKL_CBWR'])"
    env = {k: v for k, v in os.environ.items() if k != "MKL_CBWR"}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "AUTO,STRICT"
    env["MKL_CBWR"] = "COMPATIBLE"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "COMPATIBLE"


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_a_model_on_an_accelerator_gets_one_forward_pass_per_round(device):
    """On the CPU two threads share a round's forward passes (by memo slot); a model on another
    device (``meta`` stands in for CUDA) gets all of the round in one pass on the first thread, so
    that two passes do not each take the device's free memory as theirs."""
    from types import SimpleNamespace

    from agents.learned_heuristic import _forward_groups

    heuristics = [
        SimpleNamespace(device=torch.device(device), inputs=SimpleNamespace(slot=k)) for k in range(3)
    ]
    batches = [np.zeros((n, 1), np.uint64) for n in (2, 3, 1)]
    groups = _forward_groups(heuristics, batches)
    if device == "cpu":
        assert groups == [[(0, slice(0, 2)), (2, slice(0, 1))], [(1, slice(0, 3))]]
    else:
        assert groups == [[(0, slice(0, 2)), (1, slice(0, 3)), (2, slice(0, 1))]]


@pytest.mark.parametrize("incremental", [False, True], ids=["memo", "memo-references"])
def test_one_search_splits_its_forward_pass_over_two_threads(ferry_tasks, incremental, monkeypatch):
    """With two threads, one search's batch is evaluated in two halves, one per thread (each with
    its own memo shard): every value equals the one-thread evaluation of the whole batch."""
    if incremental:
        monkeypatch.setattr(arity3_memo, "INCREMENTAL_FROM", 0)
    trained = _trained("nlm", ferry_tasks)
    before = torch.get_num_threads()
    try:
        for task in ferry_tasks[:3]:
            logs = []
            for n_threads in (1, 2):
                torch.set_num_threads(n_threads)
                recorder, heuristic = _Recorder(), LearnedHeuristic(trained, task)
                result = gbfs(task, recorder.alone(heuristic), max_evaluations=80)
                logs.append((result.evaluations, result.plan, recorder.log[id(heuristic)]))
            (ev1, plan1, log1), (ev2, plan2, log2) = logs
            assert (ev1, plan1) == (ev2, plan2) and len(log1) == len(log2)
            assert any(len(states) >= 2 for states, _ in log2)  # batches that were split
            for (s1, v1), (s2, v2) in zip(log1, log2, strict=True):
                np.testing.assert_array_equal(s1, s2)
                np.testing.assert_array_equal(v1, v2)  # bit for bit
    finally:
        torch.set_num_threads(before)


def test_one_forward_pass_serves_problems_of_different_sizes(ferry_tasks, threads):
    """`evaluate_together` with the NLM: one batch (per thread) over tasks of 5 to 13 objects gives
    each state the value it gets alone, one state per call."""
    trained = _trained("nlm", ferry_tasks)
    heuristics = [LearnedHeuristic(trained, t) for t in ferry_tasks]
    batches = []
    for task in ferry_tasks:
        states = [task.init] + [s for _, s in task.successors(task.init)]
        states += [s for _, s in task.successors(states[-1])]
        batches.append(task.states_to_array(states))
    calls = []
    model = trained.model
    forward = model.forward
    model.forward = lambda inputs: calls.append(inputs["object_mask"].shape) or forward(inputs)
    try:
        together = evaluate_together(heuristics, batches)
    finally:
        del model.forward
    # one pass per thread (by search), each padded to its largest task
    assert len(calls) == threads and sum(rows for rows, _ in calls) == sum(len(b) for b in batches)
    assert max(n for _, n in calls) == 13 and all(n >= 7 for _, n in calls)
    fresh = [LearnedHeuristic(_trained("nlm", ferry_tasks), t) for t in ferry_tasks]
    for h, states, (values, _) in zip(fresh, batches, together, strict=True):
        alone = np.concatenate([h.batch(states[i : i + 1]) for i in range(len(states))])
        np.testing.assert_array_equal(values, alone)


def test_lockstep_reads_searches_lazily_and_checks_its_width(ferry_tasks):
    trained = _trained("nlm", ferry_tasks)
    built: list[int] = []

    def searches():
        for k, task in enumerate(ferry_tasks):
            built.append(k)
            yield LockstepSearch(k, task, LearnedHeuristic(trained, task))

    stream = lockstep(searches(), width=2, max_evaluations=30)
    first = next(stream)
    assert len(built) == 2 and first[0] in (0, 1)  # only two searches were open
    assert sorted(k for k, _ in [first, *stream]) == list(range(len(ferry_tasks)))
    with pytest.raises(AgentError, match="width"):
        next(lockstep(searches(), width=0))
    other = _trained("nlm", ferry_tasks)
    mixed = [LearnedHeuristic(trained, ferry_tasks[0]), LearnedHeuristic(other, ferry_tasks[1])]
    with pytest.raises(AgentError, match="one trained model"):
        lockstep_gbfs(ferry_tasks[:2], mixed, width=2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_lockstep_on_cuda_equals_the_search_alone(ferry_tasks):
    """On a GPU (the generic PyTorch path) lockstep and one search at a time still visit the
    same nodes with the same values."""
    trained = _trained("nlm", ferry_tasks)
    trained.model.to("cuda")
    single = [gbfs(t, LearnedHeuristic(trained, t, device="cuda"), max_evaluations=100) for t in ferry_tasks]
    heuristics = [LearnedHeuristic(trained, t, device="cuda") for t in ferry_tasks]
    results = lockstep_gbfs(ferry_tasks, heuristics, width=3, max_evaluations=100)
    for a, b in zip(single, results, strict=True):
        assert (a.plan, a.evaluations, a.expansions) == (b.plan, b.evaluations, b.expansions)
