r"""The Gaussian / truncated Gaussian / interval maths of the project, in one place.

A learned heuristic's head (`agents.heads`) predicts ``h* ~ N(μ, σ)`` or ``h* ~ TN(μ, σ, l − ε, u)``
(the paper's sections 2.2-3.1); its losses, its search value and its confidence are the
log-probabilities, means and interval probabilities of those distributions. Everything that
computes them lives in this package, and everything else (heads, losses, the compiled WL
heuristic, the value learner) calls it:

=============  ===========================================================================
module         what
=============  ===========================================================================
`constants`    the numbers: open-bound ``ε = 0.1``, missing bound ``1e5``, fixed ``σ = 1/√2``,
               the learned σ's range, ``½ log 2π`` and the stable formulas' thresholds and
               coefficients; neither torch nor numba (the torch-free registries read it)
`truncated`    torch: `Gaussian`, `TruncatedGaussian` (mean, variance, ``log Z``, ``log p``),
               stable and differentiable in every regime (the paper's appendix B)
`interval`     torch: ``log P(a ≤ X ≤ b)``, for the interval-censored loss
               (`log_interval_probability`) and for the unit-bucket confidence
               (`log_normal_interval`, `normal_bucket`, `truncated_normal_bucket`)
`compiled`     numba, float64, for search: the TN mean (`tn_mean`), the TN head's value with its
               open bounds (`tn_value`), the learned σ (`learned_sigma`), `inverse_mills`
=============  ===========================================================================

This file imports nothing, so that ``agents.distributions.constants`` stays free of torch and numba.
"""
