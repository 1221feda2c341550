r"""Distribution heads: from a model's raw outputs to N / TN distributions and heuristic values.

A head is the statistical part of a learned heuristic (sections 2.2-3.1 of the paper).  The network
(``agents/models/``) emits ``n_outputs`` raw numbers per state; the head combines them with per-state
symbolic heuristics and returns

* a distribution over the cost-to-go ``h*`` (:meth:`Head.distribution`), whose negative
  log-likelihood is the training loss (:meth:`Head.nll`), and
* the point estimate used by search (:meth:`Head.heuristic`).

Options (all recorded in :attr:`Head.config`, so ``make_head(**head.config)`` rebuilds the head):

``dist``
    ``"n"``: ``h* ~ N(μ, σ)``, NLL ``(x − μ)²/(2σ²) + log σ + ½ log 2π`` (Eq. 4).
    ``"tn"``: ``h* ~ TN(μ, σ, l − 0.1, u)``, NLL of Eq. 9 (stable, see ``agents.distributions``).
``sigma``
    ``"learn"``: ``σ = 0.1 + 10 · sigmoid(raw[..., 1])``, as in the paper's code
    (``pddlsl/model_wrapper.py``, ``ModelWrapper._clip_sigma``): ``σ`` stays in ``(0.1, 10.1)``, so the
    NLL can neither collapse (``σ → 0``) nor flatten, and the head needs two raw outputs.
    ``"fixed"``: ``σ = 1/√2``, so the Gaussian NLL is ``(x − μ)²`` plus the constant ``½ log π``,
    i.e. the MSE loss (section 2.2); one raw output.
``residual``
    ``"none"``: ``μ = raw[..., 0]``.  ``"hff"`` / ``"lmcut"``: ``μ = raw[..., 0] + h(s)`` with the named
    heuristic passed as ``residual_base`` (residual learning, Yoon et al. 2008).
``bound``
    The admissible heuristic used as lower bound ``l``: ``"lmcut"``, ``"hmax"`` or ``"blind"``.  The
    caller passes its values as ``lower``; the name tells the data pipeline which one
    (:attr:`Head.lower_key`).  TN uses the *open* bound ``l − 0.1`` (appendix B.3: with a closed
    bound, ``h* = l`` is common for a tight ``l`` and the NLL rewards ``μ → −∞``).  N uses ``l`` only
    for ``clip``.
``upper``
    Where the upper bound ``u`` comes from.  ``"none"``: nowhere, ``1e5``, the paper's stand-in for a
    missing bound (appendix B.2); ``"inf"``: nowhere, ``+∞`` (exact; ``agents.distributions``
    handles it); ``"plan"``: training passes the data's ``upper`` column (the cost of a satisficing
    plan from the state, `pddlgym_sl.data.upper`; :attr:`Head.upper_key`), and where the caller
    passes no ``u`` -- plain GBFS, which knows no plan from a new state -- ``1e5`` as ``"none"``.
    An explicit ``upper`` tensor (a plan's cost, or ``C − g(s)`` in anytime search,
    `pddlgym_sl.search.anytime`) is opened to ``u + 0.1`` for TN; ``+∞`` entries stay ``+∞``.

``dist="cat"`` (:class:`CategoricalHead`, Heller et al., SoCS 2022): a softmax over the costs
``0..H`` (``H = max_cost``, the largest cost in the training data, so ``H + 1`` raw outputs), the
cross-entropy loss (targets above ``H`` count as ``H``), search value ``argmax_i p_i``. It predicts
costs directly: ``residual`` must be ``"none"``; ``sigma`` and ``upper`` play no part.

Confidence (:meth:`Head.confidence`, the number confidence-aware search thresholds): the
probability that ``h*`` falls in the *unit bucket* ``[ĥ − ½, ĥ + ½]`` around the search value ``ĥ``
under the predicted distribution, so every head reports it on the same ``[0, 1]`` scale:

* cat: ``max_i p_i``, the paper's ``c^NN(s)`` (with ``clip``, the probability of the clipped cost);
* N: ``2Φ(1 / (2σ)) − 1``, a function of σ alone (a small σ means confident; with ``sigma="fixed"``
  it is the constant 0.52);
* TN: ``P(ĥ − ½ ≤ X ≤ ĥ + ½)`` for ``X ~ TN(μ, σ, l − 0.1, u)`` with ``ĥ = E[X]``; the bucket is cut
  at the support's ends, so near the bound a TN can be confident with a larger σ than N.

Out-of-distribution training (:meth:`Head.uniform_cross_entropy`, used by `agents.ood` on noise
states): the loss that teaches low confidence. cat: the cross-entropy from the uniform distribution
over ``0..H`` to ``p``, ``−1/(H+1) Σ_i log p_i`` (the paper's). N / TN: the cross-entropy from the
uniform distribution over ``0..H`` to ``N(μ̄, σ)`` with ``μ̄`` the prediction held fixed (detached),
``log σ + ½ log 2π + (((μ̄ − H/2)² + ((H+1)² − 1)/12) / (2σ²)``: minimised by
``σ² = E_uniform[(x − μ̄)²]``, so it drives σ up on noise states and has no gradient through μ (it
pulls no prediction anywhere; shared layers may still move). TN uses the same untruncated form
(the truncation only renormalises). With ``sigma="fixed"`` there is nothing to learn: it raises.

Interval labels (:meth:`Head.interval_nll`): a state of a satisficing plan knows only that
``l ≤ h* ≤ u`` (l its admissible bound, u the plan's remaining cost; `pddlgym_sl.data.labels`).
Its loss is the interval-censored negative log-likelihood, with the ends opened by 0.1 as the TN's:

* N: ``−log P(l − 0.1 ≤ X ≤ u + 0.1)``, ``X ~ N(μ, σ)``, i.e. ``−log(Φ(b) − Φ(a))`` with
  ``a = (l − 0.1 − μ)/σ``, ``b = (u + 0.1 − μ)/σ``, computed stably in the tails
  (`agents.distributions.interval.log_interval_probability`);
* TN: the same probability under ``TN(μ, σ, l − 0.1, U)`` (U the head's upper end):
  ``−log(P_N(l − 0.1 ≤ X ≤ u + 0.1) / P_N(l − 0.1 ≤ X ≤ U))``;
* cat: ``−log Σ_{l ≤ c ≤ u} p_c`` (costs above ``H`` count as ``H``).

It is 0 when the whole predicted mass lies in the interval, and pulls μ into it from either side.

Search-time value (:meth:`Head.heuristic`):

* N: ``μ``; with ``clip=True``: ``min(max(μ, l), u)`` with the raw bound ``l`` (the paper's "+clip";
  with the default upper bound this is ``max(μ, l)``).
* cat: ``argmax_i p_i``; ``clip=True`` clips it to ``[l, u]``.
* TN: ``E[x]`` of ``TN(μ, σ, l − 0.1, u)`` (Eq. 10); with an explicit ``u``, ``min(E[x], u)`` of
  ``TN(μ, σ, l − 0.1, u + 0.1)``: h* ≤ u is certain, and the open bound alone would leave up to 0.1
  above it, so the search value respects ``u``.  It always satisfies ``l − 0.1 ≤ E[x] ≤ u``, but
  ``E[x] ≥ l`` is *not* guaranteed: for ``μ ≪ l`` the mass piles up at the open bound and
  ``E[x] ≈ l − 0.1 + σ²/(l − 0.1 − μ)``.  ``E[x] ≥ l`` holds e.g. whenever ``μ ≥ l`` and ``u ≥ l + 0.1``.
  ``clip=True`` applies the same clipping to ``[l, u]`` (the paper reports "+clip" only for N).

Shapes: ``raw`` is ``(..., n_outputs)``; ``lower``, ``residual_base``, ``upper`` and ``target`` are
``(...)`` (or broadcastable to it) and are cast to ``raw``'s dtype and device.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from agents.distributions.constants import FIXED_SIGMA, HALF_LOG_2PI, OPEN_BOUND_EPS, SIGMA_MIN, SIGMA_RANGE
from agents.distributions.interval import log_interval_probability, normal_bucket, truncated_normal_bucket
from agents.distributions.truncated import Gaussian, TruncatedGaussian
from agents.errors import AgentError
from agents.registries import BOUNDS, DISTS, RESIDUALS, SIGMAS, UPPER_DEFAULTS, UPPERS

__all__ = [
    "BOUNDS",
    "DISTS",
    "OPEN_BOUND_EPS",
    "RESIDUALS",
    "SIGMAS",
    "UPPERS",
    "CategoricalHead",
    "GaussianHead",
    "Head",
    "TruncatedGaussianHead",
    "make_head",
]

_UPPER_COLUMNS = {"plan": "upper"}
"""Per ``upper`` option that reads ``u`` from the data, its label column (`LabelledSplit.upper`)."""


def _check(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise AgentError(f"{name}={value!r} is not valid; choose one of {', '.join(map(repr, choices))}")


class Head:
    """Base class: maps raw model outputs plus symbolic heuristics to a distribution over ``h*``.

    Use :func:`make_head` to build one.  Subclasses implement :meth:`distribution` and
    :meth:`heuristic`; everything else (σ, residual, bounds, NLL, config) lives here.
    """

    dist: str = ""

    def __init__(
        self,
        *,
        sigma: str = "learn",
        residual: str = "hff",
        bound: str = "lmcut",
        upper: str = "none",
        max_cost: int | None = None,
    ) -> None:
        """``max_cost`` (the largest training cost) sizes the categorical head; N and TN ignore it."""
        _check("sigma", sigma, SIGMAS)
        _check("residual", residual, RESIDUALS)
        _check("bound", bound, BOUNDS)
        _check("upper", upper, UPPERS)
        self.sigma, self.residual, self.bound, self.upper = sigma, residual, bound, upper

    # ------------------------------------------------------------------ wiring
    @property
    def n_outputs(self) -> int:
        """Raw outputs the model must produce per state: μ (or Δμ), plus σ's logit when learned."""
        return 2 if self.sigma == "learn" else 1

    @property
    def config(self) -> dict[str, str]:
        """JSON-serialisable options; ``make_head(**head.config)`` rebuilds an equal head."""
        return {
            "dist": self.dist,
            "sigma": self.sigma,
            "residual": self.residual,
            "bound": self.bound,
            "upper": self.upper,
        }

    @property
    def learns_confidence(self) -> bool:
        """Whether training can change the confidence (N / TN: only with a learned σ)."""
        return self.sigma == "learn"

    @property
    def lower_key(self) -> str:
        """Name of the admissible heuristic to pass as ``lower``."""
        return self.bound

    def bound_in_value(self, clip: bool = False) -> bool:
        """Whether the search value or confidence reads the bound's values (TN always; N and the
        categorical head with ``clip`` only). Where it does not, a search needs the bound only where
        it is infinite: a proven dead end."""
        return True

    @property
    def upper_key(self) -> str | None:
        """Label column to pass as ``upper`` in training (``None``: the default ``u``)."""
        return _UPPER_COLUMNS.get(self.upper)

    @property
    def residual_key(self) -> str | None:
        """Name of the heuristic to pass as ``residual_base`` (``None``: not used)."""
        return None if self.residual == "none" else self.residual

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.items() if k != "dist")
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Head) and self.config == other.config

    def __hash__(self) -> int:
        return hash(tuple(self.config.items()))

    # ------------------------------------------------------------------ parameters
    def _raw_mu(self, raw: Tensor | np.ndarray, residual_base: Any) -> Any:
        """``raw[..., 0] (+ h)`` of a tensor (``h`` cast to its dtype and device) or of a numpy array;
        `AgentError` for a wrong number of outputs or a missing base."""
        if raw.shape[-1] != self.n_outputs:
            raise AgentError(
                f"raw must have {self.n_outputs} outputs in its last dim, got shape {tuple(raw.shape)}"
            )
        if self.residual == "none":
            return raw[..., 0]
        if residual_base is None:
            raise AgentError(f"residual={self.residual!r} needs residual_base (the {self.residual} values)")
        if isinstance(raw, Tensor):
            residual_base = self._like(residual_base, raw)
        return raw[..., 0] + residual_base

    def mu_sigma(self, raw: Tensor, residual_base: Tensor | None) -> tuple[Tensor, Tensor]:
        """``μ = raw[..., 0] (+ h)`` and ``σ`` (learned: ``0.1 + 10 sigmoid(raw[..., 1])``; fixed: 1/√2)."""
        mu = self._raw_mu(raw, residual_base)
        if self.sigma == "learn":
            sigma = SIGMA_MIN + SIGMA_RANGE * torch.sigmoid(raw[..., 1])
        else:
            sigma = torch.full_like(mu, FIXED_SIGMA)
        return mu, sigma

    def upper_bound(self, upper: Tensor | None, like: Tensor) -> Tensor:
        """Raw upper bound ``u``: the given tensor, else the default of the ``upper`` option (1e5 or +∞)."""
        if upper is not None:
            return self._like(upper, like)
        return torch.full((), UPPER_DEFAULTS[self.upper], dtype=like.dtype, device=like.device)

    def _clip(self, value: Tensor, lower: Tensor, upper: Tensor | None) -> Tensor:
        lo = self._like(lower, value)
        hi = self.upper_bound(upper, value)
        return torch.minimum(torch.maximum(value, lo), hi)

    @staticmethod
    def _like(x: Tensor | float, ref: Tensor) -> Tensor:
        return torch.as_tensor(x).to(dtype=ref.dtype, device=ref.device)

    # ------------------------------------------------------------------ interface
    def distribution(
        self, raw: Tensor, lower: Tensor, residual_base: Tensor | None, upper: Tensor | None = None
    ) -> Gaussian | TruncatedGaussian:
        """The predicted distribution of ``h*`` for each state."""
        raise NotImplementedError

    def nll(
        self,
        raw: Tensor,
        target: Tensor,
        lower: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
    ) -> Tensor:
        """Per-sample negative log-likelihood ``−log p(target)`` (shape ``raw.shape[:-1]``).

        For TN a target below ``l − 0.1`` (an inadmissible "lower bound") has NLL ``+∞``.
        """
        dist = self.distribution(raw, lower, residual_base, upper)
        return -dist.log_prob(self._like(target, raw))

    def interval_nll(
        self,
        raw: Tensor,
        lower: Tensor,
        interval_upper: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
    ) -> Tensor:
        """Per-sample interval-censored NLL ``−log P(l ≤ h* ≤ u)`` of states known only to have
        ``l ≤ h* ≤ u`` (``lower``: l, ``interval_upper``: u; the module docstring); ``upper`` is the
        head's own upper end, as in `nll`."""
        mu, sigma = self.mu_sigma(raw, residual_base)
        lo = self._like(lower, mu) - OPEN_BOUND_EPS
        hi = self._like(interval_upper, mu) + OPEN_BOUND_EPS
        return -log_interval_probability(mu, sigma, lo, hi)

    def heuristic(
        self,
        raw: Tensor,
        lower: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
        clip: bool = False,
    ) -> Tensor:
        """Search-time point estimate (see the module docstring)."""
        raise NotImplementedError

    def heuristic_values(
        self,
        raw: Tensor,
        lower: np.ndarray,
        residual_base: np.ndarray | None,
        clip: bool = False,
        upper: np.ndarray | None = None,
    ) -> np.ndarray:
        """`heuristic` for search, without gradients: float64 values of a batch of states whose
        bounds are given as arrays (``upper`` None: the default ``u``)."""
        base = None if residual_base is None else torch.from_numpy(np.asarray(residual_base))
        high = None if upper is None else torch.from_numpy(np.asarray(upper))
        h = self.heuristic(raw.detach(), torch.from_numpy(np.asarray(lower)), base, high, clip=clip)
        return h.double().cpu().numpy()

    def uniform_cross_entropy(self, raw: Tensor, residual_base: Tensor | None, max_cost: int) -> Tensor:
        """Per-sample loss that teaches low confidence on out-of-distribution states (see the module
        docstring): the Gaussian cross-entropy from uniform costs ``0..max_cost``, μ detached."""
        if not self.learns_confidence:
            raise AgentError("out-of-distribution training needs a learned sigma (--sigma learn)")
        mu, sigma = self.mu_sigma(raw, residual_base)
        h = float(max_cost)
        spread = (mu.detach() - h / 2).square() + ((h + 1) ** 2 - 1) / 12
        return torch.log(sigma) + HALF_LOG_2PI + spread / (2 * sigma.square())

    def confidence(
        self,
        raw: Tensor,
        lower: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
        clip: bool = False,
        value: Tensor | None = None,
    ) -> Tensor:
        """Probability of the unit bucket ``[ĥ − ½, ĥ + ½]`` around the search value ``ĥ`` (see the
        module docstring); ``value`` is ``ĥ`` when the caller has it already."""
        raise NotImplementedError

    def confidence_values(
        self,
        raw: Tensor,
        lower: np.ndarray,
        residual_base: np.ndarray | None,
        values: np.ndarray,
        clip: bool = False,
    ) -> np.ndarray:
        """`confidence` for search, without gradients, in float64: the confidences of a batch whose
        search values `values` (from `heuristic_values`) are known."""
        raw = raw.detach().cpu().double()
        as_tensor = lambda x: torch.from_numpy(np.asarray(x, dtype=np.float64))  # noqa: E731
        base = None if residual_base is None else as_tensor(residual_base)
        return self.confidence(raw, as_tensor(lower), base, clip=clip, value=as_tensor(values)).numpy()


