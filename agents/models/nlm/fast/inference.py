r"""Inference-only NLM forward on the CPU: numpy arrays between compiled kernels, weights laid out once.

Why: GBFS evaluates the few new successors of one expansion per call (2-3 states on average), and
there the fused `agents.models.nlm.network.NLM.forward` is dominated by fixed per-call costs, not by the
kernels: a few hundred small torch operations (each several microseconds: dispatch, autograd and
version-counter bookkeeping), weight layouts looked up on every call, ``autograd.Function`` calls.
`InferencePlan` computes the same function of a model whose layers the fused path covers
(arity-3 tensors only as the lazy block of `agents.models.nlm.fast.arity3_block`, activated arity-2
outputs), with at most three compiled calls per layer:

* the kernels' weight layouts are built once per plan, and the plan is rebuilt when a
  parameter's values change (one comparison of all parameters per call);
* a layer's arity <= 1 outputs (and the ∃/∀ they read) are one call of
  `agents.models.nlm.fast.low_arity.low_arity_forward`, its arity-2 output one call of the arity-2
  kernel of `agents.models.nlm.fast.arity2`;
* the arity-3 block runs in `agents.models.nlm.fast.arity3_memo`, which keeps its costly part (a
  function of the first layer's arity-2 input only) for recently seen inputs, and computes a state
  from a recent state evaluated in full over the objects where the two differ; the plan owns the
  memo, so it starts empty whenever the weights change. An input ``"memo_slot"`` (``[B]`` ints)
  keeps the states of different searches apart in it (`agents.models.nlm.inputs.NLMSearchInputs`).

Hidden features travel between layers with their channel axis padded to the SIMD width (the
padded lanes hold values that zero weight rows ignore); the raw inputs are read unpadded where
the kernels allow it. The math is that of `agents.models.nlm.layer.NLMLayer` (see there); only the order
of some additions differs, so outputs agree to rounding (the tests compare the two paths). No
gradients: `NLM` uses this path only when autograd records nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

from agents.models.nlm.fast.arity2 import arity2_forward, arity2_weights
from agents.models.nlm.fast.arity3_memo import Block3Memo
from agents.models.nlm.fast.arrays import Workspace, pad_lanes, pad_last
from agents.models.nlm.fast.low_arity import low_arity_forward
from agents.models.nlm.fast.threads import current_shard, parallel, split_batch

if TYPE_CHECKING:
    from agents.models.nlm.layer import NLMLayer
    from agents.models.nlm.network import NLM

__all__ = ["InferencePlan"]

Pair = tuple[np.ndarray, np.ndarray]


def _pad8(c: int) -> int:
    """``c`` rounded up to a multiple of the SIMD width (0 stays 0: an absent input)."""
    return pad_lanes(c) if c else 0


def _pad_columns(w: np.ndarray, groups: Sequence[tuple[int, int]], perms: int) -> np.ndarray:
    """The linear weight ``w`` (``[C_o, perms * sum(true)]``, permutation-major) with each input
    group's columns (``(true, actual)`` channels) zero-padded to its width in the arrays read."""
    co = w.shape[0]
    blocks = w.reshape(co, perms, -1)
    out = np.zeros((co, perms, sum(a for _, a in groups)), w.dtype)
    src = dst = 0
    for true, actual in groups:
        out[:, :, dst : dst + true] = blocks[:, :, src : src + true]
        src, dst = src + true, dst + actual
    return out.reshape(co, -1)


def _true(a: np.ndarray, c: int) -> np.ndarray:
    """``a`` with only its first ``c`` channels (a copy only when it has more)."""
    return a if a.shape[-1] == c else np.ascontiguousarray(a[..., :c])


