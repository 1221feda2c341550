"""Confidence of the heads: the unit-bucket probability of N / TN against scipy and mpmath, and
the categorical head (cross-entropy, argmax, max probability)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch
from scipy import stats

from agents.distributions.interval import log_normal_interval, normal_bucket, truncated_normal_bucket
from agents.heads import CategoricalHead, make_head


def _random_tn_params(n: int, seed: int) -> tuple[np.ndarray, ...]:
    """(μ, σ, l, u, center): μ up to 60 σ outside [l, u], narrow and wide supports, some u = ∞."""
    rng = np.random.default_rng(seed)
    low = rng.uniform(-5, 20, n)
    high = low + rng.choice([0.05, 0.5, 3.0, 40.0], n)
    high[rng.random(n) < 0.2] = np.inf
    sigma = np.exp(rng.uniform(math.log(0.1), math.log(10.1), n))
    mu = low + sigma * rng.uniform(-60, 60, n)
    center = low + rng.uniform(-1, 5, n)
    return mu, sigma, low, high, center


def test_log_normal_interval_against_mpmath():
    rng = np.random.default_rng(0)
    a = rng.uniform(-40, 40, 80)
    b = a + np.exp(rng.uniform(-8, 4, 80))
    got = log_normal_interval(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    with mpmath.workdps(400):  # enough digits for 1 − Φ(40) ≈ 1e−350
        ref = [float(mpmath.log(mpmath.ncdf(y) - mpmath.ncdf(x))) for x, y in zip(a, b, strict=True)]
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    inf = torch.tensor([math.inf], dtype=torch.float64)
    assert log_normal_interval(-inf, inf).item() == 0.0
    assert log_normal_interval(torch.tensor([1.0]), torch.tensor([1.0])).item() == -math.inf


def test_normal_bucket_against_scipy():
    mu, sigma, _, _, center = _random_tn_params(500, seed=1)
    got = normal_bucket(*(torch.from_numpy(x) for x in (mu, sigma, center))).numpy()
    ref = stats.norm.cdf(center + 0.5, mu, sigma) - stats.norm.cdf(center - 0.5, mu, sigma)
    np.testing.assert_allclose(got, ref, rtol=1e-7, atol=1e-12)


def test_truncated_normal_bucket_against_scipy():
    mu, sigma, low, high, center = _random_tn_params(2000, seed=2)
    got = truncated_normal_bucket(*(torch.from_numpy(x) for x in (mu, sigma, low, high, center))).numpy()
    dist = stats.truncnorm((low - mu) / sigma, (high - mu) / sigma, loc=mu, scale=sigma)
    a, b = np.maximum(center - 0.5, low), np.minimum(center + 0.5, high)
    ref = np.where(a < b, dist.cdf(np.minimum(b, high)) - dist.cdf(a), 0.0)
    assert np.isfinite(got).all() and ((got >= 0) & (got <= 1)).all()
    # scipy's cdf differences lose digits where the bucket holds nearly all the mass: absolute error
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dist", ["n", "tn"])
def test_head_confidence_is_the_bucket_around_the_search_value(dist):
    head = make_head(dist, residual="none")
    g = torch.Generator().manual_seed(3)
    raw = torch.randn(300, 2, generator=g, dtype=torch.float64) * 4
    lower = torch.randint(0, 10, (300,), generator=g).double()
    conf = head.confidence(raw, lower, None).numpy()
    mu, sigma = (t.numpy() for t in head.mu_sigma(raw, None))
    if dist == "n":
        ref = 2 * stats.norm.cdf(0.5 / sigma) - 1
    else:
        lo = lower.numpy() - 0.1
        tn = stats.truncnorm((lo - mu) / sigma, (1e5 - mu) / sigma, loc=mu, scale=sigma)
        center = tn.mean()
        ref = tn.cdf(center + 0.5) - tn.cdf(np.maximum(center - 0.5, lo))
    np.testing.assert_allclose(conf, ref, rtol=1e-6, atol=1e-9)
    # the numpy path used by search gives the same numbers
    values = head.heuristic_values(raw, lower.numpy(), None)
    np.testing.assert_allclose(head.confidence_values(raw, lower.numpy(), None, values), conf, rtol=1e-9)


def test_small_sigma_means_confident():
    head = make_head("n", residual="none")
    raw = torch.tensor([[3.0, -20.0], [3.0, 0.0], [3.0, 20.0]])  # σ ≈ 0.1, 5.1, 10.1
    conf = head.confidence(raw, torch.zeros(3), None)
    assert conf[0] > 0.99 and conf[0] > conf[1] > conf[2] > 0


def test_categorical_head():
    head = make_head("cat", residual="none", max_cost=4)
    assert isinstance(head, CategoricalHead) and head.n_outputs == 5
    assert make_head(**head.config) == head and head.config["max_cost"] == 4
    raw = torch.tensor([[0.0, 3.0, 1.0, 0.0, 0.0], [5.0, 0.0, 0.0, 0.0, 9.0]])
    p = torch.softmax(raw, -1)
    lower = torch.tensor([0.0, 0.0])
    torch.testing.assert_close(head.heuristic(raw, lower, None), torch.tensor([1.0, 4.0]))
    torch.testing.assert_close(head.confidence(raw, lower, None), p.max(-1).values)
    # clipping at the bound moves the estimate and its confidence to the clipped cost
    clipped = torch.tensor([2.0, 0.0])
    torch.testing.assert_close(head.heuristic(raw, clipped, None, clip=True), torch.tensor([2.0, 4.0]))
    torch.testing.assert_close(
        head.confidence(raw, clipped, None, clip=True), torch.stack([p[0, 2], p[1, 4]])
    )
    # cross-entropy; a target above H counts as H
    target = torch.tensor([1.0, 7.0])
    torch.testing.assert_close(
        head.nll(raw, target, lower, None), -torch.log(torch.stack([p[0, 1], p[1, 4]]))
    )
    mean, std = head.mu_sigma(raw, None)
    costs = torch.arange(5.0)
    torch.testing.assert_close(mean, (p * costs).sum(-1))
    torch.testing.assert_close(std, ((p * costs**2).sum(-1) - mean**2).sqrt(), atol=1e-5, rtol=1e-5)
    raw_grad = raw.clone().requires_grad_()
    head.nll(raw_grad, target, lower, None).sum().backward()
    assert torch.isfinite(raw_grad.grad).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"residual": "hff", "max_cost": 3}, "residual='none'"), ({"residual": "none"}, "max_cost")],
)
def test_categorical_head_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_head("cat", **kwargs)
    with pytest.raises(ValueError, match="4 outputs"):
        make_head("cat", residual="none", max_cost=3).heuristic(torch.zeros(2, 3), torch.zeros(2), None)
