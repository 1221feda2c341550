r"""Neural Logic Machine (Dong et al., 2019) over per-arity predicate tensors.

A batch of states with ``N`` objects is one tensor ``X_k`` of shape ``[B] + [N]*k + [C_k]`` per arity
``k`` (``X_k[b, o_1..o_k, c]`` is the truth value of predicate channel ``c`` on ``(o_1..o_k)``).
One layer maps ``{X_k}`` to ``{Y_r}``:

.. math::
    Z_r = \big[\mathrm{expand}(X_{r-1}) \,\|\, X_r \,\|\, \exists X_{r+1} \,\|\, \forall X_{r+1}\big],
    \qquad
    Y_r = \sigma\Big(b_r + \sum_{\pi \in S_r} \pi(Z_r)\, W_{r,\pi}\Big)

``expand`` adds a last object axis by broadcasting, ``∃``/``∀`` are ``max``/``min`` over the last
object axis, and ``π(Z_r)`` permutes the ``r`` object axes. The sum over the ``r!`` permutations is
exactly NLM's "concatenate all permutations, then apply a linear layer", ``W_{r,π}`` being the blocks
of that layer's weight (``nn.Linear(r! * C_in, C_out)``, permutation-major), so this is the textbook
model (the tests check it against a literal implementation).

How it stays fast (no ``r!`` copies of ``Z_r`` are ever made). The generic path, in PyTorch
operations on any device:

* the channel matmul commutes with the axis permutation: the "own" part ``[X_r ‖ ∃ ‖ ∀]`` is
  multiplied once by all ``W_{r,π}`` and the ``r!`` products are summed as permuted views; the
  expanded part is multiplied at arity ``r - 1`` and only broadcast-added, grouped by the position
  of its broadcast axis;
* ``σ`` is monotone, so ``∃_z σ(a) = σ(max_z a)``: a tensor that the next layer only reduces (the
  top arity of every layer after the first) is never activated at full size; terms that do not
  depend on the reduced axis (the bias, one expand group) are added after the reduction;
* the masked ∃/∀ pair is one autograd function whose backward is two scatters.

The fused path (``fused``, the default on CPU) computes the same function with compiled numba
kernels where PyTorch's generic operations cost most, since each of them is a full pass over
memory and the arity-3 ones materialise ``[B, N, N, N, C]`` tensors:

* the arity-3 block of a network whose inputs have arity <= 2 (the first layer's arity-3 output,
  built from expansions only, and the second layer's, only reduced) runs in
  `agents.models.nlm_block3`: from the two layers' arity-2 inputs and weights straight to the four
  activated ∃/∀ tensors that the next layers read, no arity-3 tensor in autograd;
* an arity-2 output (full, or reduced for the next layer) and the masked ∃/∀ of arity 1 and 2 run
  in `agents.models.nlm_kernels`, one pass each way;
* every kernel works over the real objects of each batch element only (padding costs nothing),
  with 8-lane SIMD over channels (`agents.models.nlm_simd`), on ``torch.get_num_threads()``
  threads. Arities <= 1 stay in PyTorch (``[B, N, C]`` tensors are small) when training; the
  gradient-free path (`agents.models.nlm_infer`) compiles them too.

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

import itertools
import math
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

if TYPE_CHECKING:
    from agents.models.nlm_infer import InferencePlan

__all__ = ["NLM", "NLMLayer"]

_INF = float("inf")


class _MaskedMaxMin(torch.autograd.Function):
    """(max, min) over the last object axis (dim ``-2``) of the entries where ``valid`` holds.

    Excluded entries count as ``lo`` for the max and ``hi`` for the min. The backward pass routes
    each gradient to the selected entry (two scatters), and to nothing for an empty row.
    """

    @staticmethod
    def forward(ctx, x: Tensor, valid: Tensor, lo: float, hi: float) -> tuple[Tensor, Tensor]:
        dim = max(x.dim(), valid.dim()) - 2
        mx, imx = torch.where(valid, x, lo).max(dim=dim)
        mn, imn = torch.where(valid, x, hi).min(dim=dim)
        nonempty = valid.any(dim=dim)
        ctx.save_for_backward(imx, imn, nonempty)
        ctx.dim = dim
        ctx.x_shape = x.shape
        ctx.full_shape = torch.broadcast_shapes(x.shape, valid.shape)
        return mx, mn

    @staticmethod
    def backward(ctx, g_mx: Tensor, g_mn: Tensor):
        imx, imn, nonempty = ctx.saved_tensors
        dim = ctx.dim
        g = torch.zeros(ctx.full_shape, dtype=g_mx.dtype, device=g_mx.device)
        g.scatter_add_(dim, imx.unsqueeze(dim), (g_mx * nonempty).unsqueeze(dim))
        g.scatter_add_(dim, imn.unsqueeze(dim), (g_mn * nonempty).unsqueeze(dim))
        if g.shape != ctx.x_shape:
            g = g.sum_to_size(ctx.x_shape)
        return g, None, None, None


def masked_exists_forall(x: Tensor, valid: Tensor, lo: float = 0.0, hi: float = 1.0) -> tuple[Tensor, Tensor]:
    """∃ (max) and ∀ (min) of ``x`` over its last object axis, restricted to ``valid`` entries.

    Args:
        x: ``[B] + [N]*k + [C]`` (``k >= 1``; size-1 axes broadcast against ``valid``).
        valid: bool, broadcastable to ``[B] + [N]*k + [1]``.
        lo, hi: values of the excluded entries for the max and the min (the value of an empty
            reduction): 0 and 1 for truth values, ``-inf`` and ``inf`` for pre-activations.

    Returns:
        ``(∃, ∀)``, each ``[B] + [N]*(k-1) + [C]``.
    """
    return _MaskedMaxMin.apply(x, valid, lo, hi)


class _Expanded3:
    """A lazy arity-3 activation built from expansions only: ``σ(b + Σ_π π(expand(X)) V_π)`` of
    an arity-2 tensor ``X`` (``[B, N, N, C]``) and the arity-3 linear layer ``(V, b)`` of ``layer``.

    `NLMLayer` consumes it with the fused kernels of `agents.models.nlm_block3` instead of
    materialising ``[B, N, N, N, C]``; `materialize` gives the tensor (the generic path).
    """

    def __init__(self, x: Tensor, layer: NLMLayer):
        self.x, self.layer = x, layer

    @property
    def channels(self) -> int:
        return self.layer.out_channels[3]

    def materialize(self) -> Tensor:
        batch, n = self.x.shape[:2]
        out = self.layer._arity_full(3, {2: self.x}, {}, batch, n)
        assert isinstance(out, Tensor)
        return out


def _permuted(t: Tensor, perm: tuple[int, ...]) -> Tensor:
    """View of ``t`` (``[B] + [N]*r + [C]``) with its object axes permuted like NLM's permute."""
    r = len(perm)
    return t.permute(0, *(1 + q for q in perm), r + 1)


