"""Checkpoints written by earlier versions still load and compute what they computed.

``tests/data/checkpoints/<model>/`` holds a ``model.json`` and ``best.safetensors`` written by the
code of commit 3145fc2 (before the architecture refactor of issue 13), and ``expected.safetensors``
with a fixed input (``input.*``) and the raw outputs that code computed on it (``raw``).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from agents.checkpoint import CheckpointError, load_training_state, save_training_state
from agents.learned_heuristic import LearnedHeuristic, TrainedModel
from agents.models import HypergraphData
from pddlgym_sl import load_task

CHECKPOINTS = Path(__file__).parent / "data" / "checkpoints"
FERRY = Path(__file__).resolve().parents[1] / "domains" / "ferry" / "domain.pddl"


def _model_input(name: str, stored: dict[str, torch.Tensor]):
    inputs = {k.removeprefix("input."): v for k, v in stored.items() if k.startswith("input.")}
    if name == "hgn":
        n_actions, n_facts = inputs["edge_attr"].shape[0], inputs["x"].shape[0]
        return HypergraphData(**inputs, num_hyperedges=n_actions, num_nodes=n_facts)
    if name == "linear":
        return inputs["features"]
    return inputs


@pytest.mark.parametrize("name", ["nlm", "hgn", "linear"])
def test_old_checkpoints_load_and_compute_the_same(name, tmp_path):
    trained = TrainedModel.load(CHECKPOINTS / name)
    assert trained.name == name and trained.domain == "ferry"
    stored = load_file(CHECKPOINTS / name / "expected.safetensors")
    with torch.no_grad():
        raw = trained.model(_model_input(name, stored))
    torch.testing.assert_close(raw, stored["raw"], rtol=1e-6, atol=1e-6)
    problem = tmp_path / "ferry.pddl"
    problem.write_text(
        "(define (problem p) (:domain ferry) (:objects l0 l1 c0)"
        " (:init (location l0) (location l1) (car c0) (not-eq l0 l1) (not-eq l1 l0)"
        " (at-ferry l0) (empty-ferry) (at c0 l0)) (:goal (and (at c0 l1))))"
    )
    task = load_task(FERRY, problem)
    value = LearnedHeuristic(trained, task)(task.init)
    assert torch.isfinite(torch.tensor(value))


def _bad_run(tmp_path: Path, name: str, damage) -> Path:
    """A copy of the stored linear run with one file damaged by `damage(run_dir)`."""
    run = tmp_path / name
    run.mkdir()
    for f in ("model.json", "best.safetensors"):
        (run / f).write_bytes((CHECKPOINTS / "linear" / f).read_bytes())
    damage(run)
    return run


def _write(name: str, data: bytes):
    return lambda run: (run / name).write_bytes(data)


def _truncate(name: str):
    return lambda run: (run / name).write_bytes((run / name).read_bytes()[:40])


def _replace_by_dir(name: str):
    def damage(run: Path) -> None:
        (run / name).unlink()
        (run / name).mkdir()

    return damage


BAD_RUNS = {
    "weights missing": (lambda run: (run / "best.safetensors").unlink(), "best.safetensors: not found"),
    "weights empty": (_write("best.safetensors", b""), "not a valid safetensors file"),
    "weights truncated": (_truncate("best.safetensors"), "not a valid safetensors file"),
    "weights a directory": (_replace_by_dir("best.safetensors"), "is a directory"),
    "weights of another model": (
        _write("best.safetensors", (CHECKPOINTS / "nlm" / "best.safetensors").read_bytes()),
        "do not fit the model",
    ),
    "model.json not JSON": (_write("model.json", b"{nope"), "model.json:1: not valid JSON"),
    "model.json a list": (_write("model.json", b"[1, 2]"), "not an object"),
    "model.json binary": (_write("model.json", b"\xff\xfe"), "not UTF-8"),
    "model.json without head": (
        _write("model.json", b'{"model": {"name": "linear"}, "domain": "ferry"}'),
        "must hold exactly the fields model, head, domain",
    ),
    "model.json unknown model": (
        _write("model.json", b'{"model": {"name": "nope"}, "head": {}, "domain": "ferry"}'),
        "field 'model.name' must be one of",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_RUNS))
def test_bad_run_directories_give_a_checkpoint_error_naming_the_file(case, tmp_path):
    damage, message = BAD_RUNS[case]
    run = _bad_run(tmp_path, "run", damage)
    with pytest.raises(CheckpointError, match=message) as info:
        TrainedModel.load(run)
    assert info.value.file is not None and info.value.file.startswith(str(run))
    assert "weights_only" not in str(info.value)


class _Payload:
    """Unpickling this would call os.system: torch.load(weights_only=True) must refuse it."""

    def __reduce__(self):
        return (os.system, ("touch pwned",))


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty file"),
        (b"PK\x03\x04 truncated", "a zip archive, truncated or corrupt"),
        ("pickle", "holding pickled objects other than tensors"),
        ("list", "holds a list"),
        # what a file is that torch did not write (issue 59: random bytes were called "pickled objects")
        (
            bytes(range(7, 71)),
            "neither a zip archive (what torch writes) nor a pickle: it begins with bytes 07 08",
        ),
        ("bare-pickle", "a pickle stream, not the zip archive torch writes (refused unread)"),
    ],
)
def test_bad_training_states_are_refused(content, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "last.pt"
    if content == "pickle":
        buffer = io.BytesIO()
        torch.save({"model": _Payload()}, buffer)
        content = buffer.getvalue()
    elif content == "list":
        buffer = io.BytesIO()
        torch.save([1, 2], buffer)
        content = buffer.getvalue()
    elif content == "bare-pickle":
        import pickle

        content = pickle.dumps({"model": _Payload()})
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=re.escape(message)) as info:
        load_training_state(path)
    assert info.value.file == str(path) and "weights_only" not in str(info.value)
    assert not (tmp_path / "pwned").exists()
    path.unlink()
    path.mkdir()
    with pytest.raises(CheckpointError, match="is a directory"):
        load_training_state(path)


def test_saving_removes_temporaries_of_interrupted_writes(tmp_path):
    path = tmp_path / "last.pt"
    stale = [tmp_path / ".last.pt.abc123.tmp", tmp_path / ".last.pt.zz.tmp"]
    for s in stale:
        s.write_bytes(b"partial")
    other = tmp_path / ".model.json.x.tmp"
    other.write_bytes(b"partial")
    save_training_state(path, {"step": 3})
    assert load_training_state(path) == {"step": 3}
    assert not any(s.exists() for s in stale) and other.exists()
