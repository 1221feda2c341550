r"""The truncated Gaussian for search, compiled: the formulas of `agents.distributions.truncated` in numba.

Why a second implementation: GBFS evaluates the few new successors of one expansion per call, and
`truncated.TruncatedGaussian` spends about a millisecond on them in some 300 tiny torch operations
(all regimes' set-up, the variance and ``log Z`` that search does not need) -- more than the
network, and a compiled heuristic (`agents.models.wl.compiled.heuristic`) cannot call torch at all.
`tn_mean` computes only ``E[x]``, element by element in float64 with numba, by the same numerically
stable formulas and constants (`constants`: canonical frame, regimes T / A / M, continued fraction
for the tail; see the docstring of `truncated`), so it agrees with ``TruncatedGaussian(...).mean``
to rounding (tests/test_distributions.py compares them). On it, `tn_value` is the TN head's search
value (open bounds, the explicit upper bound), and `learned_sigma` the head's σ, for the numpy path
of `agents.heads` and the compiled WL heuristic alike. It is an inference path only: no gradients.
``erfcx(x)`` (which `math` lacks) is ``exp(x²) erfc(x)``, evaluated only for ``x = t/√2 < 3/√2``
where that product loses no digits.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from agents.distributions.constants import (
    CF_TERMS,
    FAR_BOUND_D,
    INV_SQRT2,
    INV_SQRT_2PI,
    OPEN_BOUND_EPS,
    S0_COEF,
    S1_COEF,
    SIGMA_MIN,
    SIGMA_RANGE,
    SQRT2,
    SQRT_2_OVER_PI,
    SQRT_2PI,
    TAYLOR_H,
    TAYLOR_HC,
    TAYLOR_TERMS,
)
from pddlgym_sl.numba_cache import CACHE

__all__ = [
    "inverse_mills",
    "learned_sigma",
    "learned_sigma_one",
    "tn_mean",
    "tn_mean_one",
    "tn_value",
    "tn_value_one",
]

_JIT = {"cache": CACHE, "error_model": "numpy"}
_CF = CF_TERMS[64]
_CF_START = _CF[-1][0]
_CF_T0 = np.array([t0 for t0, _ in _CF])
_CF_N = np.array([n for _, n in _CF], dtype=np.int64)
_S0 = np.array(S0_COEF)
_S1 = np.array(S1_COEF)
_N_TAYLOR = TAYLOR_TERMS[64]


def inverse_mills(k: float) -> float:
    """``φ(k) / Φ(k)``: by how much, in units of σ, a Gaussian truncated below at ``μ − kσ`` has a
    mean above μ (float64; the screening bound of `agents.models.wl.compiled.heuristic`)."""
    return math.exp(-0.5 * k * k) / SQRT_2PI / (0.5 * math.erfc(-k / SQRT2))


@njit(**_JIT)
def _tail(t):
    """``(λ(t), g(t))`` of `truncated._tail` (float64)."""
    if t < _CF_START:
        lam = SQRT_2_OVER_PI / (math.exp(0.5 * t * t) * math.erfc(t * INV_SQRT2))
        return lam, lam - t
    n_terms = _CF_N[-1]
    for i in range(_CF_T0.shape[0]):
        if t >= _CF_T0[i]:
            n_terms = _CF_N[i]
            break
    kk = n_terms + 1.0
    tk = 2.0 * kk / (math.hypot(t, 2.0 * math.sqrt(kk)) + t)
    for k in range(n_terms, 0, -1):
        tk = k / (t + tk)
    return t + tk, tk


@njit(**_JIT)
def _taylor_off(h, c):
    """Regime T: ``moff - h = S1 / S0``."""
    ch, h2 = c * h, h * h
    hn_prev, hn = 1.0, ch
    s0, s1 = _S0[0], _S1[0] * hn
    for k in range(1, _N_TAYLOR):
        n = 2 * k - 1
        hn_prev, hn = hn, ch * hn - n * h2 * hn_prev
        s0 += _S0[k] * hn
        hn_prev, hn = hn, ch * hn - (n + 1) * h2 * hn_prev
        s1 += _S1[k] * hn
    return h * s1 / s0


@njit(**_JIT)
def _upper_tail_off(a, w, far_inf):
    """Regime A: ``moff`` for ``0 ≤ a ≤ b = a + w``."""
    lam_a, g_a = _tail(a)
    if far_inf:
        return g_a
    b = a + w
    lam_b, g_b = _tail(b)
    d = w * (a + b) * 0.5
    e = math.exp(-d)
    r = e * lam_a / lam_b
    one_m_r = -math.expm1(-d) + e * (w + g_b - g_a) / lam_b
    return (g_a - r * (g_b + w)) / one_m_r


@njit(**_JIT)
def _central_off(a, w, near_inf, far_inf):
    """Regime M: ``moff`` for ``a < 0 ≤ b = a + w``."""
    if near_inf:
        a = -1.0
    if far_inf:
        w = 2.0 - a
    b = a + w
    erf_lo = 1.0 if near_inf else math.erf(-a * INV_SQRT2)
    erf_hi = 1.0 if far_inf else math.erf(b * INV_SQRT2)
    z = 0.5 * (erf_lo + erf_hi)
    phi_a = 0.0 if near_inf else math.exp(-0.5 * a * a) * INV_SQRT_2PI
    dphi = phi_a if far_inf else phi_a * -math.expm1(-(w * (a + b) * 0.5))
    return dphi / z


@njit(**_JIT)
def tn_mean_one(m, s, lo, hi):
    """``E[x]`` of ``TN(m, s, lo, hi)`` for one element (what `tn_mean` computes per element; a
    compiled heuristic calls it per state)."""
    lo_inf, hi_inf = math.isinf(lo), math.isinf(hi)
    lo_s = m - s if lo_inf else lo
    hi_s = m + s if hi_inf else hi
    half = 0.5 * (hi_s - lo_s)
    flip = False if hi_inf else (True if lo_inf else lo_s + half < m)
    sign = -1.0 if flip else 1.0
    near = hi_s if flip else lo_s
    far_is_inf = lo_inf or hi_inf
    inv_sigma = 1.0 / s
    a = sign * (near - m) * inv_sigma
    w = 2.0 * half * inv_sigma
    h = half * inv_sigma
    c = a + h
    if not far_is_inf and h < TAYLOR_H and h * abs(c) < TAYLOR_HC:
        pivot, off = near, h + _taylor_off(h, c)
    else:
        far_inf = far_is_inf or not (w * (a + 0.5 * w) <= FAR_BOUND_D)
        if not (lo_inf and hi_inf) and a >= 0:
            pivot, off = near, _upper_tail_off(a, w, far_inf)
        else:
            pivot, off = m, _central_off(a, w, lo_inf and hi_inf, far_inf)
    v = pivot + sign * s * off
    return lo if v < lo else (hi if v > hi else v)


@njit(**_JIT)
def tn_value_one(mu, sigma, lower, upper, explicit):
    """The TN head's search value for one element (`agents.heads.TruncatedGaussianHead.heuristic`):
    ``E[x]`` of ``TN(μ, σ, l − ε, u)`` with the head's default ``u`` (1e5 or inf, not opened), or,
    for an `explicit` ``u`` (a plan's cost, ``C − g`` in anytime search), ``min(E[x], u)`` of
    ``TN(μ, σ, l − ε, u + ε)``: h* ≤ u is certain, so the value does not take the ε above it
    (``ε = OPEN_BOUND_EPS``)."""
    if explicit:
        return min(tn_mean_one(mu, sigma, lower - OPEN_BOUND_EPS, upper + OPEN_BOUND_EPS), upper)
    return tn_mean_one(mu, sigma, lower - OPEN_BOUND_EPS, upper)


@njit(**_JIT)
def _tn_mean(mu, sigma, low, high, out):
    for i in range(mu.shape[0]):
        out[i] = tn_mean_one(mu[i], sigma[i], low[i], high[i])


@njit(**_JIT)
def learned_sigma_one(logit):
    """``σ = 0.1 + 10 sigmoid(logit)`` (`agents.heads`, sigma "learn") for one element."""
    return SIGMA_MIN + SIGMA_RANGE / (1.0 + math.exp(-logit))


@njit(**_JIT)
def _learned_sigma(logit, out):
    for i in range(logit.shape[0]):
        out[i] = learned_sigma_one(logit[i])


def learned_sigma(logit: np.ndarray) -> np.ndarray:
    """`learned_sigma_one` elementwise (float64), by the same compiled ``exp`` as the compiled
    heuristics (numpy's vectorised ``exp`` may differ from it in the last bit)."""
    x = np.asarray(logit, dtype=np.float64)
    out = np.empty(x.size)
    _learned_sigma(np.ascontiguousarray(x).reshape(-1), out)
    return out.reshape(x.shape)


def tn_mean(mu: np.ndarray, sigma: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``E[x]`` of ``TN(μ, σ, l, u)`` elementwise (float64, broadcast), as
    ``TruncatedGaussian(mu, sigma, low, high).mean`` computes it."""
    args = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (mu, sigma, low, high)))
    shape = args[0].shape
    flat = [np.array(x, dtype=np.float64).reshape(-1) for x in args]  # contiguous, writeable copies
    out = np.empty(flat[0].shape[0])
    _tn_mean(*flat, out)
    return out.reshape(shape)


def tn_value(mu: np.ndarray, sigma: np.ndarray, lower: np.ndarray, upper: Any, explicit: bool) -> np.ndarray:
    """`tn_value_one` elementwise (float64, broadcast; `upper` an array or the default's number)."""
    lower = np.asarray(lower, dtype=np.float64)
    if not explicit:
        return tn_mean(mu, sigma, lower - OPEN_BOUND_EPS, upper)
    upper = np.asarray(upper, dtype=np.float64)
    return np.minimum(tn_mean(mu, sigma, lower - OPEN_BOUND_EPS, upper + OPEN_BOUND_EPS), upper)