class NLMLayer(nn.Module):
    r"""One NLM layer: expand, reduce (∃ = max, ∀ = min), permute, per-arity linear + sigmoid.

    .. math::
        Y_r = \sigma\Big(b_r + \sum_{\pi \in S_r}
              \pi\big([\mathrm{expand}(X_{r-1}) \| X_r \| \exists X_{r+1} \| \forall X_{r+1}]\big)
              W_{r,\pi}\Big)

    Args:
        in_channels: arity -> input channels (arities with 0 channels are ignored).
        out_channels: arity -> output channels; each needs an input of arity ``r-1``, ``r`` or ``r+1``.
        activation: apply the sigmoid (False for the output layer: raw values).
        reduce_outputs: output arities that the next layer only reduces: they are returned as their
            (∃, ∀) pair over the last object axis, computed before the sigmoid (``σ`` is monotone).
        exclude_self: what the compiled kernels' reductions skip (the generic path reads ``valid``).
        lazy_arity3: with ``fused=True`` in `forward`, return an arity-3 output built from
            expansions only as a lazy `_Expanded3` for the next layer's fused arity-3 block.

    Shapes:
        - ``full[k]``: ``[B] + [N]*k + [C_k]``; ``reduced[k]``: the (∃, ∀) pair of an arity-``k``
          input, each ``[B] + [N]*(k-1) + [C_k]`` (an input arity is given in one of the two forms;
          the reduced form is enough when the layer only reduces it).
        - ``valid[k]`` (k >= 1): bool broadcastable to ``[B] + [N]*k + [1]``, the entries of the last
          object axis that a reduction of an arity-``k`` tensor ranges over; ``mask``: bool
          ``[B, N]``, the real objects.
        - output: ``(full, reduced)`` dicts of the same forms, with ``out_channels[r]`` channels.

    With ``fused=True`` in `forward` (CPU), arity-2 outputs, the masked reductions of arity 1 and
    2 and a lazy arity-3 input run in the compiled kernels (`NLM`); the function is the same.
    """

    def __init__(
        self,
        in_channels: Mapping[int, int],
        out_channels: Mapping[int, int],
        activation: bool = True,
        reduce_outputs: Collection[int] = (),
        exclude_self: bool = True,
        lazy_arity3: bool = False,
    ):
        super().__init__()
        self.exclude_self = exclude_self
        self.lazy_arity3 = lazy_arity3
        self.in_channels = {int(k): int(c) for k, c in in_channels.items() if c > 0}
        self.out_channels = {int(r): int(c) for r, c in sorted(out_channels.items()) if c > 0}
        self.activation = activation
        self.reduce_outputs = frozenset(int(r) for r in reduce_outputs)
        if self.reduce_outputs and (not activation or min(self.reduce_outputs) < 1):
            raise ValueError("only activated outputs of arity >= 1 can be returned reduced")
        self.linears = nn.ModuleDict()
        self._parts: dict[int, tuple[int, int]] = {}
        for r, c_out in self.out_channels.items():
            c_exp = self.in_channels.get(r - 1, 0) if r >= 1 else 0
            c_own = self.in_channels.get(r, 0) + 2 * self.in_channels.get(r + 1, 0)
            if c_exp + c_own == 0:
                raise ValueError(f"output arity {r} has no input of arity {r - 1}, {r} or {r + 1}")
            self._parts[r] = (c_exp, c_own)
            self.linears[str(r)] = nn.Linear(math.factorial(r) * (c_exp + c_own), c_out)
        self._perms = {r: list(itertools.permutations(range(r))) for r in self.out_channels}

    def reset_parameters(self) -> None:
        for lin in self.linears.values():
            lin.reset_parameters()

    def forward(
        self,
        full: Mapping[int, Tensor | _Expanded3],
        reduced: Mapping[int, tuple[Tensor, Tensor]],
        valid: Mapping[int, Tensor],
        mask: Tensor,
        fused: bool = False,
    ) -> tuple[dict[int, Tensor | _Expanded3], dict[int, tuple[Tensor, Tensor]]]:
        batch, n = mask.shape
        full = dict(full)
        red = dict(reduced)
        out_full: dict[int, Tensor | _Expanded3] = {}
        out_red: dict[int, tuple[Tensor, Tensor]] = {}
        lazy = full.get(3)
        if isinstance(lazy, _Expanded3):
            del full[3]
            fused3 = None
            if 3 not in self.out_channels or 3 in self.reduce_outputs:
                fused3 = self._fused3(lazy, full, red, mask)
            if fused3 is None:
                full[3] = lazy.materialize()
            else:
                out_red.update(fused3)
        for r in self.out_channels:
            k = r + 1
            if k in self.in_channels and k not in red:
                red[k] = self._exists_forall(full[k], k, valid[k], mask, fused)
        for r in self.out_channels:
            if r in out_red:
                continue
            if fused and r == 2 and self.activation:
                fast = self._fused2(full, red, mask, reduce=r in self.reduce_outputs)
                if fast is not None:
                    if isinstance(fast, tuple):
                        out_red[r] = fast
                    else:
                        out_full[r] = fast
                    continue
            if r in self.reduce_outputs:
                out_red[r] = self._arity_reduced(r, full, red, valid[r], mask, fused)
            else:
                out_full[r] = self._arity_full(r, full, red, batch, n, lazy=fused and self.lazy_arity3)
        return out_full, out_red

    def _fused3(
        self,
        t: _Expanded3,
        full: Mapping[int, Tensor],
        red: dict[int, tuple[Tensor, Tensor]],
        mask: Tensor,
    ) -> dict[int, tuple[Tensor, Tensor]] | None:
        """Consume a lazy arity-3 input with the fused kernel: sets ``red[3]``, returns the arity-3
        output reduced (empty when this layer has none); None when the kernel does not apply."""
        from agents.models.nlm_block3 import block3

        lin0 = t.layer.linears["3"]
        own = 3 in self.out_channels
        if own and (2 not in full or self._parts[3] != (self.in_channels[2], t.channels)):
            return None  # the kernel's second layer expands its arity-2 input and owns only T
        lin = self.linears["3"] if own else None
        ex_t, fa_t, ex_y, fa_y = block3(
            t.x,
            lin0.weight,
            lin0.bias,
            full[2] if own else None,
            lin.weight if lin else None,
            lin.bias if lin else None,
            mask,
            self.exclude_self,
        )
        red[3] = (ex_t, fa_t)
        return {3: (ex_y, fa_y)} if own else {}

    def _fused2(
        self, full: Mapping[int, Tensor], red: Mapping[int, tuple[Tensor, Tensor]], mask: Tensor, reduce: bool
    ) -> Tensor | tuple[Tensor, Tensor] | None:
        """The arity-2 output (or its ∃/∀ pair when ``reduce``) by the compiled kernel of
        `agents.models.nlm_kernels`; None when its inputs are not full-size tensors."""
        from agents.models.nlm_kernels import arity2_output

        batch, n = mask.shape
        parts = ([full[2]] if 2 in self.in_channels else []) + (list(red[3]) if 3 in red else [])
        x1 = full[1] if 1 in self.in_channels else None
        if not parts or any(p.shape[:3] != (batch, n, n) for p in parts):
            return None
        if x1 is not None and x1.shape[:2] != (batch, n):
            return None
        lin = self.linears["2"]
        return arity2_output(x1, parts, lin.weight, lin.bias, mask, self.exclude_self, reduce)

    def _weight(self, r: int) -> tuple[Tensor, int]:
        """The arity-``r`` weight as ``[C_out, r!, C_exp + C_own]`` and ``C_exp``."""
        lin = self.linears[str(r)]
        c_exp, c_own = self._parts[r]
        return lin.weight.view(lin.out_features, len(self._perms[r]), c_exp + c_own), c_exp

    def _own(
        self, r: int, full: Mapping[int, Tensor], red: Mapping[int, tuple[Tensor, Tensor]]
    ) -> Tensor | None:
        """Own term ``sum_π π([X_r || ∃X_{r+1} || ∀X_{r+1}]) W_π`` (full size), or None."""
        parts = ([full[r]] if r in self.in_channels else []) + (list(red[r + 1]) if r + 1 in red else [])
        if not parts:
            return None
        z = torch.cat(parts, dim=-1) if len(parts) > 1 else parts[0]
        w, c_exp = self._weight(r)
        w_own = w[:, :, c_exp:]
        c_out, n_perm, c_own = w_own.shape
        if n_perm == 1:
            return F.linear(z, w_own[:, 0])
        perms = self._perms[r]
        ys = F.linear(z, w_own.transpose(0, 1).reshape(n_perm * c_out, c_own)).unflatten(-1, (n_perm, c_out))
        ys = ys.unbind(-2)
        out = ys[0] + _permuted(ys[1], perms[1])
        for p in range(2, n_perm):
            out.add_(_permuted(ys[p], perms[p]))
        return out

    def _groups(self, r: int, full: Mapping[int, Tensor]) -> dict[int, Tensor]:
        """Expanded term ``sum_π π(expand(X_{r-1})) W_π``, grouped by the broadcast axis ``d``.

        Group ``d`` has size 1 on object axis ``d`` (it does not depend on that object).
        """
        w, c_exp = self._weight(r)
        if not c_exp:
            return {}
        c_out, n_perm, _ = w.shape
        u = F.linear(full[r - 1], w[:, :, :c_exp].transpose(0, 1).reshape(n_perm * c_out, c_exp))
        us = u.unflatten(-1, (n_perm, c_out)).unbind(-2)
        groups: dict[int, Tensor] = {}
        for p, perm in enumerate(self._perms[r]):
            v = _permuted(us[p].unsqueeze(r), perm)
            d = perm.index(r - 1)
            groups[d] = v if d not in groups else groups[d] + v
        return groups

    def _arity_full(
        self,
        r: int,
        full: Mapping[int, Tensor],
        red: Mapping[int, tuple[Tensor, Tensor]],
        batch: int,
        n: int,
        lazy: bool = False,
    ) -> Tensor | _Expanded3:
        if lazy and r == 3 and self._parts[3][1] == 0 and 2 in full:
            return _Expanded3(full[2], self)
        out, groups = self._own(r, full, red), self._groups(r, full)
        bias = self.linears[str(r)].bias
        owned = out is not None
        for g in groups.values():
            out, owned = _add(out, owned, g)
        assert out is not None
        shape = (batch, *([n] * r), bias.shape[0])
        if owned and out.shape == shape:
            out.add_(bias)
        else:
            out = out.expand(shape) + bias
        return out.sigmoid_() if self.activation else out

    def _exists_forall(
        self, x: Tensor, k: int, valid: Tensor, mask: Tensor, fused: bool, lo: float = 0.0, hi: float = 1.0
    ) -> tuple[Tensor, Tensor]:
        """``masked_exists_forall(x, valid, lo, hi)``; by the compiled kernel when ``fused`` allows."""
        if fused and k in (1, 2) and x.shape[:-1] == (mask.shape[0], *([mask.shape[1]] * k)):
            from agents.models.nlm_kernels import masked_max_min

            return masked_max_min(x, mask, self.exclude_self, lo, hi)
        return masked_exists_forall(x, valid, lo, hi)

    def _arity_reduced(
        self,
        r: int,
        full: Mapping[int, Tensor],
        red: Mapping[int, tuple[Tensor, Tensor]],
        valid: Tensor,
        mask: Tensor,
        fused: bool = False,
    ) -> tuple[Tensor, Tensor]:
        out, groups = self._own(r, full, red), self._groups(r, full)
        owned = out is not None
        # Terms constant along the reduced (last) axis are added after the reduction.
        post = self.linears[str(r)].bias
        const = groups.pop(r - 1, None)
        if const is not None:
            post = const.squeeze(r) + post
        for g in groups.values():
            out, owned = _add(out, owned, g)
        if out is None:  # every term is constant along the reduced axis
            assert const is not None
            out = torch.zeros_like(const)
        ex, fa = self._exists_forall(out, r, valid, mask, fused, -_INF, _INF)
        return torch.sigmoid(ex + post), torch.sigmoid(fa + post)


