r"""The numbers of the Gaussian / truncated Gaussian maths, in one place and without torch or numba.

Three kinds of constant live here, shared by the torch implementation (`truncated`, `interval`: training
and the heads), the compiled one (`compiled`: search) and the torch-free registries
(`agents.registries`), so that the three can never disagree:

* the standard normal's: ``½ log 2π``, ``√2``, ``√(2π)`` and their inverses;
* the model's: the open-bound offset ``ε`` of a TN's support ``[l − ε, u + ε]`` (the paper's appendix
  B.3), the stand-in ``1e5`` for a missing upper bound (appendix B.2), the fixed ``σ = 1/√2`` (the
  Gaussian NLL is then the squared error plus a constant, section 2.2) and the range of a learned
  ``σ``;
* the numerics': the regime thresholds, series coefficients and continued-fraction lengths of the
  stable formulas (the docstring of `truncated` derives them).
  Tables that depend on the floating type are keyed by its width in bits (64 or 32).
"""

from __future__ import annotations

import math

__all__ = [
    "CF_TERMS",
    "FAR_BOUND_D",
    "FIXED_SIGMA",
    "HALF_LOG_2PI",
    "INV_SQRT2",
    "INV_SQRT_2PI",
    "MISSING_BOUND",
    "OPEN_BOUND_EPS",
    "S0_COEF",
    "S1_COEF",
    "S2_COEF",
    "SIGMA_MIN",
    "SIGMA_RANGE",
    "SQRT2",
    "SQRT_2PI",
    "SQRT_2_OVER_PI",
    "TAYLOR_H",
    "TAYLOR_HC",
    "TAYLOR_TERMS",
]

# ---------------------------------------------------------------------------- the standard normal
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
"""``½ log 2π``, the constant of a Gaussian log density."""
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
"""``√(2/π)``: ``λ(t) = √(2/π) / erfcx(t/√2)``."""
SQRT2 = math.sqrt(2.0)
INV_SQRT2 = 1.0 / SQRT2
"""``1/√2``: ``Φ(t) = ½ erfc(−t/√2)``."""
SQRT_2PI = math.sqrt(2.0 * math.pi)
INV_SQRT_2PI = 1.0 / SQRT_2PI
"""``1/√(2π)``: ``φ(t) = e^{−t²/2} / √(2π)``."""

# ---------------------------------------------------------------------------------------- the model
OPEN_BOUND_EPS = 0.1
"""A TN's open bounds, ``l − ε`` and ``u + ε`` (the paper's appendix B.3)."""
MISSING_BOUND = 1e5
"""The paper's upper bound where none is known (appendix B.2)."""
FIXED_SIGMA = INV_SQRT2
"""The fixed σ of the heads: the Gaussian NLL is then the squared error plus a constant."""
SIGMA_MIN, SIGMA_RANGE = 0.1, 10.0
"""A learned σ is ``SIGMA_MIN + SIGMA_RANGE * sigmoid(raw)`` (as pddlsl's ModelWrapper._clip_sigma):
`agents.heads` in training, `compiled.learned_sigma` in search."""

# ---------------------------------------------------------------------------------------- numerics
TAYLOR_H = 1.0
"""T regime (nearly equal bounds): ``h < TAYLOR_H`` and ``h·|c| < TAYLOR_HC``."""
TAYLOR_HC = 1.5
TAYLOR_TERMS = {64: 14, 32: 9}
"""Terms ``k = 0..K-1`` of the T regime's sums (Hermite degree ≤ 2K-1), per float width."""
_MAX_TERMS = 24
FAR_BOUND_D = 700.0
"""``e^{−D}`` below ``e^{−FAR_BOUND_D}`` is treated as 0: the far bound is irrelevant."""

_FACT = [math.factorial(n) for n in range(2 * _MAX_TERMS + 2)]
S0_COEF = [1.0 / _FACT[2 * k + 1] for k in range(_MAX_TERMS)]
"""T regime: ``S0 = Σ_k S0_COEF[k] H_2k``."""
S1_COEF = [-1.0 / ((2 * k + 3) * _FACT[2 * k + 1]) for k in range(_MAX_TERMS)]
"""T regime: ``S1 = h Σ_k S1_COEF[k] H_2k+1``."""
S2_COEF = [1.0 / ((2 * k + 3) * _FACT[2 * k]) for k in range(_MAX_TERMS)]
"""T regime: ``S2 = h² Σ_k S2_COEF[k] H_2k``."""

CF_TERMS = {
    64: ((20.0, 8), (12.0, 12), (8.0, 16), (5.0, 24), (4.0, 32), (3.0, 48)),
    32: ((20.0, 4), (8.0, 6), (5.0, 8), (4.0, 10), (3.0, 12), (2.0, 24)),
}
"""Per float width, ``(t_min, terms)``: continued-fraction terms that reach rounding level for all
``t ≥ t_min``; below the last ``t_min`` the tail comes from ``erfcx``."""
