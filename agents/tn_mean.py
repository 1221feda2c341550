r"""The mean of a truncated Gaussian for search: the formula of `agents.distributions`, compiled.

Why a second implementation: GBFS evaluates the few new successors of one expansion per call, and
`agents.distributions.TruncatedGaussian` spends about a millisecond on them in some 300 tiny torch
operations (all regimes' set-up, the variance and ``log Z`` that search does not need) -- more than
the network. `tn_mean` computes only ``E[x]``, element by element in float64 with numba, by the
same numerically stable formulas (canonical frame, regimes T / A / M, continued fraction for the
tail; see the docstring of `agents.distributions`), so it agrees with ``TruncatedGaussian(...).mean``
to rounding (tests/test_distributions.py compares them). It is an inference path only: no
gradients. ``erfcx(x)`` (which `math` lacks) is ``exp(x²) erfc(x)``, evaluated only for
``x = t/√2 < 3/√2`` where that product loses no digits.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from numba import njit

from agents.distributions import (
    CF_TERMS,
    FAR_BOUND_D,
    S0_COEF,
    S1_COEF,
    SIGMA_MIN,
    SIGMA_RANGE,
    TAYLOR_H,
    TAYLOR_HC,
    TAYLOR_TERMS,
)
from pddlgym_sl.numba_cache import CACHE

__all__ = ["learned_sigma", "learned_sigma_one", "tn_mean", "tn_mean_one"]

_JIT = {"cache": CACHE, "error_model": "numpy"}
_CF = CF_TERMS[torch.float64]
_CF_START = _CF[-1][0]
_CF_T0 = np.array([t0 for t0, _ in _CF])
_CF_N = np.array([n for _, n in _CF], dtype=np.int64)
_S0 = np.array(S0_COEF)
_S1 = np.array(S1_COEF)
_N_TAYLOR = TAYLOR_TERMS[torch.float64]
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@njit(**_JIT)
def _tail(t):
    """``(λ(t), g(t))`` of `agents.distributions._tail` (float64)."""
    if t < _CF_START:
        lam = _SQRT_2_OVER_PI / (math.exp(0.5 * t * t) * math.erfc(t * _INV_SQRT2))
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
    erf_lo = 1.0 if near_inf else math.erf(-a * _INV_SQRT2)
    erf_hi = 1.0 if far_inf else math.erf(b * _INV_SQRT2)
    z = 0.5 * (erf_lo + erf_hi)
    phi_a = 0.0 if near_inf else math.exp(-0.5 * a * a) * _INV_SQRT_2PI
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
