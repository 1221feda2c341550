"""Batches cut to fit memory (`agents.micro_batches`): the cut itself, a training step computed in
parts equal to the whole batch's, and a clear error instead of an out-of-memory kill."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.micro_batches import MemoryBudgetError, fitting_chunks, memory_budget, state_cost
from agents.models import make_model
from agents.training.configs import SupervisedConfig
from agents.training.supervised import Trainer


def cubic(n: int) -> int:
    return n**3 << 14  # 16 KB per object triple


def test_chunks_cover_the_batch_in_order_and_each_fits():
    rows = np.array([0, 2, 3, 5, 8, 9, 11])
    sizes = np.array([4, 0, 6, 6, 0, 8, 0, 0, 5, 5, 0, 9])
    budget = 3 * cubic(8)
    chunks = fitting_chunks(rows, sizes, cubic, budget)
    assert len(chunks) > 1
    assert np.array_equal(np.concatenate(chunks), rows)
    for chunk in chunks:  # padded to the chunk's largest state
        assert len(chunk) * cubic(int(sizes[chunk].max())) <= budget
    assert len(fitting_chunks(rows, sizes, cubic, 10**9)) == 1
    assert len(fitting_chunks(rows, sizes, None, 0)) == 1  # a model that does not say is never cut


def test_a_state_that_alone_does_not_fit_is_a_clear_error():
    message = r"9 objects needs about 11 MB .* 8 MB .*\(--memory-limit MB\)"
    with pytest.raises(MemoryBudgetError, match=message):
        fitting_chunks(np.array([0, 1]), np.array([3, 9]), cubic, cubic(8))


def test_a_cuda_budget_is_the_devices_free_memory(monkeypatch):
    """On CUDA the budget is the device's free memory and what PyTorch's allocator holds unused (the
    host's limit does not bound GPU memory), less the slack; other accelerators have no budget."""
    from pddlgym_sl.memory import SLACK_BYTES

    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (10 << 30, 80 << 30))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device: 3 << 30)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device: 1 << 30)
    assert memory_budget(None, "cuda:0") == (12 << 30) - 2 * SLACK_BYTES
    assert memory_budget(64.0) == 0  # the host: a 64 MB limit leaves nothing to this process
    model = make_model(name="nlm", in_channels={1: 4, 2: 10}, n_outputs=2)
    assert state_cost(model) == model.state_bytes
    assert state_cost(model.to("meta")) is None


def generic_nlm_and_batch(n: int, states: int):
    """A seeded NLM on PyTorch's generic operations (what runs on CUDA) and a random batch of
    `states` states of `n` objects."""
    torch.manual_seed(0)
    model = make_model(name="nlm", in_channels={0: 2, 1: 4, 2: 6}, n_outputs=2).eval()
    model.fused = False
    x = {
        f"arity{k}": (torch.rand((states, *([n] * k), c)) < 0.3).float() for k, c in model.in_channels.items()
    }
    x["object_mask"] = torch.ones(states, n, dtype=torch.bool)
    return model, x


def test_a_gradient_free_nlm_pass_outside_the_compiled_plan_is_cut_to_fit(monkeypatch):
    """The NLM's generic forward (what runs on CUDA) cuts a search batch that does not fit the
    device's memory into runs of rows: the same outputs, in order, and a clear error when one
    state alone does not fit."""
    import agents.models.nlm.network as network

    n, states = 7, 11
    model, x = generic_nlm_and_batch(n, states)
    x["object_mask"][3, 5:] = False  # a smaller problem in the padded batch
    with torch.inference_mode():
        whole = model(x)
        monkeypatch.setattr(network, "SLACK_BYTES", 0)
        monkeypatch.setattr(network, "memory_budget", lambda limit, device: 3 * model.state_bytes(n))
        calls = []
        layers = model._layers_forward
        monkeypatch.setattr(
            model, "_layers_forward", lambda *a: calls.append(len(a[0]["object_mask"])) or layers(*a)
        )
        parts = model(x)
        assert calls == [3, 3, 3, 2]
        torch.testing.assert_close(parts, whole, rtol=1e-6, atol=1e-6)
        monkeypatch.setattr(network, "memory_budget", lambda limit, device: model.state_bytes(n) - 1)
        with pytest.raises(MemoryBudgetError, match="7 objects needs"):
            model(x)


def test_a_device_that_runs_out_anyway_gets_smaller_runs_from_then_on(monkeypatch):
    """Where the estimate proves low (PyTorch's generic operations on CUDA hold more than a CPU
    training step), an out-of-memory error cuts the batch again with a doubled estimate, kept for
    later passes: the same outputs; a single state that does not fit is the device's error."""
    import agents.models.nlm.network as network

    n, states = 6, 8
    model, x = generic_nlm_and_batch(n, states)
    with torch.inference_mode():
        whole = model(x)
        monkeypatch.setattr(network, "SLACK_BYTES", 0)
        monkeypatch.setattr(network, "memory_budget", lambda limit, device: 8 * model.state_bytes(n))
        layers, calls = model._layers_forward, []

        def device_with_room_for(rows: int):
            def forward(inputs, *rest):
                calls.append(len(inputs["object_mask"]))
                if len(inputs["object_mask"]) > rows:
                    raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
                return layers(inputs, *rest)

            return forward

        monkeypatch.setattr(model, "_layers_forward", device_with_room_for(3))
        torch.testing.assert_close(model(x), whole, rtol=1e-6, atol=1e-6)
        assert calls == [8, 4, 2, 2, 2, 2] and model._bytes_scale == 4
        calls.clear()
        model(x)
        assert calls == [2, 2, 2, 2]  # the doubled estimate stays: no failed attempt first
        monkeypatch.setattr(model, "_layers_forward", device_with_room_for(0))
        with pytest.raises(torch.cuda.OutOfMemoryError):
            model(x)


