r"""Gaussian and truncated Gaussian distributions in torch, numerically stable and differentiable.

The learned heuristic of the paper is the mean of a truncated Gaussian ``TN(μ, σ, l, u)`` whose lower
bound ``l`` is an admissible heuristic (section 3, Eq. 8-10).  During training ``μ`` is often many
``σ`` away from ``[l, u]`` (the model is still bad, or ``l`` is tight), and a naive implementation then
returns NaN, ±inf, a mean outside ``[l, u]``, or NaN gradients.  This module implements the
quantities the project needs -- ``mean``, ``variance``, ``log_prob`` and ``log_normalizer`` -- so that
values and gradients (w.r.t. ``mu``, ``sigma``, ``low``, ``high`` and ``x``) are finite and accurate in
every regime, in float32 as well as float64.  It depends on torch only; its constants are those of
`agents.distributions.constants`, and `agents.distributions.compiled` computes the same mean with numba
for search.

Notation
--------
``α = (l − μ)/σ``, ``β = (u − μ)/σ``, ``ξ = (x − μ)/σ``, ``φ`` / ``Φ`` the standard normal pdf / cdf,
``Z = Φ(β) − Φ(α)``, ``λ(t) = φ(t)/(1 − Φ(t)) = √(2/π)/erfcx(t/√2)`` (inverse Mills ratio) and::

    E[x]       = μ + σ (φ(α) − φ(β)) / Z
    Var[x]     = σ² [1 + (α φ(α) − β φ(β)) / Z − ((φ(α) − φ(β)) / Z)²]
    log p(x)   = −log σ − ½ log 2π − ξ²/2 − log Z          for l ≤ x ≤ u, −inf otherwise.

Canonical frame
---------------
The distribution is reflected (``t → −t``) so that the interval's midpoint is on the right of ``μ``:
``s = −1`` iff ``μ`` lies above the midpoint, and then ``(a, b) = (−β, −α)``, else ``(a, b) = (α, β)``.
Hence ``a ≤ b``, ``b ≥ |a|`` and only ``b`` can be infinite (``a = −∞`` only for the plain Gaussian).
All mass is then computed from the *right* tail, where ``erfcx`` is accurate.  Differences that
suffer from cancellation are formed directly in the original units: ``w = (u − l)/σ``,
``(x − pivot)/σ`` and ``(pivot − μ)/σ``, never as differences of standardized values.

Every quantity is expressed relative to a *pivot* ``P`` (original units; the near bound in
regimes T and A, ``μ`` in regime M) and a standardized reference point ``p``::

    E[x]     = P + s σ · moff                                   (moff ∈ [0, w] in T and A)
    log p(x) = −log σ − ½ log 2π − (ξ' − p)(ξ' + p)/2 − k,       k = log Z + p²/2,
    ξ' − p   = s (x − P)/σ − shift                               (shift = h in T, else 0)

so ``−ξ²/2 − log Z`` is never evaluated as a difference of two huge numbers (``log Z ≈ −α²/2``
when ``μ ≪ l``) and the mean is never ``μ + σ λ(α)`` with ``μ`` and ``σ λ`` nearly cancelling.
Three regimes are used (``w = b − a``, ``h = w/2``, ``c = a + h``):

``T`` (nearly equal bounds: ``h < 1`` and ``h c < 1.5``; ``p = c``, the midpoint)
    Taylor expansion around the midpoint, ``φ(c + t) = φ(c) Σ He_n(c) (−t)^n / n!`` (probabilists'
    Hermite polynomials, computed as ``H_n = He_n(c) hⁿ`` by the scaled recurrence
    ``H_{n+1} = (c h) H_n − n h² H_{n−1}`` so that nothing overflows for huge ``c``)::

        Z       = φ(c) · 2h · S0,        S0 = Σ_k H_2k / (2k+1)!
        E[t]−c  = S1 / S0,               S1 = −h  Σ_k H_2k+1 / ((2k+3) (2k+1)!)
        Var/σ²  = S2 / S0 − (S1/S0)²,    S2 =  h² Σ_k H_2k   / ((2k+3) (2k)!)
        k       = log(2h) + log S0 − ½ log 2π,     moff = h + S1/S0

    The erfc/erfcx forms lose all digits as ``w → 0`` (``Z`` is a difference of nearly equal
    numbers) and some digits for ``w ~ 1/c`` (the far tail ``r`` below is not small); the series is
    accurate to rounding in this region with 14 (float64) or 9 (float32) terms per sum.

``A`` (``a ≥ 0``: ``μ`` at or beyond the near bound; ``p = a``)
    One-sided tail quantities of ``t ≥ 0``: ``λ(t)``, ``g(t) = λ(t) − t = E[X − t | X > t]`` and
    ``m2(t) = 1 − t g(t) = E[(X − t)² | X > t]``.  For small ``t`` they come from ``erfcx``; for
    ``t ≥ 3`` (float64) / ``t ≥ 2`` (float32) from Laplace's continued fraction
    ``g(t) = 1/(t + 2/(t + 3/(t + …)))`` evaluated backwards (``T_k = k/(t + T_{k+1})``,
    ``g = T_1``, ``m2 = T_1 T_2``), which has no cancellation at all, unlike ``λ − t``
    (``λ ≈ t + 1/t``) or the asymptotic series ``1/t − 2/t³ + 10/t⁵ − …`` (which diverges).
    With ``D = w (a + b)/2 = (b² − a²)/2`` and ``r = Q(b)/Q(a) = e^{−D} λ(a)/λ(b)``::

        1 − r   = −expm1(−D) + e^{−D} (w + g(b) − g(a)) / λ(b)      (two non-negative terms)
        k       = −log λ(a) + log(1 − r) − ½ log 2π
        moff    = (g(a) − r (g(b) + w)) / (1 − r)                   (E = l + σ moff for s = +1)
        Var/σ²  = (m2(a) − r (m2(b) + 2 w g(b) + w²)) / (1 − r) − moff²

    For ``b = ∞`` (or ``D > 700``, where ``r < e^{−700}``) ``r = 0`` exactly: ``E = l + σ g(α)``,
    ``Var/σ² = m2 − g² = 1/α² − 6/α⁴ + …`` to a few ulp even for ``α = 10⁴`` and beyond.  Outside
    T, ``D ≥ 2``, so ``r`` is small and the differences above cost at most a few digits.

``M`` (``a < 0 ≤ b``: ``μ`` inside the interval; ``P = μ``, ``p = 0``)
    Both tail masses are below ½ and ``φ(a) ≥ φ(b)``, so nothing cancels in::

        Z      = ½ (erf(b/√2) + erf(−a/√2)),   log Z = log1p(−Φ(a) − Q(b)) when that sum < ½
        moff   = φ(a) · (−expm1(−D)) / Z       (= (φ(a) − φ(b))/Z)
        Var/σ² = 1 + (a φ(a) − b φ(b)) / Z − moff²

    (short intervals are in T, so ``Z`` is not small here and the variance loses < 1 digit).

Missing bounds may be given as ``±inf`` or as the paper's ``±1e5`` (appendix B.2); both work.  Infinite
bounds are replaced by finite stand-ins and every branch receives harmless substitute inputs where
it is not selected ("safe where"), so no NaN or inf enters the backward pass through ``torch.where``
(the reference package ``stable-trunc-gaussian`` produces NaN gradients for ``u = ∞``, because
``β = (∞ − μ)/σ`` has an infinite derivative w.r.t. ``σ`` that meets a zero).  The mean is finally
clamped to ``[l, u]`` against last-ulp rounding and ``Var/σ²`` to ``[0, 1]`` (truncation never
increases the variance of a Gaussian).

Accuracy (tests/test_distributions.py, against 50+ digit mpmath on μ up to 1e4 σ beyond either
bound, σ ∈ {1e-3, 1, 1e3}, finite / ±1e5 / infinite / nearly equal bounds): relative error of the
mean, log Z and log p ≲ 1e-15 and of the variance ≲ 1e-13 in float64; ≲ 1e-6 and ≲ 2e-5 in
float32.  (Where ``E[x]`` is much closer to 0 than ``l``, its error is that of ``l`` itself.)

Cost: regimes (and the far-tail evaluation) that no element needs are skipped, and the number of
continued-fraction terms is chosen from the data; this costs a few host syncs per call on a GPU.

Half-precision inputs are computed in float32 and cast back.

Input domain (checked only with ``validate_args=True``, since a check forces a device sync; every
input outside it raises `AgentError`): ``μ`` finite; ``σ`` finite and at least the working dtype's
smallest normal number; ``l`` and ``u`` not NaN (``±inf`` for no bound) with ``l < u``; the finite
bounds a representable number of ``σ`` from ``μ`` and from each other (``(l − μ)/σ``, ``(u − μ)/σ``
and ``(u − l)/σ`` finite in the working dtype).  Inside the domain no output is NaN, and none is
±inf unless the true value lies beyond the dtype's range (tests/test_distributions.py checks
float32 and float64 for ``σ`` from 1e-30 to 1e30, bounds at ±inf, ±1e5 and finite, ``x`` at the
bounds, against mpmath).  Gradients have no NaN where ``σ²`` is a normal number too (float32:
``σ ≳ 1.1e-19``); below, ``∂(1/σ)/∂σ = −1/σ²`` overflows and meets zeros in the chain rule.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from agents.distributions.constants import (
    CF_TERMS,
    FAR_BOUND_D,
    HALF_LOG_2PI,
    INV_SQRT2,
    INV_SQRT_2PI,
    S0_COEF,
    S1_COEF,
    S2_COEF,
    SQRT_2_OVER_PI,
    TAYLOR_H,
    TAYLOR_HC,
    TAYLOR_TERMS,
)
from agents.errors import AgentError

__all__ = ["Gaussian", "TensorLike", "TruncatedGaussian"]

TensorLike = Tensor | float
"""What the distributions accept for a parameter: a tensor or a Python number."""


def _bits(dtype: torch.dtype) -> int:
    """The key of the working dtype (float32 or float64) in the tables of `constants`."""
    return 32 if dtype == torch.float32 else 64


def _as_tensors(*values: TensorLike) -> tuple[list[Tensor], torch.dtype]:
    """Broadcast the inputs to tensors of one floating dtype; return them and the output dtype."""
    given = [v.dtype for v in values if isinstance(v, Tensor)]  # Python numbers do not promote
    dtype = given[0] if given else torch.get_default_dtype()
    for d in given[1:]:
        dtype = torch.promote_types(dtype, d)
    if not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    tensors = [v if isinstance(v, Tensor) else torch.as_tensor(v) for v in values]
    work = torch.float32 if torch.finfo(dtype).bits < 32 else dtype
    device = next((t.device for t in tensors if t.dim() > 0), tensors[0].device)
    tensors = [t.to(device=device, dtype=work) for t in tensors]
    return list(torch.broadcast_tensors(*tensors)), dtype


def _tail(t: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    r"""One-sided tail quantities of the standard normal beyond ``t ≥ 0`` (``t`` finite).

    Returns ``λ(t) = φ(t)/Q(t)``, ``g(t) = λ(t) − t = E[X − t | X > t]`` and
    ``m2(t) = 1 − t g(t) = E[(X − t)² | X > t]``.  For small ``t`` they come from ``erfcx`` (the
    cancellation in ``λ − t`` and ``1 − t g`` costs ~``t⁴/2`` ulp there, i.e. ≤ 40 ulp below
    ``t = 3`` in float64 and ≤ 8 ulp below ``t = 2`` in float32); above, from the continued fraction
    ``T_k = k/(t + T_{k+1})`` evaluated backwards from the tail estimate ``T ≈ (√(t² + 4k) − t)/2``:
    ``g = T_1`` and ``m2 = T_1 T_2`` (since ``T_1 (t + T_2) = 1``), free of cancellation.  The number
    of terms (48 at ``t = 3`` down to 8 for ``t ≥ 20`` in float64) is chosen from the smallest ``t``.
    """
    if t.numel() == 0:
        return t, t, t
    table = CF_TERMS[_bits(t.dtype)]
    start = table[-1][0]
    with torch.no_grad():
        use_cf = t >= start
        n_cf = int(use_cf.sum())
    if n_cf < t.numel():
        td = torch.where(use_cf, 0.0, t)
        lam_d = SQRT_2_OVER_PI / torch.special.erfcx(td * INV_SQRT2)
        g_d = lam_d - td
        m2_d = 1.0 - td * g_d
        if n_cf == 0:
            return lam_d, g_d, m2_d

    tc = torch.where(use_cf, t, start)
    t_min = float(tc.detach().min())
    n_terms = next(n for t0, n in table if t_min >= t0)
    kk = n_terms + 1.0
    tk = 2.0 * kk / (torch.hypot(tc, torch.full_like(tc, 2.0 * math.sqrt(kk))) + tc)
    t2 = tk
    for k in range(n_terms, 0, -1):
        if k == 1:
            t2 = tk
        tk = k / (tc + tk)
    g_c = tk
    m2_c = tk * t2
    lam_c = tc + g_c
    if n_cf == t.numel():
        return lam_c, g_c, m2_c
    return (
        torch.where(use_cf, lam_c, lam_d),
        torch.where(use_cf, g_c, g_d),
        torch.where(use_cf, m2_c, m2_d),
    )


class _Stats(NamedTuple):
    """Per-regime results: ``k = log Z + p²/2``, ``off`` (mean offset) and ``var``: ``Var/σ²`` in the
    A and M regimes, ``Var/(σh)²`` (in units of the squared half width) in the T regime."""

    k: Tensor
    off: Tensor
    var: Tensor


def _taylor(h: Tensor, c: Tensor) -> _Stats:
    """T regime: nearly equal bounds; ``h`` = half width, ``c`` = midpoint (both standardized)."""
    ch = c * h
    h2 = h * h
    hn_prev, hn = torch.ones_like(h), ch  # He_0 h^0, He_1 h^1
    s0 = torch.zeros_like(h) + S0_COEF[0]
    s1 = S1_COEF[0] * hn
    s2 = torch.zeros_like(h) + S2_COEF[0]
    for k in range(1, TAYLOR_TERMS[_bits(h.dtype)]):
        # advance to H_{2k} and H_{2k+1}
        n = 2 * k - 1
        hn_prev, hn = hn, ch * hn - n * h2 * hn_prev  # H_{2k}
        s0 = s0 + S0_COEF[k] * hn
        s2 = s2 + S2_COEF[k] * hn
        hn_prev, hn = hn, ch * hn - (n + 1) * h2 * hn_prev  # H_{2k+1}
        s1 = s1 + S1_COEF[k] * hn
    # The variance is returned in units of h² (Var/(σh)² = S2/(h² S0) − (S1/(h S0))²): Var/σ² itself is
    # ~h²/3, which underflows float32 for σ ≳ 1e19 times the width, and σ² overflows there.
    s1_h = s1 / s0
    var_h = s2 / s0 - s1_h * s1_h
    return _Stats(k=torch.log(2.0 * h) + torch.log(s0) - HALF_LOG_2PI, off=h * s1_h, var=var_h)


def _upper_tail_regime(a: Tensor, w: Tensor, far_inf: Tensor) -> _Stats:
    """A regime: ``0 ≤ a ≤ b = a + w``; ``far_inf`` marks ``b = ∞`` (or ``e^{−D}`` negligible)."""
    w = torch.where(far_inf, 1.0, w)
    b = a + w
    if bool(far_inf.all()):  # one-sided everywhere (b = ∞ or 1e5): skip the far tail
        lam_a, g_a, m2_a = _tail(a)
        lam_b = g_b = m2_b = torch.ones_like(a)
    else:
        lam, g, m2 = _tail(torch.cat([a.reshape(-1), b.reshape(-1)]))
        n = a.numel()
        lam_a, lam_b = lam[:n].view_as(a), lam[n:].view_as(a)
        g_a, g_b = g[:n].view_as(a), g[n:].view_as(a)
        m2_a, m2_b = m2[:n].view_as(a), m2[n:].view_as(a)
    d = w * (a + b) * 0.5
    e = torch.exp(-d)
    r = torch.where(far_inf, 0.0, e * lam_a / lam_b)
    one_m_r = torch.where(far_inf, 1.0, -torch.expm1(-d) + e * (w + g_b - g_a) / lam_b)
    off = (g_a - r * (g_b + w)) / one_m_r
    m2 = (m2_a - r * (m2_b + 2.0 * w * g_b + w * w)) / one_m_r
    k = torch.log(one_m_r) - torch.log(lam_a) - HALF_LOG_2PI
    return _Stats(k=k, off=off, var=m2 - off * off)


def _central_regime(a: Tensor, w: Tensor, near_inf: Tensor, far_inf: Tensor) -> _Stats:
    """M regime: ``a < 0 ≤ b = a + w``, ``|a| ≤ b``; flags mark infinite (or irrelevant) bounds."""
    a = torch.where(near_inf, -1.0, a)
    w = torch.where(far_inf, 2.0 - a, w)
    b = a + w
    zeros = torch.zeros_like(a)
    tail_lo = torch.where(near_inf, zeros, 0.5 * torch.special.erfc(-a * INV_SQRT2))
    tail_hi = torch.where(far_inf, zeros, 0.5 * torch.special.erfc(b * INV_SQRT2))
    erf_lo = torch.where(near_inf, zeros + 1.0, torch.special.erf(-a * INV_SQRT2))
    erf_hi = torch.where(far_inf, zeros + 1.0, torch.special.erf(b * INV_SQRT2))
    tails = tail_lo + tail_hi
    with torch.no_grad():
        small_tails = tails < 0.5
    z = 0.5 * (erf_lo + erf_hi)
    log_z = torch.where(small_tails, torch.log1p(-torch.where(small_tails, tails, 0.0)), torch.log(z))
    phi_a = torch.where(near_inf, zeros, torch.exp(-0.5 * a * a) * INV_SQRT_2PI)
    phi_b = torch.where(far_inf, zeros, torch.exp(-0.5 * b * b) * INV_SQRT_2PI)
    d = torch.where(far_inf, 1.0, w * (a + b) * 0.5)  # safe: e^{−D} is unused, but its gradient is not
    dphi = phi_a * torch.where(far_inf, zeros + 1.0, -torch.expm1(-d))  # φ(a) − φ(b) ≥ 0
    off = dphi / z
    var = 1.0 + (a * phi_a - b * phi_b) / z - off * off
    return _Stats(k=log_z, off=off, var=var)


def _check_location_scale(name: str, mu: Tensor, sigma: Tensor) -> None:
    """`AgentError` unless every ``μ`` is finite and every ``σ`` finite and at least the dtype's
    smallest normal number (``1/σ`` of a subnormal ``σ`` overflows)."""
    if not bool(torch.isfinite(mu).all()):
        raise AgentError(f"{name}: mu must be finite")
    tiny = torch.finfo(sigma.dtype).tiny
    if not bool((torch.isfinite(sigma) & (sigma >= tiny)).all()):
        raise AgentError(
            f"{name}: sigma must be finite and >= {tiny:.3g} (the smallest normal {sigma.dtype})"
        )


def _check_standardized(name: str, mu: Tensor, sigma: Tensor, low: Tensor, high: Tensor) -> None:
    """`AgentError` unless the finite bounds are a finite number of ``σ`` from ``μ`` and from each
    other in the working dtype (``μ = 1e20``, ``σ = 1e-30`` in float32 puts ``l = 0`` at ``1e50 σ``,
    beyond float32's range, where no quantity can be formed)."""
    with torch.no_grad():
        for bound, what in ((low, "low"), (high, "high")):
            z = torch.where(torch.isinf(bound), 0.0, (bound - mu) / sigma)
            if not bool(torch.isfinite(z).all()):
                raise AgentError(f"{name}: ({what} - mu)/sigma overflows {mu.dtype}")
        both = torch.isfinite(low) & torch.isfinite(high)
        width = torch.where(both, (high - low) / sigma, 0.0)
        if not bool(torch.isfinite(width).all()):
            raise AgentError(f"{name}: (high - low)/sigma overflows {mu.dtype}")


class Gaussian:
    r"""Normal distribution ``N(μ, σ)`` with the same interface as :class:`TruncatedGaussian`.

    ``log p(x) = −log σ − ½ log 2π − (x − μ)²/(2σ²)``; with ``σ = 1/√2`` this is the squared error
    plus a constant (section 2.2 of the paper).

    Args:
        mu: location (any shape, broadcast with ``sigma``), finite.
        sigma: scale, finite and at least the dtype's smallest normal number.
        validate_args: check that domain (forces a device sync).
    """

    def __init__(self, mu: TensorLike, sigma: TensorLike, *, validate_args: bool = False) -> None:
        (mu, sigma), self._dtype = _as_tensors(mu, sigma)
        if validate_args:
            _check_location_scale("Gaussian", mu, sigma)
        self.mu, self.sigma = mu, sigma

    @property
    def batch_shape(self) -> torch.Size:
        return self.mu.shape

    @property
    def mean(self) -> Tensor:
        return self.mu.to(self._dtype)

    @property
    def variance(self) -> Tensor:
        return (self.sigma * self.sigma).to(self._dtype)

    @property
    def stddev(self) -> Tensor:
        return self.sigma.to(self._dtype)

    @property
    def log_normalizer(self) -> Tensor:
        """``log Z = 0`` (no truncation)."""
        return torch.zeros_like(self.mu).to(self._dtype)

    def log_prob(self, x: TensorLike) -> Tensor:
        """Log density at ``x`` (broadcast against the batch shape)."""
        x = torch.as_tensor(x, dtype=self.mu.dtype, device=self.mu.device)
        xi = (x - self.mu) / self.sigma
        return (-torch.log(self.sigma) - 0.5 * xi * xi - HALF_LOG_2PI).to(self._dtype)

    def __repr__(self) -> str:
        return f"Gaussian(batch_shape={tuple(self.batch_shape)})"


class TruncatedGaussian:
    r"""Truncated normal ``TN(μ, σ, l, u)`` on the closed interval ``[l, u]``, stable in all regimes.

    ``p(x) = φ((x − μ)/σ) / (σ Z)`` for ``l ≤ x ≤ u`` (Eq. 8 of the paper), ``Z = Φ(β) − Φ(α)``.
    See the module docstring for the formulas used in each regime and why.

    Args:
        mu: pre-truncation mean ``μ`` (any real, also far outside ``[l, u]``).
        sigma: pre-truncation standard deviation ``σ > 0``.
        low: lower bound ``l`` (finite, ``-1e5`` or ``-inf``).
        high: upper bound ``u > l`` (finite, ``1e5`` or ``+inf``).
        validate_args: check the input domain of the module docstring (forces a device sync):
            ``μ`` finite, ``σ`` finite and normal, ``l`` and ``u`` not NaN (±inf for no bound),
            ``l < u``, finite bounds a representable number of ``σ`` from ``μ``.

    Shapes: all arguments broadcast to a common ``batch_shape``; ``log_prob(x)`` broadcasts ``x``
    against it.  Outputs have the promoted floating dtype of the inputs.
    """

    def __init__(
        self,
        mu: TensorLike,
        sigma: TensorLike,
        low: TensorLike,
        high: TensorLike,
        *,
        validate_args: bool = False,
    ) -> None:
        (mu, sigma, low, high), self._dtype = _as_tensors(mu, sigma, low, high)
        if validate_args:
            _check_location_scale("TruncatedGaussian", mu, sigma)
            if bool(torch.isnan(low).any() | torch.isnan(high).any()):
                raise AgentError("TruncatedGaussian: low and high must not be NaN (use ±inf for no bound)")
            if not bool((low < high).all()):
                raise AgentError("TruncatedGaussian: low must be < high")
            _check_standardized("TruncatedGaussian", mu, sigma, low, high)
        self.mu, self.sigma, self.low, self.high = mu, sigma, low, high

        with torch.no_grad():
            lo_inf = torch.isinf(low)
            hi_inf = torch.isinf(high)
            both_inf = lo_inf & hi_inf
            # finite stand-ins for infinite bounds (never selected, and carry no gradient)
            stand_lo = (mu - sigma).detach()
            stand_hi = (mu + sigma).detach()
        lo_s = torch.where(lo_inf, stand_lo, low)
        hi_s = torch.where(hi_inf, stand_hi, high)
        half = 0.5 * (hi_s - lo_s)
        mid = lo_s + half
        with torch.no_grad():
            flip = torch.where(hi_inf, False, torch.where(lo_inf, True, mid < mu))
        sign = torch.where(flip, -1.0, 1.0).to(mu.dtype)
        near = torch.where(flip, hi_s, lo_s)
        far_is_inf = lo_inf | hi_inf
        inv_sigma = 1.0 / sigma
        a = sign * (near - mu) * inv_sigma  # canonical near bound
        w = 2.0 * half * inv_sigma  # (u − l)/σ, computed without cancellation
        h = half * inv_sigma
        c = a + h  # canonical midpoint (≥ 0 up to rounding); mid − μ would carry mid's rounding

        with torch.no_grad():
            is_t = ~far_is_inf & (h < TAYLOR_H) & (h * c.abs() < TAYLOR_HC)
            is_a = ~is_t & ~both_inf & (a >= 0)
            is_m = ~is_t & ~is_a
            d_far = torch.where(far_is_inf, math.inf, w * (a + 0.5 * w))
            far_inf = far_is_inf | ~(d_far <= FAR_BOUND_D)

        # Each regime sees harmless inputs where it is not selected ("safe where"); a regime that
        # no element selects is skipped (cheap: most batches are all-A or all-M).
        zeros = torch.zeros_like(a)
        unused = _Stats(zeros, zeros, zeros)
        st = _taylor(torch.where(is_t, h, 0.1), torch.where(is_t, c, 0.0)) if is_t.any() else unused
        sa = (
            _upper_tail_regime(torch.where(is_a, a, 1.0), torch.where(is_a, w, 1.0), far_inf | ~is_a)
            if is_a.any()
            else unused
        )
        sm = (
            _central_regime(
                torch.where(is_m, a, -1.0), torch.where(is_m, w, 2.0), both_inf | ~is_m, far_inf | ~is_m
            )
            if is_m.any()
            else unused
        )

        def pick(t: Tensor, aa: Tensor, m: Tensor) -> Tensor:
            return torch.where(is_t, t, torch.where(is_a, aa, m))

        # x is measured as u = s (x − pivot)/σ − shift = ξ' − p; the mean is pivot + s σ moff
        self._sign = sign
        self._pivot = torch.where(is_m, mu, near)
        self._shift = torch.where(is_t, h, zeros)
        self._p = pick(c, a, zeros)
        self._k = pick(st.k, sa.k, sm.k)
        self._moff = pick(h + st.off, sa.off, sm.off)
        self._is_t = is_t
        self._half = half
        self._var_std = pick(st.var, sa.var, sm.var)

    # ------------------------------------------------------------------ properties
    @property
    def batch_shape(self) -> torch.Size:
        return self.mu.shape

    @property
    def mean(self) -> Tensor:
        """``E[x] = P + s σ moff``, clamped to ``[l, u]`` (the math guarantees it up to rounding)."""
        m = self._pivot + self._sign * self.sigma * self._moff
        m = torch.where(m < self.low, self.low, m)
        m = torch.where(m > self.high, self.high, m)
        return m.to(self._dtype)

    @property
    def variance(self) -> Tensor:
        """``Var[x] = σ² · v`` with ``0 ≤ v ≤ 1`` (A, M), or ``((u − l)/2)² · v_h`` with
        ``0 ≤ v_h ≤ 1/3`` (T; a log-concave density on an interval never exceeds the uniform's
        variance).  Neither form squares ``σ`` alone when ``σ > 1``, so a large ``σ`` with a short
        interval (``σ = 1e30``, ``[0, 10]``: variance 8.33) stays finite in float32."""
        v = self._var_std
        half = torch.where(self._is_t, self._half, 0.0)  # "safe where": no inf·0 in unused lanes
        var_t = half * half * v.clamp(0.0, 1.0 / 3.0)
        v = v.clamp(0.0, 1.0)
        big = self.sigma > 1.0
        s_big, s_small = torch.where(big, self.sigma, 1.0), torch.where(big, 1.0, self.sigma)
        # σ·(σ·v) overflows only when the variance does; (σ·σ)·v underflows only when it does
        var_am = torch.where(big, s_big * (s_big * v), s_small * s_small * v)
        return torch.where(self._is_t, var_t, var_am).to(self._dtype)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def log_normalizer(self) -> Tensor:
        """``log Z = log(Φ(β) − Φ(α)) = k − p²/2``."""
        return (self._k - 0.5 * self._p * self._p).to(self._dtype)

    def log_prob(self, x: TensorLike) -> Tensor:
        """``log p(x)``; ``−inf`` outside ``[l, u]``.  ``x`` broadcasts against the batch shape."""
        x = torch.as_tensor(x, dtype=self.mu.dtype, device=self.mu.device)
        with torch.no_grad():
            inside = (x >= self.low) & (x <= self.high)
        x_safe = torch.where(inside, x, self._pivot)
        u = self._sign * (x_safe - self._pivot) / self.sigma - self._shift  # ξ' − p
        lp = -torch.log(self.sigma) - HALF_LOG_2PI - 0.5 * u * (u + 2.0 * self._p) - self._k
        return torch.where(inside, lp, -math.inf).to(self._dtype)

    def __repr__(self) -> str:
        return f"TruncatedGaussian(batch_shape={tuple(self.batch_shape)})"
