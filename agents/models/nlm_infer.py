r"""Inference-only NLM forward on the CPU: numpy for arities <= 1, the compiled kernels directly.

Why: GBFS evaluates the few new successors of one expansion per call (2-3 states on average), and
there the fused `agents.models.nlm.NLM.forward` is dominated by fixed per-call costs, not by the
kernels: a few hundred small torch operations (each several microseconds: dispatch, autograd and
version-counter bookkeeping), weight views rebuilt on every call, ``autograd.Function`` calls.
`InferencePlan` computes the same function of a model whose layers the fused path covers
(arity-3 tensors only as the lazy block of `agents.models.nlm_block3`, activated arity-2 outputs
from `agents.models.nlm_kernels`):

* the weights of the arity <= 1 outputs are split once into their own and expand blocks, as
  numpy arrays, and rebuilt only when a parameter's values change (one comparison of all
  parameters per call; the kernels' layouts are cached by `agents.models.nlm_kernels.packed`);
* arity <= 1 outputs are a few numpy operations on ``[B, N, C]`` arrays (about a microsecond
  each), arity-2 outputs and the masked reductions of arity 2 call the kernels' forward functions
  without ``autograd.Function``;
* the arity-3 block runs in `agents.models.nlm_block3_memo`, which keeps its costly part (a
  function of the first layer's arity-2 input only) for recently seen inputs and patches it for
  inputs that differ in a few object pairs; the plan owns the memo, so it starts empty whenever
  the weights change.

The math is that of `agents.models.nlm.NLMLayer` (see there); only the order of some additions
differs, so outputs agree to rounding (the tests compare the two paths). No gradients: `NLM` uses
this path only when autograd records nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

from agents.models.nlm_block3_memo import Block3Memo
from agents.models.nlm_kernels import _a2_run, _max_min_run

if TYPE_CHECKING:
    from agents.models.nlm import NLM, NLMLayer

__all__ = ["InferencePlan"]

Pair = tuple[np.ndarray, np.ndarray]


def _sigmoid(a: np.ndarray) -> np.ndarray:
    """In-place logistic function of a float array (torch's, without numpy's overflow warnings)."""
    torch.from_numpy(a).sigmoid_()
    return a


class _LowArity:
    """The arity-``r`` (0 or 1) linear map of one layer: own weight ``[C_own, C_o]``, expand weight
    ``[C_exp, C_o]`` (arity 1 only) and bias, as numpy arrays (``r! = 1`` permutation)."""

    def __init__(self, layer: NLMLayer, r: int):
        lin = layer.linears[str(r)]
        c_exp, _ = layer._parts[r]
        w = lin.weight.detach().numpy()
        self.r, self.w_exp, self.w_own = r, w[:, :c_exp].T.copy(), w[:, c_exp:].T.copy()
        self.bias = lin.bias.detach().numpy().copy()

    def __call__(
        self,
        layer: NLMLayer,
        full: dict[int, np.ndarray],
        red: dict[int, Pair],
        mask: np.ndarray,
        dense: bool,
    ) -> np.ndarray | Pair:
        """The output; ``dense``: every object of the batch is real (no masking needed)."""
        r = self.r
        parts = ([full[r]] if r in layer.in_channels else []) + (list(red[r + 1]) if r + 1 in red else [])
        shape = (*mask.shape[: r + 1], self.bias.shape[0])
        if parts:
            z = np.concatenate(parts, axis=-1) if len(parts) > 1 else parts[0]
            out = (z.reshape(-1, z.shape[-1]) @ self.w_own).reshape(shape)  # 2-D: one BLAS call
        else:
            out = np.zeros(shape, self.bias.dtype)
        # terms constant over the objects: the bias and the expansion of the nullary input
        const = full[0] @ self.w_exp + self.bias if self.w_exp.shape[0] else self.bias
        if r in layer.reduce_outputs:  # ∃/∀ over the real objects before σ (σ is monotone)
            if dense:
                ex, fa = out.max(axis=1) + const, out.min(axis=1) + const
            else:
                valid = mask[:, :, None]
                ex = np.where(valid, out, -np.inf).max(axis=1) + const
                fa = np.where(valid, out, np.inf).min(axis=1) + const
            return _sigmoid(ex), _sigmoid(fa)
        y = out + (const[:, None, :] if r == 1 and const.ndim == 2 else const)
        return _sigmoid(y) if layer.activation else y


class InferencePlan:
    """Gradient-free CPU forward of an `NLM` (module docstring). Build it with `InferencePlan.build`,
    which returns None for a network outside the fused path's cover."""

    def __init__(self, model: NLM):
        self.low = [{r: _LowArity(layer, r) for r in layer.out_channels if r <= 1} for layer in model.layers]
        self.live = list(model.parameters())  # the Parameter objects, whose storage may be replaced
        self.params = [p.detach() for p in self.live]
        self.snapshot = self._snapshot()
        self.block3 = Block3Memo()

    def _snapshot(self) -> Tensor:
        # one concatenation: per-parameter conversions cost more than the comparison on small nets
        return torch.cat([p.reshape(-1) for p in self.params])

    @classmethod
    def build(cls, model: NLM) -> InferencePlan | None:
        lazy_in: NLMLayer | None = None  # the layer whose arity-3 output is the lazy input
        reduced3 = False  # the arity-3 input comes reduced (the arity-3 block's second output)
        for layer in model.layers:
            ins, outs = layer.in_channels, layer.out_channels
            if max(ins) > 3 or max(outs) > 3 or (3 in ins and lazy_in is None and not reduced3):
                return None
            if 2 in outs and not (layer.activation and ins.keys() & {2, 3}):
                return None  # the generic arity-2 path
            lazy_out, reduced3 = None, False
            if 3 in outs:
                if lazy_in is not None:
                    ok = 3 in layer.reduce_outputs and layer._parts[3] == (
                        ins.get(2),
                        lazy_in.out_channels[3],
                    )
                    reduced3 = True
                else:
                    ok = (
                        layer.lazy_arity3
                        and layer._parts[3][1] == 0
                        and 2 in ins
                        and 3 not in layer.reduce_outputs
                    )
                    lazy_out = layer
                if not ok:
                    return None
            lazy_in = lazy_out
        return cls(model)

    def current(self, model: NLM) -> bool:
        """Whether this plan still describes ``model``: the same parameter storage (``.to()`` and
        ``.double()`` replace it) with the same values (an optimiser step or ``load_state_dict``
        changes them in place, possibly through ``.data``, which no version counter sees)."""
        return all(
            p.data_ptr() == q.data_ptr() for p, q in zip(self.live, self.params, strict=True)
        ) and torch.equal(self._snapshot(), self.snapshot)

    def __call__(self, model: NLM, inputs: Mapping[str, Tensor], dtype: torch.dtype) -> Tensor:
        """The output ``[B, n_outputs]`` of ``model`` (which `current` accepts) on ``inputs``."""
        np_dtype = np.float32 if dtype == torch.float32 else np.float64
        mask_t = inputs["object_mask"].bool()
        mask = mask_t.numpy()
        dense = mask.shape[1] > 0 and bool(mask.all())
        full: dict[int, np.ndarray] = {}
        for k in model.in_channels:
            x = inputs[f"arity{k}"].numpy().astype(np_dtype)
            if k >= 1 and not dense:  # zero the padding (it may hold anything)
                real = mask.reshape(mask.shape[0], *([1] * (k - 1)), -1)
                for j in range(1, k):
                    real = real & mask.reshape(mask.shape[0], *([1] * (j - 1)), -1, *([1] * (k - j)))
                x = np.where(real[..., None], x, np_dtype(0))
            full[k] = x
        red: dict[int, Pair] = {}
        lazy: np.ndarray | None = None  # the arity-2 input of a lazy arity-3 output
        lazy_layer: NLMLayer | None = None
        for layer, low in zip(model.layers, self.low, strict=True):
            out_full: dict[int, np.ndarray] = {}
            out_red: dict[int, Pair] = {}
            if lazy is not None:
                assert lazy_layer is not None
                own = 3 in layer.out_channels
                lin0, lin = lazy_layer.linears["3"], layer.linears["3"] if own else None
                ex_t, fa_t, ex_y, fa_y = self.block3(
                    torch.from_numpy(lazy),
                    lin0.weight,
                    lin0.bias,
                    torch.from_numpy(full[2]) if own else None,
                    lin.weight if lin else None,
                    lin.bias if lin else None,
                    mask_t,
                    layer.exclude_self,
                )
                red[3] = (ex_t, fa_t)
                if own:
                    out_red[3] = (ex_y, fa_y)
                lazy = None
            for r in layer.out_channels:
                k = r + 1
                if k in layer.in_channels and k not in red:
                    if k == 1 and dense:
                        red[1] = (full[1].max(1), full[1].min(1))
                    elif k == 1:
                        valid = mask[:, :, None]
                        red[1] = (np.where(valid, full[1], 0.0).max(1), np.where(valid, full[1], 1.0).min(1))
                    else:
                        mx, mn, _ = _max_min_run(
                            torch.from_numpy(full[k]), mask_t, layer.exclude_self, 0.0, 1.0
                        )
                        red[k] = (mx.numpy(), mn.numpy())
            for r in layer.out_channels:
                if r in out_red:
                    continue
                if r == 3:
                    lazy, lazy_layer = full[2], layer
                elif r == 2:
                    parts = ([full[2]] if 2 in layer.in_channels else []) + (list(red[3]) if 3 in red else [])
                    lin = layer.linears["2"]
                    x1 = torch.from_numpy(full[1]) if 1 in layer.in_channels else None
                    p0, p1, p2 = [*(torch.from_numpy(p) for p in parts), None, None][:3]
                    reduce = r in layer.reduce_outputs
                    out = _a2_run(x1, p0, p1, p2, lin.weight, lin.bias, mask_t, layer.exclude_self, reduce)[0]
                    if reduce:
                        out_red[2] = (out[0].numpy(), out[1].numpy())
                    else:
                        out_full[2] = out[0].numpy()
                else:
                    y = low[r](layer, full, red, mask, dense)
                    if isinstance(y, tuple):
                        out_red[r] = y
                    else:
                        out_full[r] = y
            full, red = out_full, out_red
        return torch.from_numpy(np.ascontiguousarray(full[0]))
