"""Checkpoints written by earlier versions still load and compute what they computed.

``tests/data/checkpoints/<model>/`` holds a ``model.json`` and ``best.safetensors`` written by the
code of commit 3145fc2 (before the architecture refactor of issue 13), and ``expected.safetensors``
with a fixed input (``input.*``) and the raw outputs that code computed on it (``raw``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

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
