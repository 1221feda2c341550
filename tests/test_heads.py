"""Option wiring, NLL, heuristic values and gradients of agents.heads."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from agents.distributions.truncated import Gaussian, TruncatedGaussian
from agents.heads import (
    BOUNDS,
    DISTS,
    RESIDUALS,
    SIGMAS,
    UPPERS,
    GaussianHead,
    Head,
    TruncatedGaussianHead,
    make_head,
)

GAUSSIAN_DISTS = ("n", "tn")
GAUSSIAN_CONFIGS = [
    dict(zip(("dist", "sigma", "residual", "bound", "upper"), combo, strict=True))
    for combo in itertools.product(GAUSSIAN_DISTS, SIGMAS, RESIDUALS, BOUNDS, UPPERS)
]
CAT_CONFIGS = [
    {"dist": "cat", "sigma": sigma, "residual": "none", "bound": bound, "upper": "none", "max_cost": 7}
    for sigma, bound in itertools.product(SIGMAS, BOUNDS)
]
ALL_CONFIGS = GAUSSIAN_CONFIGS + CAT_CONFIGS


def batch(n_outputs: int, n: int = 6, seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    lower = torch.randint(0, 8, (n,), generator=g).float()
    return {
        "raw": torch.randn(n, n_outputs, generator=g) * 3,
        "lower": lower,
        "residual_base": lower + torch.randint(0, 4, (n,), generator=g).float(),
        "target": lower + torch.randint(0, 3, (n,), generator=g).float(),
    }


def test_factory_types_and_defaults() -> None:
    assert isinstance(make_head("n"), GaussianHead)
    assert isinstance(make_head("tn"), TruncatedGaussianHead)
    head = make_head("tn")
    assert head.config == {
        "dist": "tn",
        "sigma": "learn",
        "residual": "hff",
        "bound": "lmcut",
        "upper": "none",
    }
    assert head.n_outputs == 2 and make_head("n", sigma="fixed").n_outputs == 1
    assert head.lower_key == "lmcut" and head.residual_key == "hff"
    assert make_head("n", residual="none").residual_key is None


@pytest.mark.parametrize("config", ALL_CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_config_round_trip(config: dict[str, str]) -> None:
    head = make_head(**config)
    assert head.config == config
    again = make_head(**head.config)
    assert again == head and type(again) is type(head)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dist": "gauss"}, "dist='gauss'.*'n', 'tn'"),
        ({"dist": "n", "sigma": "learned"}, "sigma='learned'.*'learn', 'fixed'"),
        ({"dist": "tn", "residual": "hadd"}, "residual='hadd'.*'none', 'hff', 'lmcut'"),
        ({"dist": "tn", "bound": "hff"}, "bound='hff'.*'lmcut', 'hmax', 'blind'"),
        ({"dist": "tn", "upper": "1e5"}, "upper='1e5'.*'none', 'inf'"),
        ({"dist": "tn", "clip": True}, "unknown head option"),
    ],
)
def test_bad_options_raise(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make_head(**kwargs)


def test_fixed_sigma_and_gaussian_nll_is_squared_error() -> None:
    head = make_head("n", sigma="fixed", residual="none")
    b = batch(1)
    dist = head.distribution(b["raw"], b["lower"], None)
    assert isinstance(dist, Gaussian)
    torch.testing.assert_close(dist.stddev, torch.full((6,), 1 / math.sqrt(2)))
    nll = head.nll(b["raw"], b["target"], b["lower"], None)
    sq = (b["target"] - b["raw"][:, 0]) ** 2
    torch.testing.assert_close(nll - sq, torch.full_like(sq, 0.5 * math.log(math.pi)))


def test_learned_sigma_matches_paper_parametrisation() -> None:
    head = make_head("n", sigma="learn", residual="none")
    raw = torch.tensor([[0.0, -50.0], [0.0, 0.0], [0.0, 50.0]])
    _, sigma = head.mu_sigma(raw, None)
    torch.testing.assert_close(sigma, torch.tensor([0.1, 5.1, 10.1]))


def test_every_dist_has_a_head() -> None:
    assert set(DISTS) == {*GAUSSIAN_DISTS, "cat"}


@pytest.mark.parametrize("dist", GAUSSIAN_DISTS)
def test_residual_adds_heuristic(dist: str) -> None:
    b = batch(2)
    plain = make_head(dist, residual="none")
    res = make_head(dist, residual="hff")
    mu0, _ = plain.mu_sigma(b["raw"], None)
    mu1, _ = res.mu_sigma(b["raw"], b["residual_base"])
    torch.testing.assert_close(mu1, mu0 + b["residual_base"])
    with pytest.raises(ValueError, match="residual_base"):
        res.mu_sigma(b["raw"], None)
    with pytest.raises(ValueError, match="2 outputs"):
        res.mu_sigma(b["raw"][:, :1], b["residual_base"])


def test_tn_uses_open_lower_bound_and_missing_upper_bound() -> None:
    head = make_head("tn", residual="none")
    b = batch(2)
    dist = head.distribution(b["raw"], b["lower"], None)
    assert isinstance(dist, TruncatedGaussian)
    torch.testing.assert_close(dist.low, b["lower"] - 0.1)
    assert (dist.high == 1e5).all()
    # the target may equal the (admissible) lower bound: finite NLL thanks to the open bound
    nll = head.nll(b["raw"], b["lower"], b["lower"], None)
    assert torch.isfinite(nll).all()
    # and it matches the distribution built by hand
    mu, sigma = head.mu_sigma(b["raw"], None)
    ref = -TruncatedGaussian(mu, sigma, b["lower"] - 0.1, 1e5).log_prob(b["lower"])
    torch.testing.assert_close(nll, ref)
    # below the open bound the target is impossible
    assert torch.isinf(head.nll(b["raw"], b["lower"] - 0.2, b["lower"], None)).all()


def test_upper_bound_options() -> None:
    b = batch(2)
    inf_head = make_head("tn", residual="none", upper="inf")
    assert torch.isinf(inf_head.distribution(b["raw"], b["lower"], None).high).all()
    head = make_head("tn", residual="none")
    upper = b["lower"] + 3
    dist = head.distribution(b["raw"], b["lower"], None, upper=upper)
    torch.testing.assert_close(dist.high, upper + 0.1)
    assert (dist.mean <= upper + 0.1).all()
    with_inf = head.distribution(b["raw"], b["lower"], None, upper=torch.full((6,), math.inf))
    assert torch.isinf(with_inf.high).all() and torch.isfinite(with_inf.mean).all()


def test_gaussian_heuristic_and_clip() -> None:
    head = make_head("n", sigma="fixed", residual="lmcut")
    raw = torch.tensor([[-3.0], [0.5], [2.0]])
    lower = torch.tensor([4.0, 4.0, 4.0])
    base = torch.tensor([4.0, 4.0, 4.0])
    mu = base + raw[:, 0]
    torch.testing.assert_close(head.heuristic(raw, lower, base), mu)
    torch.testing.assert_close(head.heuristic(raw, lower, base, clip=True), torch.maximum(mu, lower))
    # clip uses the raw bound l, not the open l − 0.1
    assert head.heuristic(raw, lower, base, clip=True)[0] == 4.0
    upper = torch.tensor([9.0, 9.0, 5.0])
    torch.testing.assert_close(
        head.heuristic(raw, lower, base, upper, clip=True), torch.tensor([4.0, 4.5, 5.0])
    )


@pytest.mark.parametrize("sigma", SIGMAS)
def test_tn_heuristic_is_mean_and_respects_open_bound(sigma: str) -> None:
    head = make_head("tn", sigma=sigma, residual="none")
    n_out = head.n_outputs
    raw = torch.zeros(5, n_out)
    raw[:, 0] = torch.tensor([-1e4, -50.0, 0.0, 3.0, 50.0])
    if n_out == 2:
        raw[:, 1] = -20.0  # σ ≈ 0.1 (learned σ ∈ (0.1, 10.1))
    lower = torch.full((5,), 2.0)
    h = head.heuristic(raw, lower, None)
    mu, s = head.mu_sigma(raw, None)
    torch.testing.assert_close(h, TruncatedGaussian(mu, s, lower - 0.1, 1e5).mean)
    assert (h >= lower - 0.1).all() and torch.isfinite(h).all()
    # E[x] ≥ l where it holds mathematically (μ ≥ l) ...
    assert (h[3:] >= lower[3:]).all()
    # ... while for μ ≪ l the mean sits just above the open bound l − 0.1
    assert (h[:2] < lower[:2]).all()
    torch.testing.assert_close(head.heuristic(raw, lower, None, clip=True), torch.maximum(h, lower))


@pytest.mark.parametrize("config", GAUSSIAN_CONFIGS, ids=lambda c: "-".join(c.values()))
def test_gradients_flow_to_raw(config: dict[str, str]) -> None:
    head = make_head(**config)
    b = batch(head.n_outputs, n=16, seed=1)
    raw = b["raw"].clone().requires_grad_()
    base = b["residual_base"] if head.residual_key else None
    nll = head.nll(raw, b["target"], b["lower"], base)
    assert nll.shape == (16,) and torch.isfinite(nll).all()
    nll.mean().backward()
    assert torch.isfinite(raw.grad).all()
    assert (raw.grad[:, 0] != 0).any()
    if head.n_outputs == 2:
        assert (raw.grad[:, 1] != 0).any()
    raw.grad = None
    head.heuristic(raw, b["lower"], base).sum().backward()
    assert torch.isfinite(raw.grad).all() and (raw.grad[:, 0] != 0).any()


def test_tn_nll_prefers_mu_near_target() -> None:
    """Sanity: with the open bound, μ ≪ l no longer minimises the NLL of h* = l (appendix B.3)."""
    head = make_head("tn", sigma="fixed", residual="none")
    lower = torch.full((3,), 5.0)
    raw = torch.tensor([[-100.0], [5.0], [6.0]])
    nll = head.nll(raw, lower, lower, None)
    assert nll[1] < nll[0]


def test_dtype_and_broadcast() -> None:
    head = make_head("tn", residual="hff")
    raw = torch.zeros(4, 3, 2, dtype=torch.float64)
    out = head.heuristic(raw, torch.ones(4, 3), torch.full((4, 3), 2.0))
    assert out.shape == (4, 3) and out.dtype == torch.float64
    nll = head.nll(raw, torch.full((4, 3), 2.0), torch.ones(4, 3), 2.0)
    assert nll.shape == (4, 3)


def test_head_base_is_abstract() -> None:
    head = Head()
    with pytest.raises(NotImplementedError):
        head.distribution(torch.zeros(1, 2), torch.zeros(1), torch.zeros(1))
