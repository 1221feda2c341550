"""A trained WL model as plain arrays: colour table, standardisation, linear map and head.

`WLLinear` computes ``raw = W z + b`` with ``z = (x - m) s`` on the colour counts x
(`agents.models.wl.network`: m the training mean, s the inverse standard deviation, 0 for a
constant feature), in float32, and the head (`agents.heads`) turns raw into the search value.
`export_wl` gives the same numbers as arrays (the float32 parameters, and W and b exactly in
float64) and what the compiled kernels add for speed: ``z0 = (0 - m) s`` (rounded to float32 at
each step, as torch does), ``wz0 = W z0`` and ``c0 = b + sum_i wz0_i`` (float64), so that

    raw_j = c0_j + sum over the features i with x_i > 0 of (W_ji z_i - wz0_ji)

costs one term per feature the state *has* (a hundred or so) instead of one per feature of the
table (thousands), with each z_i rounded as torch rounds it. The sum is float64; only the order
of torch's float32 additions is not reproduced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from agents.errors import AgentError
from agents.heads import GaussianHead, Head, TruncatedGaussianHead
from agents.models.wl.compiled.table import ColourTable, colour_table
from agents.models.wl.network import WLLinear

__all__ = ["WLExport", "export_wl"]

_TABLES: dict[str, tuple[ColourTable, list[str]]] = {}
"""Colour tables already converted, by featurizer key (one model serves many tasks)."""
_MAX_TABLES = 8


@dataclass(frozen=True)
class WLExport:
    """A trained WL model as arrays (see the module docstring).

    Attributes:
        table: the colour table (`table.ColourTable`); predicates: its predicate order.
        mean, inv_std: float32 (n_features): the standardisation m and s.
        weight: float64 (n_outputs, n_features); bias: float64 (n_outputs).
        z0, wz0, c0: float32 (n_features), float64 (n_outputs, n_features), float64 (n_outputs):
            the standardised zero count, its weighted terms and the output at all-zero counts.
        head: float64 [dist (0: N, 1: TN), learned sigma (0/1), default upper bound u].
        bound, residual: the head's lower bound heuristic and residual base (None) names.
    """

    table: ColourTable
    predicates: tuple[str, ...]
    mean: np.ndarray
    inv_std: np.ndarray
    weight: np.ndarray
    bias: np.ndarray
    z0: np.ndarray
    wz0: np.ndarray
    c0: np.ndarray
    head: np.ndarray
    bound: str
    residual: str | None

    @property
    def n_features(self) -> int:
        return int(self.table.config[2])


def _table(config: dict[str, Any], key: str) -> tuple[ColourTable, list[str]]:
    if key not in _TABLES:
        if len(_TABLES) >= _MAX_TABLES:
            _TABLES.pop(next(iter(_TABLES)))
        _TABLES[key] = colour_table(config)
    return _TABLES[key]


def export_wl(model: WLLinear, head: Head) -> WLExport:
    """The arrays of a WL model and its N or TN head; `AgentError` for another head (the
    categorical head's argmax is left to the torch path)."""
    if not isinstance(model, WLLinear):
        raise AgentError(f"export_wl needs a WLLinear model, not {type(model).__name__}")
    if type(head) not in (GaussianHead, TruncatedGaussianHead):
        raise AgentError(f"the compiled WL heuristic computes the N and TN heads, not {head.dist!r}")
    if head.n_outputs != model.n_outputs:
        raise AgentError(f"the head needs {head.n_outputs} outputs, the model has {model.n_outputs}")
    table, predicates = _table(model.featurizer.config, model.featurizer.key)
    if int(table.config[2]) != model.n_features:
        raise AgentError(
            f"the colour table has {int(table.config[2])} features, the model {model.n_features}"
        )
    as_numpy = lambda t: t.detach().cpu().numpy().copy()  # noqa: E731
    mean, inv_std = as_numpy(model.mean).astype(np.float32), as_numpy(model.inv_std).astype(np.float32)
    weight = as_numpy(model.linear.weight).astype(np.float64)
    bias = as_numpy(model.linear.bias).astype(np.float64)
    z0 = (np.float32(0.0) - mean) * inv_std  # float32 operations, as the torch forward pass
    wz0 = weight * z0.astype(np.float64)[None, :]
    c0 = bias + wz0.sum(axis=1)
    upper = float(head.upper_bound(None, torch.zeros((), dtype=torch.float64)))  # u where none is given
    head_row = np.array([float(head.dist == "tn"), float(head.sigma == "learn"), upper])
    return WLExport(
        table=table,
        predicates=tuple(predicates),
        mean=mean,
        inv_std=inv_std,
        weight=np.ascontiguousarray(weight),
        bias=bias,
        z0=z0,
        wz0=np.ascontiguousarray(wz0),
        c0=c0,
        head=head_row,
        bound=head.lower_key,
        residual=head.residual_key,
    )