MEASURE = """
import json, re, sys, torch
torch.set_num_threads(1)
from agents.models import make_model
def status(key):  # kB lines of /proc/self/status, in bytes
    return int(re.search(key + r":\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
n, states = int(sys.argv[1]), int(sys.argv[2])
model = make_model(name="nlm", in_channels={0: 2, 1: 4, 2: 10, 3: 2}, n_outputs=2)
def batch(n, b):
    x = {f"arity{k}": (torch.rand((b, *([n] * k), c)) < 0.1).float() for k, c in model.in_channels.items()}
    x["object_mask"] = torch.ones(b, n, dtype=torch.bool)
    return x
model(batch(n, 1)).sum().backward()  # kernels compiled or loaded: their peak is not the pass's
x = batch(n, states)
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak resident set (VmHWM) starts again from the current one
before = status("VmRSS")
model(x).sum().backward()
print(json.dumps({"grown": status("VmHWM") - before, "estimate": states * model.state_bytes(n)}))
"""


def test_the_nlm_estimate_covers_a_measured_training_pass():
    """In a fresh process, the peak memory that a forward and backward pass of the NLM adds (its
    high-water mark reset after the kernels are compiled, whose own peak is larger with an empty
    cache) is below the estimate and not far below it (a loose estimate would cut batches
    needlessly); and the estimate grows with the highest arity's power of the objects."""
    import json
    import subprocess
    import sys

    command = [sys.executable, "-c", MEASURE, "40", "3"]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    measured = json.loads(out.stdout)
    assert 0.4 * measured["estimate"] <= measured["grown"] <= measured["estimate"]
    model = make_model(name="nlm", in_channels={1: 4, 2: 10, 3: 2}, n_outputs=2)
    assert model.state_bytes(40) > 7 * model.state_bytes(20)
    flat = make_model(name="nlm", in_channels={1: 4, 2: 10}, n_outputs=2, breadth=2)
    assert flat.state_bytes(40) < 5 * flat.state_bytes(20)


def _trainer(tiny_dataset, tmp_path, name, loss="nll"):
    config = SupervisedConfig(
        data=tiny_dataset, model="nlm", loss=loss, steps=2, batch_size=32, device="cpu", seed=3
    )
    return Trainer(config, tmp_path / name)


def test_a_step_in_parts_equals_the_whole_batch(tiny_dataset, tmp_path, monkeypatch):
    """With a memory budget of a few states per forward pass the step's gradients are the sums of
    the parts': equal to the whole batch's, to rounding, as are the step's statistics. (The
    gradients are compared, not the weights after AdamW: its first steps move every weight by
    about the learning rate times the sign of its gradient, which rounding can flip where the
    gradient is nearly zero.)"""
    import agents.training.supervised as supervised

    whole = _trainer(tiny_dataset, tmp_path, "whole")
    stats_whole = whole.train_step()
    parts = _trainer(tiny_dataset, tmp_path, "parts")
    budget = 5 * parts.model.state_bytes(int(parts.inputs["train"].sizes().max()))
    monkeypatch.setattr(supervised, "memory_budget", lambda limit, device="cpu": budget)
    calls = []
    forward = parts.model.forward
    monkeypatch.setattr(parts.model, "forward", lambda x: calls.append(1) or forward(x))
    stats_parts = parts.train_step()
    assert len(calls) >= 2  # the batch cut into parts
    for a, b in zip(whole.model.parameters(), parts.model.parameters(), strict=True):
        scale = float(a.grad.abs().max()) + 1e-12
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5 * scale)
    assert stats_whole.keys() == stats_parts.keys()
    for key, value in stats_whole.items():
        assert stats_parts[key] == pytest.approx(value, rel=1e-5)


def test_the_ranking_loss_refuses_a_batch_that_does_not_fit(tiny_dataset, tmp_path, monkeypatch):
    """The ranking loss compares states across the batch, so it is never cut: the step says what
    to change instead of exhausting memory."""
    import agents.training.supervised as supervised

    trainer = _trainer(tiny_dataset, tmp_path, "rank", loss="rank")
    rows = trainer.sampler.batch(0)
    assert len(rows) > 1
    budget = trainer.model.state_bytes(int(trainer.inputs["train"].sizes()[rows].max()))  # one state fits
    monkeypatch.setattr(supervised, "memory_budget", lambda limit, device="cpu": budget)
    with pytest.raises(MemoryBudgetError, match="--loss rank needs the whole batch"):
        trainer.train_step()


def test_a_split_too_large_to_keep_is_encoded_batch_by_batch(tiny_dataset, monkeypatch):
    """Above `ENCODED_BYTES` the NLM's training inputs keep no encoded states (sokoban's would
    take 17 GB) and encode each batch when it is made: the same tensors."""
    import agents.models.nlm.inputs as nlm_inputs
    from pddlgym_sl.data.dataset import load_split

    split = load_split(tiny_dataset / "ferry" / "train")
    kept = nlm_inputs.NLMTrainingInputs(split)
    monkeypatch.setattr(nlm_inputs, "ENCODED_BYTES", 0)
    lazy = nlm_inputs.NLMTrainingInputs(split)
    assert kept.encoded is not None and lazy.encoded is None
    assert lazy.model_config() == kept.model_config()
    rows = np.sort(np.random.default_rng(0).choice(len(split), 40, replace=False))
    a, b = kept.batch(rows, torch.device("cpu")), lazy.batch(rows, torch.device("cpu"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
