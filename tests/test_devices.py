"""``--device``: ``auto`` is CUDA when present, else the CPU, for every CLI that takes it."""

from __future__ import annotations

import torch

from agents.apps.rl_value import Args as ValueArgs
from agents.apps.supervised import Args as SupervisedArgs
from agents.devices import resolve_device


def test_auto_is_cuda_when_present_else_cpu():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")


def test_training_clis_default_to_auto():
    assert SupervisedArgs().device == "auto"
    assert ValueArgs().device == "auto"