class GaussianHead(Head):
    """``h* ~ N(μ, σ)``; heuristic ``μ`` (``clip``: ``max(μ, l)``, also ``≤ u`` if ``u`` is given)."""

    dist = "n"

    def bound_in_value(self, clip: bool = False) -> bool:
        return clip

    def distribution(
        self, raw: Tensor, lower: Tensor, residual_base: Tensor | None, upper: Tensor | None = None
    ) -> Gaussian:
        mu, sigma = self.mu_sigma(raw, residual_base)
        return Gaussian(mu, sigma)

    def heuristic(
        self,
        raw: Tensor,
        lower: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
        clip: bool = False,
    ) -> Tensor:
        mu, _ = self.mu_sigma(raw, residual_base)
        return self._clip(mu, lower, upper) if clip else mu

    def confidence(
        self,
        raw: Tensor,
        lower: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
        clip: bool = False,
        value: Tensor | None = None,
    ) -> Tensor:
        """``P(ĥ − ½ ≤ X ≤ ĥ + ½)`` for ``X ~ N(μ, σ)``: ``2Φ(1/(2σ)) − 1`` at ``ĥ = μ``."""
        mu, sigma = self.mu_sigma(raw, residual_base)
        if value is None:
            value = self.heuristic(raw, lower, residual_base, upper, clip=clip)
        return normal_bucket(mu, sigma, self._like(value, mu))


