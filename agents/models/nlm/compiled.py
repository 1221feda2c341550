"""The compiled CPU path of the NLM: what the PyTorch model asks of it, and where it is installed.

The model (`agents.models.nlm.layer`, `agents.models.nlm.network`) is plain PyTorch and runs on
any device. On the CPU it hands its costliest parts to compiled kernels, which compute the same
function faster; those kernels live in `agents.models.nlm.fast`, which depends on the model and
never the reverse: the model only knows the `CompiledPath` record below, and the package
(`agents.models.nlm`) installs ``agents.models.nlm.fast.COMPILED_PATH`` at import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import torch
from torch import Tensor

if TYPE_CHECKING:
    from agents.models.nlm.network import NLM

__all__ = ["CompiledPath", "ForwardPlan", "install", "installed"]


class ForwardPlan(Protocol):
    """A gradient-free forward of one `NLM` with its weights laid out once."""

    def current(self, model: NLM) -> bool:
        """Whether the plan still describes ``model`` (same parameter storage and values)."""
        ...

    def __call__(self, model: NLM, inputs: Mapping[str, Tensor], dtype: torch.dtype) -> Tensor:
        """The output ``[B, n_outputs]`` of ``model`` on ``inputs``."""
        ...


@dataclass(frozen=True)
class CompiledPath:
    """The compiled implementations the model uses on CPU tensors (each computes the function of
    the PyTorch code it replaces, gradients included).

    Attributes:
        exists_forall: ``(x, mask, exclude_self, lo, hi) -> (∃, ∀)`` over the last object axis of
            an arity-1 or -2 tensor (`agents.models.nlm.reductions.masked_exists_forall`).
        arity2_output: ``(x1, parts, weight, bias, mask, exclude_self, reduce)`` -> a layer's
            activated arity-2 output, or its (∃, ∀) when ``reduce``.
        arity3_block: ``(x, w0, b0, x2, w1, b1, mask, exclude_self) -> (∃T, ∀T, ∃Y, ∀Y)``, the
            arity-3 block of two consecutive layers (`agents.models.nlm.layer.LazyArity3`).
        inference_plan: ``model -> ForwardPlan | None``, the gradient-free forward of a network
            (None for a network outside its cover).
    """

    exists_forall: Callable[..., tuple[Tensor, Tensor]]
    arity2_output: Callable[..., Any]
    arity3_block: Callable[..., tuple]
    inference_plan: Callable[[NLM], ForwardPlan | None]


_INSTALLED: list[CompiledPath] = []


def install(path: CompiledPath | None) -> None:
    """Make ``path`` the compiled path of every `NLM` with ``fused`` on (None: none, the generic
    PyTorch code everywhere)."""
    _INSTALLED[:] = [] if path is None else [path]


def installed() -> CompiledPath | None:
    """The installed compiled path, or None."""
    return _INSTALLED[0] if _INSTALLED else None
