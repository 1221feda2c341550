r"""Neural Logic Machine (Dong et al., 2019) over per-arity predicate tensors: the network.

A batch of states with ``N`` objects is one tensor ``X_k`` of shape ``[B] + [N]*k + [C_k]`` per arity
``k`` (``X_k[b, o_1..o_k, c]`` is the truth value of predicate channel ``c`` on ``(o_1..o_k)``).
One layer (`agents.models.nlm.layer.NLMLayer`) maps ``{X_k}`` to ``{Y_r}``:

.. math::
    Z_r = \big[\mathrm{expand}(X_{r-1}) \,\|\, X_r \,\|\, \exists X_{r+1} \,\|\, \forall X_{r+1}\big],
    \qquad
    Y_r = \sigma\Big(b_r + \sum_{\pi \in S_r} \pi(Z_r)\, W_{r,\pi}\Big)

``expand`` adds a last object axis by broadcasting, ``∃``/``∀`` are ``max``/``min`` over the last
object axis, and ``π(Z_r)`` permutes the ``r`` object axes. The sum over the ``r!`` permutations is
exactly NLM's "concatenate all permutations, then apply a linear layer", ``W_{r,π}`` being the blocks
of that layer's weight (``nn.Linear(r! * C_in, C_out)``, permutation-major), so this is the textbook
model: `agents.models.nlm.reference` writes it literally, and the tests compare the two.

On CPU tensors (``fused``, the default there) the costliest parts run in compiled kernels that
compute the same function (`agents.models.nlm.fast`, installed as the `CompiledPath` of
`agents.models.nlm.compiled`): the arity-3 block of the first two layers, arity-2 outputs, the
masked ∃/∀, and, when autograd records nothing (search), the whole forward pass.

Design choices:

* Depth counts the output layer, as in the authors' implementation (``IBM/pddlsl``,
  ``NLMCarlosV2``, ``--depth 5``): ``depth - 1`` hidden layers with ``hidden`` sigmoid channels per
  arity, then an output layer whose nullary linear map (no activation) sees the nullary features
  and the ∃/∀ of the unary ones and returns the ``n_outputs`` raw values.
* Arity pruning: hidden layer ``d`` (0-based) only produces arities ``<= min(breadth, depth-1-d)``
  (3, 3, 2, 1 for depth 5): a reduction lowers the arity by one per layer, so higher arities could
  not reach the nullary output. This changes no output, only the cost (as in ``NLMCarlosV2``).
* Padding: objects with ``object_mask == 0`` are excluded from every reduction. Features are truth
  values in ``[0, 1]`` (binary inputs, sigmoid features), so an excluded entry takes the identity
  of the reduction; an empty reduction is ∃ = 0 (false) and ∀ = 1 (true), as in logic. Padded
  positions elsewhere only ever feed padded positions, and the inputs are zeroed there, so garbage
  in the padding changes neither the output nor the gradients.
* ``exclude_self`` (default True, as in Dong et al.'s reference code): ``∃z X(x_1..x_r, z)`` ranges
  over the ``z`` distinct from every ``x_i`` (tuples with a repeated object are excluded), which
  makes "another object" expressible and costs nothing extra (the padding mask is applied anyway).
  The pddlsl authors trained both settings; their code defaults to False.
* No residual input concatenation between layers (the default of both reference implementations;
  the paper does not mention one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch
from torch import Tensor, nn

from agents.errors import AgentError
from agents.micro_batches import fitting_chunks, memory_budget
from agents.models.nlm.compiled import installed
from agents.models.nlm.layer import LazyArity3, NLMLayer
from pddlgym_sl.memory import SLACK_BYTES

if TYPE_CHECKING:
    from agents.models.nlm.compiled import CompiledPath, ForwardPlan

__all__ = ["NLM"]


class NLM(nn.Module):
    r"""Neural Logic Machine heuristic: per-arity predicate tensors -> ``[B, n_outputs]`` raw values.

    ``depth - 1`` hidden `NLMLayer`\ s with ``hidden`` sigmoid channels per arity up to ``breadth``
    (pruned near the output), then an output layer whose nullary linear map returns the raw values.
    Paper setting (appendix C.1): ``breadth=3, depth=5, hidden=8``, per-arity MLPs without hidden layer.

    Args:
        in_channels: arity -> input channels (``2 * P_k``: [true in state, in goal] per predicate).
        n_outputs: raw outputs per state (1: mu, 2: mu and sigma).
        breadth: largest arity of the hidden tensors.
        depth: number of NLM layers, the output layer included.
        hidden: channels per arity of every hidden layer.
        exclude_self: reductions skip tuples in which the reduced object repeats another argument.
        fused: use the installed compiled path (`agents.models.nlm.compiled`; the package installs
            `agents.models.nlm.fast`) where it applies (None: for float32/float64 CPU tensors).
            Same function either way; the generic PyTorch path runs on any device.

    Shapes:
        - input: mapping with ``"arity{k}"``: ``[B] + [N]*k + [in_channels[k]]`` for each arity with
          channels (float, int8 or bool; padded entries may hold anything) and ``"object_mask"``:
          ``[B, N]`` (1 = real object, 0 = padding). Other keys are ignored.
        - output: ``[B, n_outputs]`` in the module's dtype.
    """

    def __init__(
        self,
        in_channels: Mapping[int, int],
        n_outputs: int,
        breadth: int = 3,
        depth: int = 5,
        hidden: int = 8,
        exclude_self: bool = True,
        fused: bool | None = None,
    ):
        super().__init__()
        if min(depth, breadth, hidden, n_outputs) < 1:
            raise AgentError("depth, breadth, hidden and n_outputs must be positive")
        self.in_channels = {int(k): int(c) for k, c in sorted(in_channels.items()) if c > 0}
        if not self.in_channels:
            raise AgentError("the NLM needs at least one input channel")
        self.n_outputs, self.breadth, self.depth, self.hidden = n_outputs, breadth, depth, hidden
        self.exclude_self = exclude_self
        wants: list[dict[int, int]] = []
        avail = set(self.in_channels)
        for d in range(depth):
            if d == depth - 1:
                want = {0: n_outputs}
            else:
                top = min(breadth, depth - 1 - d)
                want = {r: hidden for r in range(top + 1) if avail & {r - 1, r, r + 1}}
            wants.append(want)
            avail = set(want)
        # An output arity that the next layer neither keeps nor expands is only reduced by it.
        reduce_outputs = [
            [r for r in want if d + 1 < depth and r not in wants[d + 1] and r + 1 not in wants[d + 1]]
            for d, want in enumerate(wants)
        ]
        layers = []
        prev = dict(self.in_channels)
        for d, want in enumerate(wants):
            # The compiled block takes an arity-3 output built from expansions only (no arity-3 or -4
            # input) when the next layer only reduces it and reduces its own arity-3 output.
            lazy3 = (
                3 in want
                and d + 1 < depth - 1
                and not (prev.keys() & {3, 4})
                and 4 not in wants[d + 1]
                and (3 not in wants[d + 1] or 3 in reduce_outputs[d + 1])
            )
            layers.append(
                NLMLayer(
                    prev,
                    want,
                    activation=d < depth - 1,
                    reduce_outputs=reduce_outputs[d],
                    exclude_self=exclude_self,
                    lazy_arity3=lazy3,
                )
            )
            prev = want
        self.layers = nn.ModuleList(layers)
        self._top_arity = max([*self.in_channels, *(r for want in wants for r in want)])
        self.fused = fused
        self._distinct: dict[tuple[int, int, str], Tensor] = {}
        self._plan: ForwardPlan | Literal[False] | None = None  # see _inference_plan
        self._bytes_scale = 1  # grows when a device runs out of memory (_chunked_forward)

    def state_bytes(self, n_objects: int) -> int:
        """Memory of one state of ``n_objects`` objects in a training forward and backward pass,
        an upper estimate (`agents.micro_batches` cuts batches by it): the tensors of the highest
        arity ``r`` dominate, ``n^r`` tuples of 4-byte floats times about fourteen hidden widths
        and two of the input (measured as the resident set's growth in float32 at breadth 3 and
        hidden 8 from 30 to 70 objects: 280-370 bytes per triple on one machine, with or without
        gradients, and 415 in one run on CI's machine; this gives 464)."""
        top = self._top_arity
        width = 14 * self.hidden + 2 * self.in_channels.get(top, 0)
        return 4 * n_objects**top * width + 4 * n_objects**2 * 16 * self.hidden

    def reset_parameters(self) -> None:
        for layer in self.layers:
            layer.reset_parameters()

    def forward(self, inputs: Mapping[str, Tensor]) -> Tensor:
        dtype = self.layers[-1].linears["0"].weight.dtype
        fused = self.fused
        if fused is None:
            fused = inputs["object_mask"].device.type == "cpu" and dtype in (torch.float32, torch.float64)
        path = installed() if fused else None
        if not _records_grad(self, inputs):
            plan = self._inference_plan(path) if path is not None else None
            if plan is not None:
                return plan(self, inputs, dtype)
            return self._chunked_forward(inputs, dtype, path)
        return self._layers_forward(inputs, dtype, path)

    def _chunked_forward(
        self, inputs: Mapping[str, Tensor], dtype: torch.dtype, path: CompiledPath | None
    ) -> Tensor:
        """A gradient-free forward pass by the layers in runs of rows that fit the device's memory
        (`_inference_chunks`). Where the device still runs out (the estimate is a training step's,
        measured on the CPU; PyTorch's generic operations on CUDA hold more at once), the estimate
        is doubled for the rest of the model's life and the batch cut again: each row is computed
        from that row alone, so the cut changes no value."""
        while True:
            chunks = self._inference_chunks(inputs)
            try:
                if len(chunks) == 1:
                    return self._layers_forward(inputs, dtype, path)
                parts = [{k: v[rows] for k, v in inputs.items()} for rows in chunks]
                return torch.cat([self._layers_forward(part, dtype, path) for part in parts])
            except torch.cuda.OutOfMemoryError:
                if all(rows.stop - rows.start <= 1 for rows in chunks):
                    raise
                self._bytes_scale *= 2
                torch.cuda.empty_cache()  # a no-op where CUDA was never initialised

    def _inference_chunks(self, inputs: Mapping[str, Tensor]) -> list[slice]:
        """The batch's rows in runs whose gradient-free forward pass by the layers fits the memory
        of the inputs' device (`agents.micro_batches`, by what a training step costs a state, an
        upper bound on the CPU, times `_bytes_scale`): on CUDA, where the compiled plan does not
        run, a lockstep round of 190 states of 100 objects asked for 35 GiB in one product. One
        run when the batch fits."""
        mask = inputs["object_mask"]
        batch, n = mask.shape

        def cost(n_objects: int) -> int:
            return self._bytes_scale * self.state_bytes(n_objects)

        if batch <= 1 or cost(n) * batch < 2 * SLACK_BYTES:  # small: no budget to read
            return [slice(0, batch)]
        budget = memory_budget(None, mask.device)
        rows = fitting_chunks(np.arange(batch), np.full(batch, n), cost, budget)
        return [slice(int(run[0]), int(run[-1]) + 1) for run in rows]

    def _layers_forward(
        self, inputs: Mapping[str, Tensor], dtype: torch.dtype, path: CompiledPath | None
    ) -> Tensor:
        """The forward pass by the layers (PyTorch's operations, the compiled blocks of ``path``)."""
        mask = inputs["object_mask"].bool()
        valid = _Lazy(lambda k: self._valid(mask, k))  # the compiled path reads the mask instead
        full: dict[int, Tensor] = {}
        for k in self.in_channels:
            x = inputs[f"arity{k}"].to(dtype)
            if k >= 1:  # zero the padding so that garbage there cannot reach even a gradient
                x = torch.where(_tuple_mask(mask, k), x, 0.0)
            full[k] = x
        h: dict[int, Tensor | LazyArity3] = dict(full)
        reduced: dict[int, tuple[Tensor, Tensor]] = {}
        for layer in self.layers:
            h, reduced = layer(h, reduced, valid, mask, compiled=path)
        out = h[0]
        assert isinstance(out, Tensor)
        return out

    def _inference_plan(self, path: CompiledPath) -> ForwardPlan | None:
        """The gradient-free CPU forward of this network by ``path``, rebuilt when the parameters
        change; None when the network is outside the compiled path's cover."""
        plan = self._plan
        if plan is False:
            return None
        if plan is None or not plan.current(self):
            plan = self._plan = path.inference_plan(self) or False
        return plan or None

    def _valid(self, mask: Tensor, k: int) -> Tensor:
        batch, n = mask.shape
        m = mask.view(batch, *([1] * (k - 1)), n, 1)
        if self.exclude_self and k >= 2:
            key = (n, k, str(mask.device))
            dist = self._distinct.get(key)
            if dist is None:
                with torch.inference_mode(False):  # a cached normal tensor, usable by autograd later
                    dist = self._distinct[key] = _distinct_last(n, k, mask.device)
            m = m & dist.unsqueeze(0).unsqueeze(-1)
        return m


class _Lazy(dict):
    """A dict that computes a missing value by ``make(key)`` on first access."""

    def __init__(self, make: Callable[[int], Tensor]):
        super().__init__()
        self.make = make

    def __missing__(self, key: int) -> Tensor:
        value = self[key] = self.make(key)
        return value


def _records_grad(model: nn.Module, inputs: Mapping[str, Tensor]) -> bool:
    """Whether autograd would record a forward pass of ``model`` on ``inputs``."""
    if not torch.is_grad_enabled():
        return False
    return any(p.requires_grad for p in model.parameters()) or any(
        isinstance(t, Tensor) and t.requires_grad for t in inputs.values()
    )


def _distinct_last(n: int, k: int, device: torch.device) -> Tensor:
    """Bool ``[N]*k``: True where the last index differs from every other index."""
    idx = torch.arange(n, device=device)
    last = idx.view(*([1] * (k - 1)), n)
    out = torch.ones([n] * k, dtype=torch.bool, device=device)
    for j in range(k - 1):
        shape = [1] * k
        shape[j] = n
        out &= idx.view(shape) != last
    return out


def _tuple_mask(mask: Tensor, k: int) -> Tensor:
    """Bool ``[B] + [N]*k + [1]``: True where every object of the tuple is real."""
    batch, n = mask.shape
    out = None
    for j in range(k):
        shape = [batch] + [1] * k + [1]
        shape[1 + j] = n
        m = mask.view(shape)
        out = m if out is None else out & m
    assert out is not None
    return out