def _add(out: Tensor | None, owned: bool, g: Tensor) -> tuple[Tensor, bool]:
    """``out + g``, in place when ``out`` is a tensor this layer allocated and keeps its shape."""
    if out is None:
        return g, False
    if owned and out.shape == torch.broadcast_shapes(out.shape, g.shape):
        return out.add_(g), True
    return out + g, True


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
        fused: use the compiled CPU kernels (`agents.models.nlm_block3`, `agents.models.nlm_kernels`)
            where they apply (None: for float32/float64 CPU tensors). Same function either way; the
            generic path runs on any device.

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
            raise ValueError("depth, breadth, hidden and n_outputs must be positive")
        self.in_channels = {int(k): int(c) for k, c in sorted(in_channels.items()) if c > 0}
        if not self.in_channels:
            raise ValueError("the NLM needs at least one input channel")
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
            # The fused kernels take an arity-3 output built from expansions only (no arity-3 or -4
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
        self.fused = fused
        self._distinct: dict[tuple[int, int, str], Tensor] = {}
        self._plan: InferencePlan | Literal[False] | None = None  # see _inference_plan

    def reset_parameters(self) -> None:
        for layer in self.layers:
            layer.reset_parameters()

    def forward(self, inputs: Mapping[str, Tensor]) -> Tensor:
        dtype = self.layers[-1].linears["0"].weight.dtype
        fused = self.fused
        if fused is None:
            fused = inputs["object_mask"].device.type == "cpu" and dtype in (torch.float32, torch.float64)
        if fused and not _records_grad(self, inputs):
            plan = self._inference_plan()
            if plan is not None:
                return plan(self, inputs, dtype)
        mask = inputs["object_mask"].bool()
        valid = _Lazy(lambda k: self._valid(mask, k))  # the fused kernels read the mask instead
        full: dict[int, Tensor] = {}
        for k in self.in_channels:
            x = inputs[f"arity{k}"].to(dtype)
            if k >= 1:  # zero the padding so that garbage there cannot reach even a gradient
                x = torch.where(_tuple_mask(mask, k), x, 0.0)
            full[k] = x
        h: dict[int, Tensor | _Expanded3] = dict(full)
        reduced: dict[int, tuple[Tensor, Tensor]] = {}
        for layer in self.layers:
            h, reduced = layer(h, reduced, valid, mask, fused=fused)
        out = h[0]
        assert isinstance(out, Tensor)
        return out

    def _inference_plan(self) -> InferencePlan | None:
        """The gradient-free CPU forward of this network (`agents.models.nlm_infer`), rebuilt when
        the parameters change; None when the network is outside the fused path's cover."""
        from agents.models.nlm_infer import InferencePlan

        plan = self._plan
        if plan is False:
            return None
        if plan is None or not plan.current(self):
            plan = self._plan = InferencePlan.build(self) or False
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
