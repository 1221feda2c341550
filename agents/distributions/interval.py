r"""The probability that a (truncated) Gaussian falls in an interval, stably, in torch.

Two uses, two implementations of ``log P(a ≤ X ≤ b)`` for ``X ~ N(μ, σ)``:

* training: the interval-censored log-likelihood (`log_interval_probability`, the loss of a state
  known only to have ``l ≤ h* ≤ u``, `agents.heads.Head.interval_nll`) must be differentiable in
  ``μ`` and ``σ`` with finite gradients however far μ lies outside the interval. It is the
  normalizer ``log Z`` of ``TN(μ, σ, a, b)``, computed by `truncated.TruncatedGaussian` (its
  regimes, the far tail and the Taylor series for short intervals).
* confidence: the confidence of a N or TN head (`agents.heads.Head.confidence`) is the
  probability, under the predicted distribution of ``h*``, of the *unit bucket* ``[ĥ − ½, ĥ + ½]``
  around the search value ``ĥ``: the continuous counterpart of the categorical head's
  ``max_i p_i``. It needs ``P(a ≤ X ≤ b)`` for ``X ~ N(μ, σ)`` and for ``X ~ TN(μ, σ, l, u)``, and
  the latter divides two such probabilities that can both underflow (μ many σ outside ``[l, u]``),
  so everything is computed in log space, without gradients in mind:

  ``log P(α ≤ Z ≤ β)`` for a standard normal ``Z`` (`log_normal_interval`) uses the side of 0 where
  the two CDF values are small (``Φ(β) − Φ(α) = Φ(−α) − Φ(−β)``), ``log_ndtr`` for each, and
  ``log(1 − e^d)`` written as ``log(−expm1(d))`` near 0 (no cancellation); an interval that
  straddles 0 is ``1 − Φ(α) − Φ(−β)`` with both terms below ½. The TN probability is then
  ``exp(log P(bucket ∩ [l, u]) − log P([l, u]))``.

Both are tested against mpmath and scipy (``tests/test_distributions.py``,
``tests/test_confidence.py``). They agree to rounding; each keeps its own so that neither the losses
nor the confidences (and the thresholds of confidence-aware search) change by an ulp.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from agents.distributions.truncated import TensorLike, TruncatedGaussian

__all__ = [
    "BUCKET_HALF_WIDTH",
    "log_interval_probability",
    "log_normal_interval",
    "normal_bucket",
    "truncated_normal_bucket",
]

BUCKET_HALF_WIDTH = 0.5
"""Half the width of the unit bucket ``[ĥ − ½, ĥ + ½]``."""

_LOG_HALF = math.log(0.5)


def log_interval_probability(mu: TensorLike, sigma: TensorLike, low: TensorLike, high: TensorLike) -> Tensor:
    r"""``log P(low ≤ X ≤ high)`` for ``X ~ N(μ, σ)``: ``log(Φ((high − μ)/σ) − Φ((low − μ)/σ))``,
    the log-likelihood of an *interval-censored* observation (h* known only to lie in
    ``[low, high]``, `agents.heads.Head.interval_nll`).

    It is the normalizer ``log Z`` of ``TN(μ, σ, low, high)``, computed as that is (the docstring of
    `agents.distributions.truncated`): from the far tail where μ lies beyond an end, so that it
    stays finite and accurate when μ is thousands of σ outside the interval (a naive difference of
    two cdfs is 0 there, and its log ``-inf``), and by the Taylor regime for intervals much shorter
    than σ; differentiable in every argument, with finite gradients. ``high`` may be ``+inf`` and
    ``low`` ``-inf``."""
    return TruncatedGaussian(mu, sigma, low, high).log_normalizer


def _log1mexp(d: Tensor) -> Tensor:
    """``log(1 − e^d)`` for ``d ≤ 0`` without cancellation (Mächler 2012)."""
    return torch.where(d > _LOG_HALF, torch.log(-torch.expm1(d)), torch.log1p(-torch.exp(d)))


def log_normal_interval(alpha: Tensor, beta: Tensor) -> Tensor:
    """``log P(α ≤ Z ≤ β)`` for a standard normal ``Z``, elementwise (−inf where ``α ≥ β``)."""
    alpha, beta = torch.broadcast_tensors(alpha, beta)
    upper_side = alpha >= 0  # both ≥ 0: Φ(−α) − Φ(−β), two small numbers
    hi = torch.where(upper_side, -alpha, beta)  # the larger of the two small CDF arguments
    lo = torch.where(upper_side, -beta, alpha)
    log_hi, log_lo = torch.special.log_ndtr(hi), torch.special.log_ndtr(lo)
    one_side = log_hi + _log1mexp(torch.clamp(log_lo - log_hi, max=0.0))
    # straddling 0: 1 − Φ(α) − Φ(−β), both terms below ½
    straddle = torch.log1p(-(torch.special.ndtr(alpha) + torch.special.ndtr(-beta)))
    out = torch.where(upper_side | (beta <= 0), one_side, straddle)
    return torch.where(alpha < beta, out, torch.full_like(out, -math.inf))


def normal_bucket(mu: Tensor, sigma: Tensor, center: Tensor, half_width: float = BUCKET_HALF_WIDTH) -> Tensor:
    """``P(center − w ≤ X ≤ center + w)`` for ``X ~ N(μ, σ)``."""
    alpha, beta = (center - half_width - mu) / sigma, (center + half_width - mu) / sigma
    return torch.exp(log_normal_interval(alpha, beta))


def truncated_normal_bucket(
    mu: Tensor,
    sigma: Tensor,
    low: Tensor,
    high: Tensor,
    center: Tensor,
    half_width: float = BUCKET_HALF_WIDTH,
) -> Tensor:
    """``P(center − w ≤ X ≤ center + w)`` for ``X ~ TN(μ, σ, low, high)`` (0 when the bucket misses
    ``[low, high]``)."""
    a = torch.maximum(center - half_width, low)
    b = torch.minimum(center + half_width, high)
    log_bucket = log_normal_interval((a - mu) / sigma, (b - mu) / sigma)
    log_support = log_normal_interval((low - mu) / sigma, (high - mu) / sigma)
    return torch.exp(torch.clamp(log_bucket - log_support, max=0.0))