class TruncatedGaussianHead(Head):
    """``h* ~ TN(μ, σ, l − 0.1, u)`` with open bounds (appendix B.3); heuristic ``E[x]`` (Eq. 10)."""

    dist = "tn"

    def open_bounds(self, lower: Tensor, upper: Tensor | None, like: Tensor) -> tuple[Tensor, Tensor]:
        """``(l − 0.1, u + 0.1)`` for a given ``u``; the default ``1e5`` / ``+∞`` is used as is."""
        lo = self._like(lower, like) - OPEN_BOUND_EPS
        hi = self.upper_bound(upper, like)
        if upper is not None:
            hi = hi + OPEN_BOUND_EPS
        return lo, hi

    def distribution(
        self, raw: Tensor, lower: Tensor, residual_base: Tensor | None, upper: Tensor | None = None
    ) -> TruncatedGaussian:
        mu, sigma = self.mu_sigma(raw, residual_base)
        lo, hi = self.open_bounds(lower, upper, mu)
        return TruncatedGaussian(mu, sigma, lo, hi)

    def interval_nll(
        self,
        raw: Tensor,
        lower: Tensor,
        interval_upper: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
    ) -> Tensor:
        """``−log P(l − 0.1 ≤ X ≤ u + 0.1)`` under ``TN(μ, σ, l − 0.1, U)`` (the module docstring):
        the Gaussian's interval probability over its probability of the TN's support."""
        mu, sigma = self.mu_sigma(raw, residual_base)
        lo, hi = self.open_bounds(lower, upper, mu)
        inside = torch.minimum(self._like(interval_upper, mu) + OPEN_BOUND_EPS, hi.expand_as(mu))
        return log_interval_probability(mu, sigma, lo, hi) - log_interval_probability(mu, sigma, lo, inside)

    def heuristic(
        self,
        raw: Tensor,
        lower: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
        clip: bool = False,
    ) -> Tensor:
        mean = self.distribution(raw, lower, residual_base, upper).mean
        if upper is not None:
            mean = torch.minimum(mean, self._like(upper, mean))  # h* ≤ u: not the 0.1 of the open bound
        return self._clip(mean, lower, upper) if clip else mean

    def confidence(
        self,
        raw: Tensor,
        lower: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
        clip: bool = False,
        value: Tensor | None = None,
    ) -> Tensor:
        """``P(ĥ − ½ ≤ X ≤ ĥ + ½)`` for ``X ~ TN(μ, σ, l − 0.1, u)``, ``ĥ = E[X]`` (or clipped)."""
        mu, sigma = self.mu_sigma(raw, residual_base)
        lo, hi = self.open_bounds(lower, upper, mu)
        if value is None:
            value = self.heuristic(raw, lower, residual_base, upper, clip=clip)
        return truncated_normal_bucket(mu, sigma, lo, hi.expand_as(mu), self._like(value, mu))

    def heuristic_values(
        self,
        raw: Tensor,
        lower: np.ndarray,
        residual_base: np.ndarray | None,
        clip: bool = False,
        upper: np.ndarray | None = None,
    ) -> np.ndarray:
        """`heuristic` for search: ``E[x]`` by the compiled `agents.distributions.compiled.tn_value`
        (the same formula, in float64 from ``raw``'s values): the torch `TruncatedGaussian` costs
        about a millisecond per call on the few states of one search expansion."""
        from agents.distributions.compiled import learned_sigma, tn_value

        # `mu_sigma` and `upper_bound` in numpy: their torch ops on a handful of values cost more
        # than the kernel below (about 30 µs per search expansion)
        out = raw.detach().cpu().double().numpy()
        mu = self._raw_mu(out, residual_base)
        if self.sigma == "learn":
            sigma = learned_sigma(out[..., 1])  # SIGMA_MIN + SIGMA_RANGE sigmoid, by the compiled exp
        else:
            sigma = np.full_like(mu, FIXED_SIGMA)
        lower = np.asarray(lower, dtype=np.float64)
        explicit = upper is not None
        upper = np.asarray(upper, dtype=np.float64) if explicit else UPPER_DEFAULTS[self.upper]
        mean = tn_value(mu, sigma, lower, upper, explicit)
        return np.minimum(np.maximum(mean, lower), upper) if clip else mean