class _LayerPlan:
    """One layer's work in the plan: which inputs it reads in which form, its weights in the
    kernels' layouts, and the memo when it consumes a lazy arity-3 input.

    Args:
        layer: the layer. first: it is the network's first (its inputs are the raw, unpadded
            ones). full, red: the true channels of its inputs given in full / reduced. memo: the
            arity-3 block it consumes (None without a lazy arity-3 input).
    """

    def __init__(
        self,
        layer: NLMLayer,
        first: bool,
        full: Mapping[int, int],
        red: Mapping[int, int],
        memo: Block3Memo | None,
    ):
        self.layer, self.first, self.memo = layer, first, memo
        self._shards = {0: memo}  # the memo of each thread shard (`memo_shard`), made on first use
        self._spaces: dict[int, Workspace] = {}  # each shard's output arrays, reused from call to call
        self.full, self.red = dict(full), dict(red)
        outs = layer.out_channels
        self.lazy3 = 3 in outs and memo is None  # the next layer's memo builds it
        dt = layer.linears[str(next(iter(outs)))].weight.dtype
        self.dtype = np.float32 if dt == torch.float32 else np.float64
        # stand-ins for absent inputs, never written: 0 channels with 0-3 leading axes, an empty part
        self.absent = tuple(np.empty((1,) * d + (0,), self.dtype) for d in range(4))
        self.no_part = np.zeros((1, 1, 1, 1), self.dtype)
        self.low = self._low_weights() if outs.keys() & {0, 1} else None
        self.a2 = self._a2_layout() if 2 in outs else None

    def _workspace(self) -> Workspace:
        """The calling thread's workspace (one per memo shard)."""
        return self._spaces.setdefault(current_shard(), Workspace())

    def _memo(self) -> Block3Memo:
        """The calling thread's memo (`agents.models.nlm.fast.threads.memo_shard`): an empty copy of
        shard 0's for a new shard."""
        shard = current_shard()
        memo = self._shards.get(shard)
        if memo is None:
            memo = self._shards.setdefault(shard, self.memo.spawn())  # type: ignore[union-attr]
        return memo

    def _in(self, k: int) -> int:
        return self.full.get(k, self.red.get(k, 0))

    def _low_weights(self) -> tuple:
        layer = self.layer
        c0, c1, c2 = self._in(0), self._in(1), self._in(2)
        co1, co0 = pad_lanes(layer.out_channels.get(1, 1)), pad_lanes(layer.out_channels.get(0, 1))
        dummy_w, dummy_b = np.zeros((1, 8), self.dtype), np.zeros(8, self.dtype)
        v1, w1, b1 = dummy_w, dummy_w, dummy_b
        if 1 in layer.out_channels:
            lin = layer.linears["1"]
            groups = [(c0, _pad8(c0)), (c1, _pad8(c1)), (c2, _pad8(c2)), (c2, _pad8(c2))]
            cols = _pad_columns(lin.weight.detach().numpy(), groups, 1)
            v1 = pad_last(cols[:, : _pad8(c0)].T, co1)
            w1 = pad_last(cols[:, _pad8(c0) :].T, co1)
            b1 = pad_last(lin.bias.detach().numpy(), co1)
        w0, b0 = dummy_w, dummy_b
        if 0 in layer.out_channels:
            lin = layer.linears["0"]
            groups = [(c0, _pad8(c0)), (c1, _pad8(c1)), (c1, _pad8(c1))]
            w0 = pad_last(_pad_columns(lin.weight.detach().numpy(), groups, 1).T, co0)
            b0 = pad_last(lin.bias.detach().numpy(), co0)
        outs = layer.out_channels
        flags = (1 in outs, 1 in layer.reduce_outputs, 0 in outs, layer.activation)
        return (v1, w1, b1, w0, b0), flags

    def _a2_layout(self) -> tuple:
        """``(we, wo, bias)`` of `agents.models.nlm.fast.arity2.arity2_forward` and the parts' offsets;
        the raw inputs of the first layer are read unpadded, every hidden feature padded."""

        def width(c: int) -> int:
            return c if self.first else _pad8(c)

        lin = self.layer.linears["2"]
        c1 = self.full.get(1, 0)
        groups = [(c1, width(c1))]  # the expanded X_1, then the own parts: X_2, ∃X_3, ∀X_3
        if 2 in self.full:
            groups.append((self.full[2], width(self.full[2])))
        if 3 in self.red:  # from the arity-3 block: always padded
            groups += [(self.red[3], _pad8(self.red[3]))] * 2
        cols = _pad_columns(lin.weight.detach().numpy(), groups, 2)
        offs = np.cumsum([0, *(a for _, a in groups[1:]), 0, 0, 0])[:4].astype(np.int64)
        we, wo, _, _ = arity2_weights(cols, width(c1), tuple(int(o) for o in offs))
        bias = pad_last(lin.bias.detach().numpy(), pad_lanes(lin.bias.shape[0]))
        return (we, wo, bias), offs

    def __call__(
        self,
        full: dict[int, np.ndarray],
        raw: dict[int, np.ndarray],
        red: dict[int, Pair],
        lazy: np.ndarray | None,
        mask: np.ndarray,
        slots: np.ndarray | None = None,
    ) -> tuple[dict[int, np.ndarray], dict[int, Pair], np.ndarray | None]:
        """This layer's outputs ``(full, reduced, lazy arity-3 input of the next layer)``; ``slots``:
        the rows' memo slots (`Block3Memo`)."""
        layer, dt = self.layer, self.dtype
        nb, big_n = mask.shape
        excl = bool(layer.exclude_self)
        out_full: dict[int, np.ndarray] = {}
        out_red: dict[int, Pair] = {}
        if self.memo is not None:
            assert lazy is not None
            x2 = _true(full[2], self.full[2]) if self.memo.cp else None
            blocks = self._memo()(lazy, x2, mask, excl, slots)
            red = {**red, 3: (blocks[0], blocks[1])}
            if len(blocks) == 4:
                out_red[3] = (blocks[2], blocks[3])
        src = raw if self.first else full  # what the arity-2 kernel reads
        if self.a2 is not None:
            (we, wo, bias), offs = self.a2
            x1 = src[1] if 1 in self.full else self.absent[2]
            parts = ([src[2]] if 2 in self.full else []) + (list(red[3]) if 3 in self.red else [])
            parts3 = (*parts, self.no_part, self.no_part)[:3]
            reduce = 2 in layer.reduce_outputs
            co8 = bias.shape[0]
            y_shape, red_shape = (
                ((1, 1, 1, co8), (nb, big_n, co8)) if reduce else ((nb, big_n, big_n, co8), (1, 1, co8))
            )
            ws = self._workspace()
            outs = tuple(ws.get(f"a2{k}", y_shape if k == 0 else red_shape, dt) for k in range(5))
            args = (x1, parts3, offs, (we, wo, bias), mask, excl, reduce, outs)
            parallel([lambda lo=lo, hi=hi: arity2_forward(lo, hi, *args) for lo, hi in split_batch(mask, 2)])
            if reduce:
                out_red[2] = (outs[1], outs[2])
            else:
                out_full[2] = outs[0]
        if self.low is not None:
            weights, flags = self.low
            out1, reduce1, out0, _ = flags

            ws = self._workspace()

            def arr(name: str, shape: tuple[int, ...], used: bool) -> np.ndarray:
                return ws.get(name, shape if used else (1,) * (len(shape) - 1) + (8,), dt)

            def given(k: int, dims: int) -> np.ndarray:
                return full[k] if k in self.full else self.absent[dims]

            def given_red(k: int, dims: int) -> Pair:
                return red[k] if k in self.red else (self.absent[dims],) * 2

            co1, co0 = weights[2].shape[0], weights[4].shape[0]
            y1 = arr("y1", (nb, big_n, co1), out1 and not reduce1)
            e1, f1 = arr("e1", (nb, co1), out1 and reduce1), arr("f1", (nb, co1), out1 and reduce1)
            y0 = arr("y0", (nb, co0), out0)
            xs = (given(0, 1), given(1, 2), given(2, 3))
            reds = (*given_red(1, 1), *given_red(2, 2))
            args = (xs, reds, mask, excl, weights, flags, (y1, e1, f1, y0))
            parallel(
                [lambda lo=lo, hi=hi: low_arity_forward(lo, hi, *args) for lo, hi in split_batch(mask, 2)]
            )
            if out1:
                if reduce1:
                    out_red[1] = (e1, f1)
                else:
                    out_full[1] = y1
            if out0:
                out_full[0] = y0
        next_lazy = None
        if self.lazy3:  # built from expansions of this layer's arity-2 input, by the next layer's memo
            next_lazy = raw[2] if self.first else _true(full[2], self.full[2])
        return out_full, out_red, next_lazy


