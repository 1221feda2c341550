"""Accuracy, gradient and property tests of agents.distributions.

References: scipy.stats.truncnorm on a moderate grid, and exact mpmath formulas (≥ 50 digits) on an
extreme grid (|μ − bound| up to 1e4 σ, σ ∈ {1e-3, 1, 1e3}, infinite / ±1e5 / nearly equal bounds).
Reference values are computed from the inputs *after* rounding to the tested dtype, so the
tolerances measure the implementation, not the rounding of the inputs.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import special, stats

from agents.distributions.truncated import Gaussian, TruncatedGaussian

INF = math.inf


# ----------------------------------------------------------------------------- references
def mp_erfc(x: mp.mpf) -> mp.mpf:
    """mpmath's erfc, with the asymptotic series beyond |x| = 1e8 (mpmath's own check overflows for
    huge arguments; there the third term is below 1e-48 of the first)."""
    if abs(x) <= 1e8:
        return mp.erfc(x)
    t = abs(x)
    tail = mp.exp(-t * t) / (t * mp.sqrt(mp.pi)) * (1 - 1 / (2 * t * t) + 3 / (4 * t**4) - 15 / (8 * t**6))
    return tail if x > 0 else 2 - tail


def mp_reference(mu: float, sigma: float, low: float, high: float, x: float) -> dict[str, float]:
    """Exact mean, variance, log Z and log p(x) of TN(μ, σ, l, u) with mpmath erfc."""
    finite = [abs(v - mu) / sigma for v in (low, high) if math.isfinite(v)]
    # enough digits for the cancellations in the textbook formulas (variance loses ~α⁴, and
    # ~w⁻² for a standardized width w = (u − l)/σ ≪ 1, where Var/σ² ≈ w²/12), plus ~α² for the
    # absolute accuracy of the exponent α²/2 inside φ(α) and erfc
    width = (high - low) / sigma if math.isfinite(high - low) else 1.0
    dps = 70 + int(6 * math.log10(1.0 + max([1.0, *finite]))) + int(2 * max(0.0, -math.log10(width)))
    with mp.workdps(dps):
        mu_, s_ = mp.mpf(mu), mp.mpf(sigma)

        def std(v: float) -> mp.mpf:
            return mp.mpf(v) if math.isinf(v) else (mp.mpf(v) - mu_) / s_

        a, b = std(low), std(high)
        r2 = mp.sqrt(2)
        if a >= 0:
            z = (mp_erfc(a / r2) - mp_erfc(b / r2)) / 2
        elif b <= 0:
            z = (mp_erfc(-b / r2) - mp_erfc(-a / r2)) / 2
        else:
            z = 1 - mp_erfc(b / r2) / 2 - mp_erfc(-a / r2) / 2

        def phi(t: mp.mpf) -> mp.mpf:
            return mp.mpf(0) if mp.isinf(t) else mp.npdf(t)

        def tphi(t: mp.mpf) -> mp.mpf:
            return mp.mpf(0) if mp.isinf(t) else t * mp.npdf(t)

        m = (phi(a) - phi(b)) / z
        xi = (mp.mpf(x) - mu_) / s_
        return {
            "mean": float(mu_ + s_ * m),
            "var": float(s_**2 * (1 + (tphi(a) - tphi(b)) / z - m * m)),
            "logz": float(mp.log(z)),
            "logp": float(-mp.log(s_) - mp.log(2 * mp.pi) / 2 - xi * xi / 2 - mp.log(z)),
        }


def extreme_cases() -> list[tuple[float, float, float, float]]:
    """(μ, σ, l, u) with μ from 1e4 σ below to 1e4 σ above the bound, many widths and mirrors."""
    cases = []
    for sigma in (1e-3, 1.0, 1e3):
        for alpha in (
            -1e4,
            -1e3,
            -30.0,
            -5.0,
            -2.5,
            -1.0,
            -0.3,
            0.0,
            0.3,
            1.0,
            2.5,
            3.5,
            5.0,
            30.0,
            1e3,
            1e4,
        ):
            for low in (0.0, 7.0):
                mu = low - alpha * sigma
                for width in (INF, 1e5, 1e-9, 1e-3, 0.6, 1.99, 2.5, 50.0):
                    if width == INF:
                        high = INF
                    elif width == 1e5:
                        high = 1e5  # "missing" bound of appendix B.2
                    else:
                        high = low + width * sigma
                    cases.append((mu, sigma, low, high))
                    cases.append((-mu, sigma, -high, -low))  # mirrored: upper bound only / flipped
        cases.append((0.3 * sigma, sigma, -INF, INF))
    return cases


def _evaluate(dtype: torch.dtype) -> tuple[list, dict[str, np.ndarray], np.ndarray]:
    raw = extreme_cases()
    mu, sigma, low, high = (torch.tensor([c[i] for c in raw], dtype=dtype) for i in range(4))
    keep = (low < high).numpy()  # nearly equal bounds can collapse in float32
    # x: the near finite bound (density largest there when μ is outside) or μ
    x = torch.where(torch.isfinite(low), low, torch.where(torch.isfinite(high), high, mu))
    d = TruncatedGaussian(mu, sigma, low, high)
    got = {
        "mean": d.mean.double().numpy(),
        "var": d.variance.double().numpy(),
        "logz": d.log_normalizer.double().numpy(),
        "logp": d.log_prob(x).double().numpy(),
    }
    rows = [
        (tuple(float(t[i]) for t in (mu, sigma, low, high)), float(x[i])) for i in range(len(raw)) if keep[i]
    ]
    return rows, {k: v[keep] for k, v in got.items()}, keep


# ----------------------------------------------------------------------------- accuracy
@pytest.mark.parametrize(
    ("dtype", "rtol"),
    [
        (torch.float64, {"mean": 1e-12, "var": 1e-11, "logz": 1e-12, "logp": 1e-12}),
        (torch.float32, {"mean": 1e-5, "var": 1e-4, "logz": 1e-5, "logp": 1e-5}),
    ],
)
def test_matches_mpmath_on_extreme_grid(dtype: torch.dtype, rtol: dict[str, float]) -> None:
    rows, got, _ = _evaluate(dtype)
    eps = torch.finfo(dtype).eps
    worst = dict.fromkeys(got, 0.0)
    for i, ((mu, sigma, low, high), x) in enumerate(rows):
        ref = mp_reference(mu, sigma, low, high, x)
        for key, value in got.items():
            r, v = ref[key], float(value[i])
            assert math.isfinite(v), (key, mu, sigma, low, high, v)
            if key == "mean":  # relative, plus the unavoidable rounding of μ + σ·m in the M regime
                scale = abs(r) + 4 * eps / rtol[key] * (abs(mu) + sigma) * (low < mu < high)
            elif key == "var":
                scale = abs(r)
            else:  # log values: relative, or absolute when |value| < 1
                scale = max(abs(r), 1.0)
            err = abs(v - r) / scale if scale > 0 else abs(v - r)
            worst[key] = max(worst[key], err)
            assert err <= rtol[key], (key, (mu, sigma, low, high), v, r, err)
    print(dtype, {k: f"{v:.1e}" for k, v in worst.items()})


@pytest.mark.parametrize("mu", [-3.0, -1.0, 0.0, 0.5, 2.0, 4.0])
@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_matches_scipy_truncnorm(mu: float, sigma: float) -> None:
    bounds = [(-1.0, 1.0), (0.0, 3.0), (-INF, 0.5), (0.2, INF), (-2.0, -1.5), (1.0, 1.3), (-INF, INF)]
    lo = torch.tensor([b[0] for b in bounds], dtype=torch.float64)
    hi = torch.tensor([b[1] for b in bounds], dtype=torch.float64)
    d = TruncatedGaussian(torch.tensor(mu, dtype=torch.float64), sigma, lo, hi)
    a, b = (lo.numpy() - mu) / sigma, (hi.numpy() - mu) / sigma
    ref = stats.truncnorm(a, b, loc=mu, scale=sigma)
    np.testing.assert_allclose(d.mean.numpy(), ref.mean(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(d.variance.numpy(), ref.var(), rtol=1e-9)
    for q in (0.01, 0.3, 0.5, 0.9):
        x = torch.as_tensor(ref.ppf(q))
        np.testing.assert_allclose(d.log_prob(x).numpy(), ref.logpdf(x.numpy()), rtol=1e-9, atol=1e-12)
    # log(Φ(b) − Φ(a)) from the tail on the far side of the mode, where it does not cancel
    with np.errstate(invalid="ignore"):  # -inf + inf for the untruncated case
        right = a + b > 0
    hi_t, lo_t = np.where(right, -a, b), np.where(right, -b, a)
    log_z = special.log_ndtr(hi_t) + np.log1p(-np.exp(special.log_ndtr(lo_t) - special.log_ndtr(hi_t)))
    np.testing.assert_allclose(d.log_normalizer.numpy(), log_z, rtol=1e-9, atol=1e-12)


def test_log_prob_outside_support_is_minus_inf() -> None:
    d = TruncatedGaussian(0.0, 1.0, torch.tensor([-1.0, 0.5]), torch.tensor([1.0, INF]))
    lp = d.log_prob(torch.tensor([[2.0, 0.4], [-1.0, 0.5]]))
    assert lp[0].tolist() == [-INF, -INF]
    assert torch.isfinite(lp[1]).all()


def test_gaussian_equals_tn_with_infinite_bounds() -> None:
    mu = torch.tensor([-3.0, 0.0, 2.5e4], dtype=torch.float64)
    sigma = torch.tensor([1e-3, 1.0, 1e3], dtype=torch.float64)
    x = torch.tensor([-2.0, 0.7, 2.4e4], dtype=torch.float64)
    g, tn = Gaussian(mu, sigma), TruncatedGaussian(mu, sigma, -INF, INF)
    torch.testing.assert_close(tn.mean, g.mean, rtol=0, atol=0)
    torch.testing.assert_close(tn.variance, g.variance, rtol=1e-15, atol=0)
    torch.testing.assert_close(tn.log_prob(x), g.log_prob(x), rtol=1e-15, atol=0)
    assert tn.log_normalizer.abs().max() == 0 == g.log_normalizer.abs().max()
    ref = torch.distributions.Normal(mu, sigma).log_prob(x)
    torch.testing.assert_close(g.log_prob(x), ref, rtol=1e-14, atol=0)


def test_reflection_symmetry() -> None:
    mu = torch.tensor([-40.0, 0.3, 5.0, 1.0001], dtype=torch.float64)
    lo = torch.tensor([0.0, -1.0, -INF, 1.0], dtype=torch.float64)
    hi = torch.tensor([INF, 2.0, 1.0, 1.0 + 1e-7], dtype=torch.float64)
    d, m = TruncatedGaussian(mu, 0.7, lo, hi), TruncatedGaussian(-mu, 0.7, -hi, -lo)
    torch.testing.assert_close(d.mean, -m.mean, rtol=1e-14, atol=0)
    torch.testing.assert_close(d.variance, m.variance, rtol=1e-12, atol=0)
    torch.testing.assert_close(d.log_normalizer, m.log_normalizer, rtol=1e-13, atol=0)


def test_broadcasting_and_dtypes() -> None:
    d = TruncatedGaussian(torch.zeros(2), torch.ones(3, 1), -1.0, torch.tensor(INF))
    assert d.batch_shape == (3, 2)
    assert d.log_prob(torch.zeros(5, 1, 1)).shape == (5, 3, 2)
    half = TruncatedGaussian(torch.tensor([0.0, 1.0], dtype=torch.float16), 1.0, -1.0, 1.0)
    assert half.mean.dtype == torch.float16
    assert (
        TruncatedGaussian(torch.tensor(0.0, dtype=torch.float64), 1.0, 0.0, 1.0).mean.dtype == torch.float64
    )
    empty = TruncatedGaussian(torch.zeros(0), 1.0, 0.0, 1.0)
    assert empty.mean.shape == (0,)


def test_validate_args() -> None:
    with pytest.raises(ValueError, match="sigma"):
        TruncatedGaussian(0.0, -1.0, 0.0, 1.0, validate_args=True)
    with pytest.raises(ValueError, match="low"):
        TruncatedGaussian(0.0, 1.0, 1.0, 1.0, validate_args=True)
    with pytest.raises(ValueError, match="sigma"):
        Gaussian(0.0, 0.0, validate_args=True)
    # the documented input domain: finite mu, finite positive sigma, bounds not NaN
    nan, inf = float("nan"), float("inf")
    for mu, sigma, low, high, what in [
        (0.0, inf, 0.0, 1.0, "sigma"),
        (0.0, nan, 0.0, 1.0, "sigma"),
        (nan, 1.0, 0.0, 1.0, "mu"),
        (inf, 1.0, 0.0, 1.0, "mu"),
        (0.0, 1.0, 0.0, nan, "NaN"),
        (0.0, 1.0, nan, 1.0, "NaN"),
    ]:
        with pytest.raises(ValueError, match=what):
            TruncatedGaussian(mu, sigma, low, high, validate_args=True)
    with pytest.raises(ValueError, match="sigma"):
        Gaussian(0.0, inf, validate_args=True)
    TruncatedGaussian(0.0, 1.0, -inf, inf, validate_args=True)  # infinite bounds are in the domain
    f32 = torch.float32
    with pytest.raises(ValueError, match="smallest normal"):  # 1/σ overflows for a subnormal σ
        TruncatedGaussian(0.0, torch.tensor(1e-45, dtype=f32), 0.0, 1.0, validate_args=True)
    with pytest.raises(ValueError, match="overflows"):  # l = 0 is 1e50 σ from μ: beyond float32
        TruncatedGaussian(
            torch.tensor(1e20, dtype=f32), torch.tensor(1e-30, dtype=f32), 0.0, 10.0, validate_args=True
        )
    with pytest.raises(ValueError, match="overflows"):  # (u − l)/σ = 2e38·... beyond float32
        TruncatedGaussian(0.0, torch.tensor(1e-34, dtype=f32), -1e5, 1e5, validate_args=True)
    TruncatedGaussian(0.0, torch.tensor(1e-30, dtype=f32), -1e5, 1e5, validate_args=True)  # in the domain


def _dtype_extreme_cases() -> list[tuple[float, float, float, float, float]]:
    """(μ, σ, l, u, x) inside the documented domain with σ from 1e-30 to 1e30: bounds finite, ±1e5,
    ±inf or nearly equal, |μ| up to 1e5, x at each finite bound and at μ when inside."""
    cases = []
    intervals = [(0.0, 10.0), (0.0, INF), (-INF, 0.0), (0.0, 1e5), (-1e5, 3.0), (-INF, INF), (2.0, 2.5)]
    for k in range(-30, 31, 3):
        sigma = 10.0**k
        for low, high in intervals:
            for mu in (-1e5, -7.0, 0.0, 1.0, 2.25, 1e5):
                for x in {low, high, mu}:
                    if math.isfinite(x) and low <= x <= high:
                        cases.append((mu, sigma, low, high, x))
    return cases


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_no_nan_or_spurious_inf_at_dtype_extremes(dtype: torch.dtype) -> None:
    """Inside the documented domain (σ from 1e-30 to 1e30, bounds at ±inf, x at the bounds): no
    NaN anywhere, no ±inf where the true value is in the dtype's range, accurate where it is
    normal, and gradients without NaN where σ² is normal (regression: float32 variance was inf
    at σ = 2e19 and NaN at σ = 1e30 on [0, 10], whose true variance is 8.33)."""
    info = torch.finfo(dtype)
    tol = {torch.float32: 1e-4, torch.float64: 1e-10}[dtype]
    for mu, sigma, low, high, x in _dtype_extreme_cases():
        t = [torch.tensor(v, dtype=dtype, requires_grad=True) for v in (mu, sigma, low, high)]
        if not bool(t[2] < t[3]):
            continue
        xt = torch.tensor(x, dtype=dtype).clamp(t[2].detach(), t[3].detach())
        d = TruncatedGaussian(*t, validate_args=True)
        got = {"mean": d.mean, "var": d.variance, "logz": d.log_normalizer, "logp": d.log_prob(xt)}
        ref = mp_reference(*(float(v.detach()) for v in t), float(xt))
        case = (dtype, mu, sigma, low, high, x)
        for key, value in got.items():
            v, r = float(value.detach()), ref[key]
            assert not math.isnan(v), (key, case)
            if abs(r) > info.max:
                assert math.isinf(v) and (v > 0) == (r > 0), (key, case, v, r)
            elif abs(r) < 1e3 * info.tiny:  # below the normal range: anything that small
                assert abs(v) < 1e4 * info.tiny, (key, case, v, r)
            else:
                assert math.isfinite(v), (key, case, v, r)
                if key == "mean":
                    scale = abs(r) + 4 * info.eps / tol * (abs(mu) + sigma)
                else:
                    scale = max(abs(r), 1.0) if key in ("logz", "logp") else abs(r)
                assert abs(v - r) <= tol * scale, (key, case, v, r)
        if sigma * sigma > info.tiny:  # gradients: documented for σ² in the normal range
            sum(o for o in got.values() if torch.isfinite(o)).backward()
            for p in t:
                assert p.grad is None or not torch.isnan(p.grad), case


# ----------------------------------------------------------------------------- gradients
GRAD_POINTS = [  # (μ, σ, l, u, x): one per regime and branch, away from the regime thresholds
    (0.3, 1.2, -0.5, 2.0, 0.1),  # M, μ inside
    (0.2, 0.8, -INF, 1.5, -0.7),  # M, one infinite bound
    (-50.0, 1.0, 0.0, INF, 0.02),  # A, far below, continued fraction, u = ∞
    (-1.0, 2.0, 0.0, INF, 0.5),  # A, close below, erfcx branch, u = ∞
    (-5.0, 2.0, 0.0, 3.0, 1.0),  # A, two-sided
    (1e4, 1.0, -1e5, 0.0, -1e-3),  # A mirrored: μ 1e4 σ above the upper bound, "missing" lower bound
    (1.0, 0.5, 1.2, 1.25, 1.21),  # T, short interval
    (-30.0, 0.1, 0.0, 1e-3, 5e-4),  # T, short interval far from μ
    (0.0, 1.0, -INF, INF, 0.4),  # Gaussian
]


@pytest.mark.parametrize("point", GRAD_POINTS)
def test_gradcheck_float64(point: tuple[float, ...]) -> None:
    mu, sigma, low, high, x = point
    params = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (mu, sigma, low, high, x)]
    mask = [True, True, math.isfinite(low), math.isfinite(high), True]
    inputs = tuple(p for p, m in zip(params, mask, strict=True) if m)

    def fn(*args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        it = iter(args)
        v = [next(it) if m else p.detach() for p, m in zip(params, mask, strict=True)]
        d = TruncatedGaussian(v[0], v[1], v[2], v[3])
        return d.mean, d.variance, d.log_prob(v[4]), d.log_normalizer

    assert torch.autograd.gradcheck(fn, inputs, eps=1e-7, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gradients_finite_on_extreme_grid(dtype: torch.dtype) -> None:
    raw = [c for c in extreme_cases()]
    mu, sigma, low, high = (torch.tensor([c[i] for c in raw], dtype=dtype).requires_grad_() for i in range(4))
    keep = (low < high).detach()
    x = torch.where(torch.isfinite(low), low, torch.where(torch.isfinite(high), high, mu)).detach()
    x.requires_grad_()
    d = TruncatedGaussian(mu, sigma, low, high)
    outs = (d.mean, d.variance, d.log_normalizer, d.log_prob(x))
    for out in outs:
        assert torch.isfinite(out[keep]).all()
    torch.autograd.backward([o[keep].sum() for o in outs])
    for p in (mu, sigma, low, high, x):
        assert torch.isfinite(p.grad[keep]).all()


# ----------------------------------------------------------------------------- properties
bound_kind = st.sampled_from(["finite", "finite", "finite", "inf", "missing"])


@settings(max_examples=300, deadline=None)
@given(
    dtype=st.sampled_from([torch.float32, torch.float64]),
    log_sigma=st.floats(-3.0, 3.0),
    alpha=st.one_of(st.floats(-2e4, 2e4), st.floats(-5.0, 5.0)),
    log_width=st.floats(-6.0, 4.5),
    lo_kind=bound_kind,
    hi_kind=bound_kind,
    shift=st.floats(-100.0, 100.0),
    frac=st.floats(0.0, 1.0),
)
def test_properties(
    dtype: torch.dtype,
    log_sigma: float,
    alpha: float,
    log_width: float,
    lo_kind: str,
    hi_kind: str,
    shift: float,
    frac: float,
) -> None:
    sigma = 10.0**log_sigma
    low, mu = shift, shift - alpha * sigma
    high = low + 10.0**log_width * sigma
    low = {"finite": low, "inf": -INF, "missing": -1e5}[lo_kind]
    high = {"finite": high, "inf": INF, "missing": 1e5}[hi_kind]
    assume(low < high)
    t = [torch.tensor(v, dtype=dtype, requires_grad=True) for v in (mu, sigma, low, high)]
    assume(bool(t[2] < t[3]))
    lo_f = t[2].item() if math.isfinite(low) else min(t[3].item(), mu) - 10 * sigma
    hi_f = t[3].item() if math.isfinite(high) else max(lo_f, mu) + 10 * sigma
    x = torch.tensor(lo_f + frac * (hi_f - lo_f), dtype=dtype).clamp(t[2].detach(), t[3].detach())
    x.requires_grad_()

    d = TruncatedGaussian(*t)
    mean, var, log_z, lp = d.mean, d.variance, d.log_normalizer, d.log_prob(x)
    for v in (mean, var, log_z, lp):
        assert torch.isfinite(v), (mean, var, log_z, lp)
    assert t[2] <= mean <= t[3]
    assert 0 <= var <= t[1].detach() ** 2
    (mean + var + log_z + lp).backward()
    for p in (*t, x):
        assert torch.isfinite(p.grad), [q.grad for q in (*t, x)]


# ----------------------------------------------------------------------------- regressions
def _naive_mean(mu: torch.Tensor, sigma: torch.Tensor, low: torch.Tensor) -> torch.Tensor:
    """The textbook one-sided mean μ + σ λ(α), λ = √(2/π)/erfcx(α/√2) (no cancellation control)."""
    alpha = (low - mu) / sigma
    return mu + sigma * math.sqrt(2 / math.pi) / torch.special.erfcx(alpha / math.sqrt(2))


def test_regression_finite_gradient_with_infinite_upper_bound() -> None:
    """stable-trunc-gaussian returns NaN gradients for u = ∞ (β = (∞ − μ)/σ meets a zero)."""
    for dtype in (torch.float32, torch.float64):
        for mu0 in (-1e4, -50.0, -1.0, 0.0, 3.0, 1e4):
            mu, sigma, low = (torch.tensor(v, dtype=dtype, requires_grad=True) for v in (mu0, 1.0, 0.0))
            high = torch.tensor(INF, dtype=dtype, requires_grad=True)
            d = TruncatedGaussian(mu, sigma, low, high)
            x = torch.tensor(max(mu0, 0.0) + 0.5, dtype=dtype)
            (d.mean + d.variance + d.log_prob(x) + d.log_normalizer).backward()
            for p in (mu, sigma, low, high):
                assert torch.isfinite(p.grad), (dtype, mu0, p.grad)
            assert high.grad == 0


def test_regression_float32_mean_far_below_lower_bound() -> None:
    """μ = l − 1e4 σ: E[x] = l + σ g(α) ≈ l + 1e-4 σ must keep its digits in float32."""
    mu, sigma, low = (torch.tensor(v, dtype=torch.float32) for v in (-1e4, 1.0, 0.0))
    exact = mp_reference(-1e4, 1.0, 0.0, INF, 1e-4)
    d = TruncatedGaussian(mu, sigma, low, INF)
    assert abs(d.mean.item() - exact["mean"]) <= 1e-6 * exact["mean"]
    assert abs(d.variance.item() - exact["var"]) <= 1e-6 * exact["var"]
    assert abs(d.log_prob(torch.tensor(1e-4)).item() - exact["logp"]) <= 1e-6 * abs(exact["logp"])
    # the cancellation-prone formula is off by ~1000 % here (documents what the test guards against)
    naive = _naive_mean(mu, sigma, low).item()
    assert abs(naive - exact["mean"]) > 0.5 * exact["mean"]


def test_mean_far_below_lower_bound_in_tn_heuristic_setting() -> None:
    """Training-like setting: l − 0.1 open bound, u = 1e5, μ ≪ l: mean ≥ l − 0.1, ≈ l − 0.1 + σ/|α|."""
    low = torch.tensor([3.9, 9.9, 0.9], dtype=torch.float32)
    mu = torch.tensor([-100.0, -5000.0, 0.5], dtype=torch.float32, requires_grad=True)
    d = TruncatedGaussian(mu, 0.5, low, 1e5)
    assert (d.mean >= low).all()
    torch.testing.assert_close(d.mean[:2], low[:2] + 0.5 / ((low[:2] - mu[:2]) / 0.5), rtol=1e-3, atol=0)
    d.mean.sum().backward()
    assert torch.isfinite(mu.grad).all() and (mu.grad >= 0).all()


def test_tn_mean_kernel_matches_truncated_gaussian_mean():
    """`agents.distributions.compiled.tn_mean` (search's compiled mean) equals ``TruncatedGaussian(...).mean``
    in every regime: nearly equal, one-sided (±1e5, ±inf) and central intervals, μ far outside."""
    from agents.distributions.compiled import tn_mean

    rng = np.random.default_rng(0)
    n = 4000
    mu = rng.normal(0, 1, n) * 10 ** rng.uniform(-2, 4, n)
    sigma = 10 ** rng.uniform(-3, 3, n)
    low = rng.normal(0, 5, n) * 10 ** rng.uniform(-1, 3, n)
    high = low + 10 ** rng.uniform(-5, 4, n)
    kind = rng.integers(0, 5, n)
    high = np.where(kind == 0, np.inf, np.where(kind == 1, 1e5, high))
    low = np.where(kind == 2, -np.inf, low)
    ref = TruncatedGaussian(*(torch.tensor(x) for x in (mu, sigma, low, high))).mean.numpy()
    got = tn_mean(mu, sigma, low, high)
    finite_low = np.where(np.isfinite(low), np.abs(low), 0.0)
    scale = np.maximum.reduce([np.abs(ref), np.abs(mu), finite_low, np.ones(n)])
    assert np.all(np.abs(got - ref) <= 1e-12 * scale)


def test_tn_value_kernel_is_the_tn_heads_value():
    """`agents.distributions.compiled.tn_value` (search's TN value, open bounds and all) equals the
    torch head's `TruncatedGaussianHead.heuristic`, with the default upper bound and an explicit one."""
    from agents.distributions.compiled import tn_value, tn_value_one
    from agents.heads import make_head

    rng = np.random.default_rng(1)
    n = 500
    raw = torch.tensor(np.stack([rng.normal(5, 20, n), rng.normal(0, 3, n)], -1))
    lower = np.abs(rng.normal(5, 5, n))
    head = make_head("tn", residual="none")
    mu, sigma = (t.numpy() for t in head.mu_sigma(raw, None))
    for upper in (None, lower + np.exp(rng.uniform(-3, 4, n))):
        explicit = upper is not None
        given = torch.tensor(upper) if explicit else None
        want = head.heuristic(raw, torch.tensor(lower), None, given).numpy()
        u = np.broadcast_to(upper if explicit else 1e5, n)
        got = tn_value(mu, sigma, lower, u, explicit)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        one = [tn_value_one(mu[k], sigma[k], lower[k], u[k], explicit) for k in range(n)]
        assert np.array_equal(np.array(one), got)


# ----------------------------------------------------------------------------- interval likelihood
@pytest.mark.parametrize(("dtype", "rtol"), [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_log_interval_probability_matches_mpmath(dtype: torch.dtype, rtol: float) -> None:
    """``log(Φ((u − μ)/σ) − Φ((l − μ)/σ))`` against 50+ digit mpmath on the extreme grid (μ up to
    1e4 σ on either side of the interval, intervals from 1e-9 σ wide to half-infinite; relative
    error, absolute below 1), and its gradients finite everywhere (the interval-censored loss of
    satisficing plans' states)."""
    from agents.distributions.interval import log_interval_probability

    mu, sigma, low, high = (torch.tensor([c[k] for c in extreme_cases()], dtype=dtype) for k in range(4))
    keep = low < high  # nearly equal bounds can collapse in float32
    mu, sigma, low, high = (t[keep].clone() for t in (mu, sigma, low, high))
    mu.requires_grad_(True)
    sigma.requires_grad_(True)
    got = log_interval_probability(mu, sigma, low, high)
    for k in range(len(got)):
        case = tuple(float(t[k]) for t in (mu, sigma, low, high))
        want = mp_reference(*case, x=case[0])["logz"]
        assert abs(float(got[k]) - want) <= rtol * max(abs(want), 1.0), (case, float(got[k]), want)
    got.sum().backward()
    assert torch.isfinite(mu.grad).all() and torch.isfinite(sigma.grad).all()


def test_log_interval_probability_gradient_pulls_mu_into_the_interval() -> None:
    from agents.distributions.interval import log_interval_probability

    mu = torch.tensor([-50.0, 3.0, 9.5, 400.0], dtype=torch.float64, requires_grad=True)
    log_interval_probability(mu, torch.ones(4, dtype=torch.float64), 2.9, 10.1).sum().backward()
    assert mu.grad[0] > 0 and mu.grad[3] < 0  # from below up, from above down
    assert mu.grad[1] > 0 and mu.grad[2] < 0  # inside: towards the middle