class CategoricalHead(Head):
    """``h*`` as one of the costs ``0..H`` with softmax probabilities ``p`` (Heller et al., SoCS 2022):
    cross-entropy loss, heuristic ``argmax_i p_i``, confidence ``max_i p_i`` (see the module docstring).

    ``mu_sigma`` gives the mean and standard deviation of ``p`` (logged as ``train/sigma``).
    """

    dist = "cat"

    def bound_in_value(self, clip: bool = False) -> bool:
        return clip

    def __init__(self, *, max_cost: int | None = None, **options: str) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        if self.residual != "none":
            raise AgentError(
                f"the categorical head predicts the costs 0..H directly: use residual='none' "
                f"(--residual none), not {self.residual!r}"
            )
        if max_cost is None or int(max_cost) != max_cost or max_cost < 0:
            raise AgentError(f"the categorical head needs max_cost, a cost >= 0 (got {max_cost!r})")
        self.max_cost = int(max_cost)

    @property
    def n_outputs(self) -> int:
        return self.max_cost + 1

    @property
    def config(self) -> dict[str, Any]:
        return {**super().config, "max_cost": self.max_cost}

    @property
    def learns_confidence(self) -> bool:
        return True

    def _check_raw(self, raw: Tensor) -> None:
        if raw.shape[-1] != self.n_outputs:
            raise AgentError(
                f"raw must have {self.n_outputs} outputs (costs 0..{self.max_cost}) in its last dim, "
                f"got shape {tuple(raw.shape)}"
            )

    def _costs(self, like: Tensor) -> Tensor:
        """The costs ``0..H`` in `like`'s dtype and device."""
        return torch.arange(self.n_outputs, dtype=like.dtype, device=like.device)

    def mu_sigma(self, raw: Tensor, residual_base: Tensor | None) -> tuple[Tensor, Tensor]:
        """Mean and standard deviation of the predicted cost distribution."""
        self._check_raw(raw)
        p = torch.softmax(raw, dim=-1)
        costs = self._costs(p)
        mean = (p * costs).sum(-1)
        var = (p * (costs - mean.unsqueeze(-1)).square()).sum(-1)
        return mean, var.clamp(min=0).sqrt()

    def uniform_cross_entropy(self, raw: Tensor, residual_base: Tensor | None, max_cost: int) -> Tensor:
        """``−1/(H+1) Σ_i log p_i`` over this head's costs (the paper's OOD loss; `max_cost` is ``H``)."""
        self._check_raw(raw)
        return -torch.log_softmax(raw, dim=-1).mean(-1)

    def distribution(
        self, raw: Tensor, lower: Tensor, residual_base: Tensor | None, upper: Tensor | None = None
    ) -> torch.distributions.Categorical:
        self._check_raw(raw)
        return torch.distributions.Categorical(logits=raw)

    def nll(
        self,
        raw: Tensor,
        target: Tensor,
        lower: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
    ) -> Tensor:
        """Cross-entropy ``−log p_c`` of the target cost ``c`` (costs above ``H`` count as ``H``)."""
        self._check_raw(raw)
        classes = self._like(target, raw).round().clamp(0, self.max_cost).long()
        flat = F.cross_entropy(raw.reshape(-1, self.n_outputs), classes.reshape(-1), reduction="none")
        return flat.reshape(classes.shape)

    def interval_nll(
        self,
        raw: Tensor,
        lower: Tensor,
        interval_upper: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
    ) -> Tensor:
        """``−log Σ_{l ≤ c ≤ u} p_c`` over this head's costs (costs above ``H`` count as ``H``)."""
        self._check_raw(raw)
        costs = self._costs(raw)
        lo = self._like(lower, raw).unsqueeze(-1)
        hi = self._like(interval_upper, raw).clamp(max=self.max_cost).unsqueeze(-1)
        inside = (costs >= lo - 0.5) & (costs <= hi + 0.5)
        log_p = torch.log_softmax(raw, dim=-1)
        return -torch.logsumexp(log_p.masked_fill(~inside, -math.inf), dim=-1)

    def heuristic(
        self,
        raw: Tensor,
        lower: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
        clip: bool = False,
    ) -> Tensor:
        self._check_raw(raw)
        best = raw.argmax(-1).to(raw.dtype)
        return self._clip(best, lower, upper) if clip else best

    def confidence(
        self,
        raw: Tensor,
        lower: Tensor,
        residual_base: Tensor | None,
        upper: Tensor | None = None,
        clip: bool = False,
        value: Tensor | None = None,
    ) -> Tensor:
        """The probability of the costs in ``[ĥ − ½, ĥ + ½]``: ``max_i p_i`` at ``ĥ = argmax``."""
        self._check_raw(raw)
        if value is None:
            value = self.heuristic(raw, lower, residual_base, upper, clip=clip)
        p = torch.softmax(raw, dim=-1)
        costs = self._costs(raw)
        inside = (costs - self._like(value, raw).unsqueeze(-1)).abs() <= 0.5
        return (p * inside).sum(-1)


_HEADS: dict[str, type[Head]] = {"n": GaussianHead, "tn": TruncatedGaussianHead, "cat": CategoricalHead}


def make_head(
    dist: str,
    *,
    sigma: str = "learn",
    residual: str = "hff",
    bound: str = "lmcut",
    upper: str = "none",
    max_cost: int | None = None,
    **unknown: Any,
) -> Head:
    """Build a head: ``make_head("n" | "tn" | "cat", sigma=..., residual=..., bound=..., upper=...,
    max_cost=...)``; ``max_cost`` (the largest training cost) is used by the categorical head only.

    Raises `AgentError` (a ``ValueError``) naming the valid choices for an unknown option value or keyword.
    """
    if unknown:
        raise AgentError(
            f"unknown head option(s) {sorted(unknown)}; valid: dist, sigma, residual, bound, upper, max_cost"
        )
    _check("dist", dist, DISTS)
    return _HEADS[dist](sigma=sigma, residual=residual, bound=bound, upper=upper, max_cost=max_cost)