class InferencePlan:
    """Gradient-free CPU forward of an `NLM` (module docstring). Build it with `InferencePlan.build`,
    which returns None for a network outside the fused path's cover."""

    def __init__(self, model: NLM):
        self.live = list(model.parameters())  # the Parameter objects, whose storage may be replaced
        self.ptrs = [p.data_ptr() for p in self.live]
        self.views = [p.detach().numpy().reshape(-1) for p in self.live]  # share the parameters' memory
        self.snapshot = np.concatenate(self.views)
        self.in_channels = dict(model.in_channels)
        self._spaces: dict[int, Workspace] = {}  # each thread shard's input arrays, reused
        self.n_outputs = model.n_outputs
        self.layers: list[_LayerPlan] = []
        full, red = dict(model.in_channels), {}
        lazy_layer: NLMLayer | None = None
        for d, layer in enumerate(model.layers):
            memo = None
            if lazy_layer is not None:
                lin0 = lazy_layer.linears["3"]
                own = layer.linears["3"] if 3 in layer.out_channels else None
                memo = Block3Memo(
                    lin0.weight.detach().numpy(),
                    lin0.bias.detach().numpy(),
                    own.weight.detach().numpy() if own is not None else None,
                    own.bias.detach().numpy() if own is not None else None,
                )
                red[3] = lin0.weight.shape[0]
            plan = _LayerPlan(layer, d == 0, full, red, memo)
            self.layers.append(plan)
            lazy_layer = layer if plan.lazy3 else None
            outs = layer.out_channels
            full = {r: c for r, c in outs.items() if r < 3 and r not in layer.reduce_outputs}
            red = {r: c for r, c in outs.items() if r in layer.reduce_outputs}

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
                    ok = 3 in layer.reduce_outputs and layer.input_parts[3] == (
                        ins.get(2),
                        lazy_in.out_channels[3],
                    )
                    reduced3 = True
                else:
                    ok = (
                        layer.lazy_arity3
                        and layer.input_parts[3][1] == 0
                        and 2 in ins
                        and 3 not in layer.reduce_outputs
                    )
                    lazy_out = layer
                if not ok:
                    return None
            lazy_in = lazy_out
        return cls(model)

    @property
    def block3(self) -> Block3Memo | None:
        """The network's arity-3 memo (None without an arity-3 block)."""
        return next((layer.memo for layer in self.layers if layer.memo is not None), None)

    def current(self, model: NLM) -> bool:
        """Whether this plan still describes ``model``: the same parameter storage (``.to()`` and
        ``.double()`` replace it) with the same values (an optimiser step or ``load_state_dict``
        changes them in place, possibly through ``.data``, which no version counter sees)."""
        if any(p.data_ptr() != ptr for p, ptr in zip(self.live, self.ptrs, strict=True)):
            return False
        # the views read the parameters' memory (a fresh array: two threads may ask at once)
        return bool(np.array_equal(np.concatenate(self.views), self.snapshot))

    def __call__(self, model: NLM, inputs: Mapping[str, Tensor], dtype: torch.dtype) -> Tensor:
        """The output ``[B, n_outputs]`` of ``model`` (which `current` accepts) on ``inputs``."""
        np_dtype = np.float32 if dtype == torch.float32 else np.float64
        mask = inputs["object_mask"].numpy().astype(bool)
        dense = mask.shape[1] > 0 and bool(mask.all())
        raw: dict[int, np.ndarray] = {}
        full: dict[int, np.ndarray] = {}
        ws = self._spaces.setdefault(current_shard(), Workspace())
        for k in self.in_channels:
            given = inputs[f"arity{k}"].numpy()
            x = ws.get(f"raw{k}", given.shape, np_dtype)
            np.copyto(x, given, casting="unsafe")
            if k >= 1 and not dense:  # zero the padding (it may hold anything)
                real = mask.reshape(mask.shape[0], *([1] * (k - 1)), -1)
                for j in range(1, k):
                    real = real & mask.reshape(mask.shape[0], *([1] * (j - 1)), -1, *([1] * (k - j)))
                np.copyto(x, np_dtype(0), where=~real[..., None])
            raw[k] = x
            width = _pad8(x.shape[-1])
            if width == x.shape[-1]:
                full[k] = x
            else:
                full[k] = ws.zeros(f"full{k}", (*x.shape[:-1], width), np_dtype)
                full[k][..., : x.shape[-1]] = x
        slots = inputs.get("memo_slot")
        slots = None if slots is None else np.asarray(slots)
        red: dict[int, Pair] = {}
        lazy: np.ndarray | None = None
        for layer in self.layers:
            full, red, lazy = layer(full, raw, red, lazy, mask, slots)
        return torch.from_numpy(np.array(full[0][:, : self.n_outputs]))  # a copy: layers reuse their arrays
