r"""One NLM layer: expand, reduce (∃ = max, ∀ = min), permute, then one linear map per arity.

.. math::
    Y_r = \sigma\Big(b_r + \sum_{\pi \in S_r}
          \pi\big([\mathrm{expand}(X_{r-1}) \| X_r \| \exists X_{r+1} \| \forall X_{r+1}]\big)
          W_{r,\pi}\Big)

How it stays fast in PyTorch (no ``r!`` copies of the inputs are ever made): the channel matmul
commutes with the axis permutation, so the "own" part ``[X_r ‖ ∃ ‖ ∀]`` is multiplied once by all
``W_{r,π}`` and the ``r!`` products are summed as permuted views; the expanded part is multiplied
at arity ``r - 1`` and only broadcast-added, grouped by the position of its broadcast axis;
``σ`` is monotone, so ``∃_z σ(a) = σ(max_z a)``: an output that the next layer only reduces is
never activated at full size, and terms that do not depend on the reduced axis (the bias, one
expand group) are added after the reduction. `agents.models.nlm.reference` is the same layer
written literally.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from agents.errors import AgentError
from agents.models.nlm.reductions import masked_exists_forall

if TYPE_CHECKING:
    from agents.models.nlm.compiled import CompiledPath

__all__ = ["LazyArity3", "NLMLayer"]

_INF = float("inf")


class LazyArity3:
    """A lazy arity-3 activation built from expansions only: ``σ(b + Σ_π π(expand(X)) V_π)`` of
    an arity-2 tensor ``X`` (``[B, N, N, C]``) and the arity-3 linear layer ``(V, b)`` of ``layer``.

    The next `NLMLayer` hands it to the compiled arity-3 block (`CompiledPath.arity3_block`) instead
    of materialising ``[B, N, N, N, C]``; `materialize` gives the tensor (the generic path).
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
        exclude_self: what the compiled path's reductions skip (the generic path reads ``valid``).
        lazy_arity3: with a compiled path in `forward`, return an arity-3 output built from
            expansions only as a lazy `LazyArity3` for the next layer's compiled arity-3 block.

    Shapes:
        - ``full[k]``: ``[B] + [N]*k + [C_k]``; ``reduced[k]``: the (∃, ∀) pair of an arity-``k``
          input, each ``[B] + [N]*(k-1) + [C_k]`` (an input arity is given in one of the two forms;
          the reduced form is enough when the layer only reduces it).
        - ``valid[k]`` (k >= 1): bool broadcastable to ``[B] + [N]*k + [1]``, the entries of the last
          object axis that a reduction of an arity-``k`` tensor ranges over; ``mask``: bool
          ``[B, N]``, the real objects.
        - output: ``(full, reduced)`` dicts of the same forms, with ``out_channels[r]`` channels.

    With a ``compiled`` path in `forward` (CPU tensors), arity-2 outputs, the masked reductions of
    arity 1 and 2 and a lazy arity-3 input run in compiled kernels; the function is the same.

    Attributes:
        input_parts: output arity ``r`` -> ``(C_exp, C_own)``, the channels of ``expand(X_{r-1})``
            and of ``[X_r ‖ ∃X_{r+1} ‖ ∀X_{r+1}]`` that its linear layer reads per permutation.
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
            raise AgentError("only activated outputs of arity >= 1 can be returned reduced")
        self.linears = nn.ModuleDict()
        self.input_parts: dict[int, tuple[int, int]] = {}
        for r, c_out in self.out_channels.items():
            c_exp = self.in_channels.get(r - 1, 0) if r >= 1 else 0
            c_own = self.in_channels.get(r, 0) + 2 * self.in_channels.get(r + 1, 0)
            if c_exp + c_own == 0:
                raise AgentError(f"output arity {r} has no input of arity {r - 1}, {r} or {r + 1}")
            self.input_parts[r] = (c_exp, c_own)
            self.linears[str(r)] = nn.Linear(math.factorial(r) * (c_exp + c_own), c_out)
        self._perms = {r: list(itertools.permutations(range(r))) for r in self.out_channels}

    def reset_parameters(self) -> None:
        for lin in self.linears.values():
            lin.reset_parameters()

    def forward(
        self,
        full: Mapping[int, Tensor | LazyArity3],
        reduced: Mapping[int, tuple[Tensor, Tensor]],
        valid: Mapping[int, Tensor],
        mask: Tensor,
        compiled: CompiledPath | None = None,
    ) -> tuple[dict[int, Tensor | LazyArity3], dict[int, tuple[Tensor, Tensor]]]:
        batch, n = mask.shape
        full = dict(full)
        red = dict(reduced)
        out_full: dict[int, Tensor | LazyArity3] = {}
        out_red: dict[int, tuple[Tensor, Tensor]] = {}
        lazy = full.get(3)
        if isinstance(lazy, LazyArity3):
            del full[3]
            fused3 = None
            if compiled is not None and (3 not in self.out_channels or 3 in self.reduce_outputs):
                fused3 = self._fused3(compiled, lazy, full, red, mask)
            if fused3 is None:
                full[3] = lazy.materialize()
            else:
                out_red.update(fused3)
        for r in self.out_channels:
            k = r + 1
            if k in self.in_channels and k not in red:
                red[k] = self._exists_forall(full[k], k, valid[k], mask, compiled)
        for r in self.out_channels:
            if r in out_red:
                continue
            if compiled is not None and r == 2 and self.activation:
                fast = self._fused2(compiled, full, red, mask, reduce=r in self.reduce_outputs)
                if fast is not None:
                    if isinstance(fast, tuple):
                        out_red[r] = fast
                    else:
                        out_full[r] = fast
                    continue
            if r in self.reduce_outputs:
                out_red[r] = self._arity_reduced(r, full, red, valid[r], mask, compiled)
            else:
                lazy3 = compiled is not None and self.lazy_arity3
                out_full[r] = self._arity_full(r, full, red, batch, n, lazy=lazy3)
        return out_full, out_red

    def _fused3(
        self,
        compiled: CompiledPath,
        t: LazyArity3,
        full: Mapping[int, Tensor],
        red: dict[int, tuple[Tensor, Tensor]],
        mask: Tensor,
    ) -> dict[int, tuple[Tensor, Tensor]] | None:
        """Consume a lazy arity-3 input with the compiled block: sets ``red[3]``, returns the arity-3
        output reduced (empty when this layer has none); None when the block does not apply."""
        lin0 = t.layer.linears["3"]
        own = 3 in self.out_channels
        if own and (2 not in full or self.input_parts[3] != (self.in_channels[2], t.channels)):
            return None  # the kernel's second layer expands its arity-2 input and owns only T
        lin = self.linears["3"] if own else None
        ex_t, fa_t, ex_y, fa_y = compiled.arity3_block(
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
        self,
        compiled: CompiledPath,
        full: Mapping[int, Tensor],
        red: Mapping[int, tuple[Tensor, Tensor]],
        mask: Tensor,
        reduce: bool,
    ) -> Tensor | tuple[Tensor, Tensor] | None:
        """The arity-2 output (or its ∃/∀ pair when ``reduce``) by the compiled path; None when its
        inputs are not full-size tensors."""
        batch, n = mask.shape
        parts = ([full[2]] if 2 in self.in_channels else []) + (list(red[3]) if 3 in red else [])
        x1 = full[1] if 1 in self.in_channels else None
        if not parts or any(p.shape[:3] != (batch, n, n) for p in parts):
            return None
        if x1 is not None and x1.shape[:2] != (batch, n):
            return None
        lin = self.linears["2"]
        return compiled.arity2_output(x1, parts, lin.weight, lin.bias, mask, self.exclude_self, reduce)

    def _weight(self, r: int) -> tuple[Tensor, int]:
        """The arity-``r`` weight as ``[C_out, r!, C_exp + C_own]`` and ``C_exp``."""
        lin = self.linears[str(r)]
        c_exp, c_own = self.input_parts[r]
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
    ) -> Tensor | LazyArity3:
        if lazy and r == 3 and self.input_parts[3][1] == 0 and 2 in full:
            return LazyArity3(full[2], self)
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
        self,
        x: Tensor,
        k: int,
        valid: Tensor,
        mask: Tensor,
        compiled: CompiledPath | None,
        lo: float = 0.0,
        hi: float = 1.0,
    ) -> tuple[Tensor, Tensor]:
        """``masked_exists_forall(x, valid, lo, hi)``; by the compiled path when it applies."""
        if compiled is not None and k in (1, 2) and x.shape[:-1] == (mask.shape[0], *([mask.shape[1]] * k)):
            return compiled.exists_forall(x, mask, self.exclude_self, lo, hi)
        return masked_exists_forall(x, valid, lo, hi)

    def _arity_reduced(
        self,
        r: int,
        full: Mapping[int, Tensor],
        red: Mapping[int, tuple[Tensor, Tensor]],
        valid: Tensor,
        mask: Tensor,
        compiled: CompiledPath | None = None,
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
        ex, fa = self._exists_forall(out, r, valid, mask, compiled, -_INF, _INF)
        return torch.sigmoid(ex + post), torch.sigmoid(fa + post)


def _add(out: Tensor | None, owned: bool, g: Tensor) -> tuple[Tensor, bool]:
    """``out + g``, in place when ``out`` is a tensor this layer allocated and keeps its shape."""
    if out is None:
        return g, False
    if owned and out.shape == torch.broadcast_shapes(out.shape, g.shape):
        return out.add_(g), True
    return out + g, True
