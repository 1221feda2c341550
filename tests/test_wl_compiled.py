"""The compiled WL heuristic (`agents.models.wl.compiled`) against its independent references:
wlplan's colour counts (`WLFeaturizer.embed`) on every state that whole searches evaluate, in the
order they evaluate them (the counts are incremental from state to state); the torch path's
values (`LearnedHeuristic`) for every head; the same values through the engine's
`state_values` overload; and the same GBFS, node for node, as the torch path.

On the IPC 2023 LT domains (skipped where ``../shared/ipc23-lt`` is absent) the default suite runs
short searches; ``-m slow`` runs 10,000-evaluation searches on more tasks and settings."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import torch
from numba import njit

import domains
from agents.apps.supervised import Args, train
from agents.errors import AgentError
from agents.evaluation import EvaluationConfig as EvalArgs
from agents.evaluation import evaluate
from agents.heads import make_head
from agents.learned_heuristic import LearnedHeuristic, TrainedModel, learned_heuristic
from agents.models.wl import WLFeaturizer, WLLinear
from agents.models.wl.compiled import CompiledWLHeuristic
from agents.models.wl.compiled.kernels import _sort
from agents.models.wl.compiled.symbolic import symbolic_args, symbolic_value
from agents.models.wl.compiled.table import colour_table
from agents.models.wl.features import PRUNING
from agents.models.wl.vocabulary import TaskAtoms, wl_domain
from pddlgym_sl import load_task
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.heuristics.compiled import state_values, value_on_expansion
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.search import gbfs
from tests.problems import states_of_a_search

IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"
IPC_DOMAINS = ("blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban",
               "spanner", "transport")  # fmt: skip
needs_ipc = pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")

# (iterations, pruning, multiset hash): GOOSE's default, the ECAI 2025 setting, and two more
SETTINGS = [(2, "none", False), (1, "i-mf", False), (2, "none", True), (3, "none", False)]


@cache
def _fitted(domain: str, iterations: int, pruning: str, multiset: bool) -> WLFeaturizer:
    """A colour table fitted on the states of GBFS + hFF plans of the domain's first training tasks
    (and their successors, so that some colours of the test tasks are seen and others not)."""
    domain_file = IPC / domain / "domain.pddl"
    data = []
    for problem in sorted((IPC / domain / "training").glob("*.pddl"))[:3]:
        task = load_task(domain_file, problem)
        result = gbfs(task, "hff", max_evaluations=2000)
        if result.solved:
            plan_states = task.states_to_array(task.validate_plan(result.plan))
            states = np.concatenate([plan_states, *(task.expand(s)[1] for s in plan_states[:3])])
            atoms = TaskAtoms(task)
            data.append((atoms.problem, atoms.states(states)))
    wl_dom, _ = wl_domain(str(domain_file))
    return WLFeaturizer.fit(wl_dom, data, iterations=iterations, pruning=pruning, multiset_hash=multiset)


def _model(featurizer: WLFeaturizer, head, seed: int = 0) -> TrainedModel:
    """A WL model with random standardisation and weights on `featurizer` (equality needs no
    training; random values send the searches anywhere)."""
    rng = np.random.default_rng(seed)
    n = featurizer.n_features
    std = np.where(rng.random(n) < 0.1, 0.0, rng.uniform(0.5, 3.0, n))  # some constant features
    model = WLLinear(head.n_outputs, featurizer.config, rng.uniform(0, 3, n).tolist(), std.tolist())
    with torch.no_grad():
        model.linear.weight.copy_(torch.as_tensor(rng.normal(0, 0.3, (head.n_outputs, n))))
        model.linear.bias.copy_(torch.as_tensor(rng.uniform(5, 15, head.n_outputs)))
    return TrainedModel(model.eval(), head, "wl", "test", Path("."))


def _recorded_search(task, heuristic: CompiledWLHeuristic, budget: int):
    """GBFS with `heuristic`, recording every evaluated state and its compiled counts in order."""
    states, counts = [], []

    def evaluate_batch(batch):
        states.append(batch.copy())
        counts.append(heuristic.counts(batch))
        return heuristic.batch(batch)

    result = gbfs(task, evaluate_batch, max_evaluations=budget)
    return result, np.concatenate(states), np.concatenate(counts)


def _check_counts(domain: str, setting: tuple, n_tasks: int, budget: int) -> int:
    featurizer = _fitted(domain, *setting)
    trained = _model(featurizer, make_head("n", sigma="fixed", residual="none", bound="hmax"))
    checked = 0
    for problem in sorted((IPC / domain / "testing-easy").glob("*.pddl"))[:n_tasks]:
        task = load_task(IPC / domain / "domain.pddl", problem)
        result, states, counts = _recorded_search(task, CompiledWLHeuristic(trained, task), budget)
        atoms = TaskAtoms(task)
        expected = featurizer.embed(atoms.problem, atoms.states(states))
        bad = np.flatnonzero((expected != counts).any(axis=1))
        assert not len(bad), f"{domain} {problem.name} {setting}: {len(bad)} of {len(states)} states differ"
        assert len(states) == result.evaluations
        checked += len(states)
    return checked


@needs_ipc
@pytest.mark.parametrize("domain", IPC_DOMAINS)
def test_counts_equal_wlplans_on_three_searches_per_domain(domain):
    assert _check_counts(domain, SETTINGS[0], n_tasks=3, budget=150) >= 3


@needs_ipc
@pytest.mark.parametrize(
    ("domain", "setting"),
    [
        ("rovers", SETTINGS[1]),
        ("childsnack", SETTINGS[2]),
        ("satellite", SETTINGS[3]),
        ("floortile", SETTINGS[1]),
    ],
)
def test_counts_equal_wlplans_with_other_settings(domain, setting):
    featurizer = _fitted(domain, *setting)
    assert featurizer.config["iterations"] <= setting[0]  # pruning may drop empty iterations
    assert featurizer.config["pruning"] == setting[1] and featurizer.config["multiset_hash"] == setting[2]
    _check_counts(domain, setting, n_tasks=2, budget=150)


@pytest.mark.slow
@needs_ipc
@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("domain", IPC_DOMAINS)
def test_counts_equal_wlplans_exhaustive(domain, setting):
    _check_counts(domain, setting, n_tasks=5, budget=10_000)


HEADS = {
    "n": dict(dist="n", sigma="fixed", residual="none", bound="hmax"),
    "n-learned-hff": dict(dist="n", sigma="learn", residual="hff", bound="lmcut"),
    "tn-learned-lmcut": dict(dist="tn", sigma="learn", residual="none", bound="lmcut"),
    "tn-fixed-hff-hmax": dict(dist="tn", sigma="fixed", residual="hff", bound="hmax"),
    "tn-inf-lmcut-blind": dict(dist="tn", sigma="learn", residual="lmcut", bound="blind", upper="inf"),
}


def _float32_scale(trained, task, states) -> np.ndarray:
    """Per state, the size of the torch path's float32 sums, ``|b| + sum_i |W_i z_i|`` over its
    outputs: torch's float32 rounding errs by a small multiple of 1e-7 of it (an exact ``μ`` may
    be 0 where the terms are hundreds), so "equal to 1e-6" is measured against it."""
    model = trained.model
    atoms = TaskAtoms(task)
    x = torch.from_numpy(model.featurizer.embed(atoms.problem, atoms.states(states))).double()
    with torch.no_grad():
        z = (x - model.mean.double()) * model.inv_std.double()
        weight, bias = model.linear.weight.double(), model.linear.bias.double()
        terms = (z[:, None, :] * weight[None]).abs().sum(-1) + bias.abs()
    return terms.sum(-1).numpy()


@needs_ipc
@pytest.mark.parametrize("clip", [False, True])
@pytest.mark.parametrize("head", list(HEADS))
def test_values_equal_the_torch_path(head, clip):
    domain = "floortile"  # dead ends (hmax = inf) among its states
    trained = _model(_fitted(domain, *SETTINGS[0]), make_head(**HEADS[head]), seed=1)
    task = load_task(IPC / domain / "domain.pddl", sorted((IPC / domain / "testing-easy").glob("*.pddl"))[2])
    states = states_of_a_search(task)
    tolerance = 1e-6 * _float32_scale(trained, task, states)
    for upper in (None, np.random.default_rng(0).uniform(0, 40, len(states))):  # anytime search passes u
        expected = LearnedHeuristic(trained, task, clip=clip).batch(states, upper)
        values = CompiledWLHeuristic(trained, task, clip=clip).batch(states, upper)
        assert np.array_equal(np.isinf(values), np.isinf(expected)) and np.isinf(values).any()
        live = np.isfinite(expected)
        assert np.all(np.abs(values[live] - expected[live]) <= tolerance[live])
        # both sum in float64 and round to float32 (`WLLinear` in eval mode): equal to the last bit
        # but where a float64 sum falls within its rounding error of a float32 rounding boundary
        assert np.mean(values[live] == expected[live]) > 0.99


@njit(cache=CACHE)
def _symbolic_loop(h, states, out):
    for i in range(states.shape[0]):
        out[i] = symbolic_value(h, states[i])


@needs_ipc
@pytest.mark.parametrize("bound", ["hmax", "lmcut"])
def test_relaxed_reachability_is_where_the_bounds_are_finite(bound):
    """N without clip needs its bound only to spot dead ends: relaxed reachability, exactly."""
    domain = "floortile"
    task = load_task(IPC / domain / "domain.pddl", sorted((IPC / domain / "testing-easy").glob("*.pddl"))[4])
    states = states_of_a_search(task, budget=2000)
    heuristic = make_heuristic(bound, task)
    expected = heuristic.batch(states)
    out = np.empty(len(states))
    _symbolic_loop(symbolic_args(heuristic, dead_ends_only=True), states, out)
    assert np.isinf(expected).any() and np.isfinite(expected).any()
    assert np.array_equal(np.isinf(out), np.isinf(expected)) and np.all(out[np.isfinite(out)] == 0)
    _symbolic_loop(symbolic_args(heuristic), states, out)  # the bound itself
    assert np.array_equal(out, expected)


@njit(cache=CACHE)
def _engine_loop(args, states, out):
    state_values(args, states, states.shape[0], out)


@njit(cache=CACHE)
def _dead_on_expansion_loop(args, states, out):
    for i in range(states.shape[0]):
        out[i] = value_on_expansion(args, states[i], 0.0) == np.inf


@needs_ipc
@pytest.mark.parametrize("head", ["n", "tn-learned-lmcut", "tn-fixed-hff-hmax"])
@pytest.mark.parametrize("domain", ["childsnack", "spanner"])
def test_the_engine_overload_gives_the_batch_values(head, domain):
    """Inside the engine, the values of `batch`; but N without clip leaves its dead ends (``inf``
    in `batch`) to `value_on_expansion`, which flags exactly those when they are expanded."""
    trained = _model(_fitted(domain, *SETTINGS[0]), make_head(**HEADS[head]), seed=2)
    task = load_task(IPC / domain / "domain.pddl", sorted((IPC / domain / "testing-easy").glob("*.pddl"))[3])
    states = states_of_a_search(task)
    out = np.empty(len(states))
    _engine_loop(CompiledWLHeuristic(trained, task).engine_args(), states, out)
    expected = CompiledWLHeuristic(trained, task).batch(states)
    dead = np.empty(len(states), dtype=np.bool_)
    _dead_on_expansion_loop(CompiledWLHeuristic(trained, task).engine_args(), states, dead)
    if head == "n":
        assert np.isfinite(out).all() and np.array_equal(dead, np.isinf(expected))
        assert np.array_equal(out[~dead], expected[~dead])
        if domain == "spanner":
            assert dead.any()  # the test met dead ends
    else:
        assert not dead.any() and np.array_equal(out, expected)
    # and one state at a time, in another order: the counts are the same whatever came before
    heuristic = CompiledWLHeuristic(trained, task)
    order = np.random.default_rng(0).permutation(len(states))[:50]
    assert np.array_equal([heuristic(states[i]) for i in order], expected[order])


def _same_search(task, trained, clip=False, budget=3000):
    torch_result = gbfs(task, LearnedHeuristic(trained, task, clip=clip), max_evaluations=budget)
    compiled_result = gbfs(task, CompiledWLHeuristic(trained, task, clip=clip), max_evaluations=budget)
    assert (compiled_result.status, compiled_result.evaluations, compiled_result.expansions) == (
        torch_result.status,
        torch_result.evaluations,
        torch_result.expansions,
    )
    assert compiled_result.plan == torch_result.plan
    return torch_result


@needs_ipc
def test_dead_ends_recognised_on_expansion_give_the_torch_paths_search():
    """N without clip tests relaxed reachability only on the states the engine expands; on spanner
    (a spanner left behind is lost) its searches are the torch path's, whose every evaluation tests
    it, node for node, and they do meet dead ends."""
    domain = "spanner"
    trained = _model(_fitted(domain, *SETTINGS[0]), make_head(**HEADS["n"]), seed=5)
    dead_ends = 0
    for problem in sorted((IPC / domain / "testing-easy").glob("*.pddl"))[:4]:
        task = load_task(IPC / domain / "domain.pddl", problem)
        torch_heuristic = LearnedHeuristic(trained, task)
        values = []

        def recorded(states, h=torch_heuristic, values=values):
            values.append(h.batch(states))
            return values[-1]

        torch_result = gbfs(task, recorded, max_evaluations=2000)
        compiled_result = gbfs(task, CompiledWLHeuristic(trained, task), max_evaluations=2000)
        assert (compiled_result.status, compiled_result.evaluations, compiled_result.expansions) == (
            torch_result.status,
            torch_result.evaluations,
            torch_result.expansions,
        )
        assert compiled_result.plan == torch_result.plan
        dead_ends += int(np.isinf(np.concatenate(values)).sum())
    assert dead_ends > 0


@needs_ipc
@pytest.mark.parametrize(
    "domain", [pytest.param("blocksworld", marks=pytest.mark.slow), "satellite", "transport"]
)
def test_gbfs_equals_the_torch_paths_gbfs(domain):
    for head, seed in (("n", 3), ("tn-learned-lmcut", 4)):
        trained = _model(_fitted(domain, *SETTINGS[0]), make_head(**HEADS[head]), seed=seed)
        for problem in sorted((IPC / domain / "testing-easy").glob("*.pddl"))[:2]:
            _same_search(load_task(IPC / domain / "domain.pddl", problem), trained, budget=1000)


@pytest.fixture(scope="module")
def wl_runs(tiny_dataset, tmp_path_factory):
    """Trained WL runs on the tiny ferry dataset: N (MSE), TN (learned σ, LM-cut bound), rank."""
    runs = tmp_path_factory.mktemp("wl-compiled-runs")
    common = {
        "data": tiny_dataset,
        "runs": runs,
        "val_every": 100,
        "batch_size": 32,
        "quiet": True,
        "steps": 300,
    }
    return {
        "n": train(Args(model="wl", dist="n", sigma="fixed", residual="none", bound="hmax", **common)),
        "tn": train(Args(model="wl", dist="tn", sigma="learn", residual="none", bound="lmcut", **common)),
        "rank": train(Args(model="wl", loss="rank", dist="n", sigma="fixed", residual="none", **common)),
    }


def _ferry_task(tmp_path, locations, cars, seed):
    path = tmp_path / f"p-{locations}-{cars}-{seed}.pddl"
    path.write_text(domains.generate_problem("ferry", seed=seed, locations=locations, cars=cars))
    return load_task(domains.domain_file("ferry"), path)


@pytest.mark.parametrize("run", ["n", "tn", "rank"])
def test_trained_runs_search_as_the_torch_path(wl_runs, run, tmp_path):
    trained = TrainedModel.load(wl_runs[run])
    solved = 0
    for locations, cars, seed in ((6, 4, 1), (8, 6, 2), (12, 10, 3)):
        task = _ferry_task(tmp_path, locations, cars, seed)
        solved += _same_search(task, trained, clip=run == "n").solved
    assert solved  # the plans were compared too
    assert isinstance(learned_heuristic(trained, task), CompiledWLHeuristic)
    assert isinstance(learned_heuristic(trained, task, compiled=False), LearnedHeuristic)


def test_evaluate_uses_the_compiled_heuristic_with_the_same_results(wl_runs, tmp_path):
    run = wl_runs["tn"]
    common = dict(run=run, split="test", problems=2, limit=500, quiet=True)
    compiled = evaluate(EvalArgs(**common, out=tmp_path / "compiled"))
    torch_path = evaluate(EvalArgs(**common, out=tmp_path / "torch", compiled=False))
    for name in ("solved", "mean_evaluations"):
        assert compiled[name] == torch_path[name]
    for f in (tmp_path / "compiled" / "problems").glob("*.json"):
        a, b = (json.loads(p.read_text()) for p in (f, tmp_path / "torch" / "problems" / f.name))
        assert (a["plan"], a["evaluations"], a["expansions"]) == (
            b["plan"],
            b["evaluations"],
            b["expansions"],
        )


def test_what_the_compiled_path_refuses(wl_runs, tmp_path):
    task = _ferry_task(tmp_path, 4, 3, 0)
    trained = TrainedModel.load(wl_runs["n"])
    categorical = TrainedModel(
        trained.model, make_head("cat", residual="none", max_cost=5), "wl", "ferry", Path(".")
    )
    with pytest.raises(AgentError, match="N and TN heads"):
        CompiledWLHeuristic(categorical, task)
    assert isinstance(learned_heuristic(categorical, task), LearnedHeuristic)
    with pytest.raises(AgentError, match=r"\(n, 1\) uint64"):
        CompiledWLHeuristic(trained, task).batch(np.zeros((2, 3), dtype=np.uint64))
    config = dict(trained.model.featurizer.config, feature_name="kwl2")
    with pytest.raises(AgentError, match="feature_name='kwl2'"):
        colour_table(config)
    with pytest.raises(AgentError, match="pruning='x'"):
        WLFeaturizer.fit(trained.model.featurizer.domain, [], pruning="x")


def test_pruning_options_are_wlplans():
    from wlplan.feature_generator import get_available_pruning_methods

    assert tuple(get_available_pruning_methods()) == PRUNING


def test_long_neighbour_lists_sort():
    @njit
    def run(a, start, n):
        _sort(a, start, n)

    for n in (0, 1, 5, 24, 25, 100):
        a = np.random.default_rng(n).integers(0, 50, 120)
        expected = np.concatenate([a[:3], np.sort(a[3 : 3 + n]), a[3 + n :]])
        run(a, 3, n)
        assert np.array_equal(a, expected)


# ------------------------------------------------------------------ the bound at search (issue 57)
def _mu_sigma(trained, task, states):
    """μ and σ of each state by the torch head (the reference the modes are checked against)."""
    from agents.models import model_spec

    raw = trained.model(model_spec("wl").search_inputs(task, torch.device("cpu"), None)(states)).double()
    base = None
    if trained.head.residual_key:
        base = torch.as_tensor(make_heuristic(trained.head.residual_key, task).batch(states))
    mu, sigma = trained.head.mu_sigma(raw, base)
    return mu.detach().numpy(), sigma.detach().numpy()


def test_the_screening_tolerance_is_the_inverse_mills_ratio_by_mpmath():
    """Where μ − l = k σ exactly, a TN's mean exceeds μ by `screen_tolerance(k)` σ (mpmath, 50
    digits), and by less the farther l is."""
    mpmath = pytest.importorskip("mpmath")
    from agents.models.wl.compiled.heuristic import SCREEN_SIGMAS, SCREEN_TOLERANCE, screen_tolerance

    mpmath.mp.dps = 50
    for k in (3.0, 4.5, SCREEN_SIGMAS, 8.0):
        a, b = mpmath.mpf(-k), mpmath.mpf(10**5)  # standardised ends (μ = 0, σ = 1, u = 1e5)
        z = mpmath.ncdf(b) - mpmath.ncdf(a)
        mean = (mpmath.npdf(a) - mpmath.npdf(b)) / z
        assert float(mean) == pytest.approx(screen_tolerance(k), rel=1e-12)
        farther = (mpmath.npdf(a - 1) - mpmath.npdf(b)) / (mpmath.ncdf(b) - mpmath.ncdf(a - 1))
        assert farther < mean
    assert 5e-9 < SCREEN_TOLERANCE < 7e-9


@needs_ipc
@pytest.mark.parametrize("head", ["tn-learned-lmcut", "tn-fixed-hff-hmax"])
@pytest.mark.parametrize("domain", ["blocksworld", "spanner", "transport"])
def test_screened_values_equal_the_unscreened_to_the_stated_tolerance(domain, head):
    """``search_bound="screened"`` skips the bound where ``μ − hFF ≥ k σ``: its values equal the
    unscreened TN mean within `SCREEN_TOLERANCE` σ on every state of a search, exactly where it
    computes the bound; and the sample has states of both kinds."""
    from agents.models.wl.compiled.heuristic import SCREEN_SIGMAS, SCREEN_TOLERANCE

    kinds = set()
    for seed in (6, 7):
        trained = _model(_fitted(domain, *SETTINGS[0]), make_head(**HEADS[head]), seed=seed)
        for problem in sorted((IPC / domain / "testing-easy").glob("*.pddl"))[:2]:
            task = load_task(IPC / domain / "domain.pddl", problem)
            states = states_of_a_search(task, budget=300)
            hff = make_heuristic("hff", task).batch(states)
            mu, sigma = _mu_sigma(trained, task, states)
            finite = np.isfinite(hff) & np.isfinite(mu)
            with torch.no_grad():  # μ about hFF + kσ: both sides of the screen
                trained.model.linear.bias[0] += float(np.median((hff + SCREEN_SIGMAS * sigma - mu)[finite]))
            mu, sigma = _mu_sigma(trained, task, states)
            with np.errstate(invalid="ignore"):  # inf - inf on dead ends
                skipped = mu - hff >= SCREEN_SIGMAS * sigma
            exact = CompiledWLHeuristic(trained, task).batch(states)
            screened = CompiledWLHeuristic(trained, task, search_bound="screened").batch(states)
            assert np.array_equal(np.isinf(exact), np.isinf(screened))
            finite = np.isfinite(exact)
            gap = np.abs(screened[finite] - exact[finite])
            assert (gap <= SCREEN_TOLERANCE * sigma[finite] + 1e-9 * np.abs(exact[finite])).all()
            assert np.array_equal(screened[finite & ~skipped], exact[finite & ~skipped])
            assert np.allclose(screened[finite & skipped], mu[finite & skipped], rtol=1e-6)
            kinds |= set(skipped[finite].tolist())
    assert kinds == {True, False}


@needs_ipc
@pytest.mark.parametrize("domain", ["blocksworld", "childsnack", "satellite", "spanner"])
def test_the_lazy_bound_expands_the_eager_searchs_states(domain):
    """``search_bound="lazy"`` computes the TN's bound when a state is about to be expanded (its
    provisional value μ is a lower bound of E[x]): the same search as the eager one (values are
    floats: no ties), with the same expansions and plan and the same number of evaluations, and
    LM-cut computed on far fewer states; ``batch`` gives the eager values."""
    trained = _model(_fitted(domain, *SETTINGS[0]), make_head(**HEADS["tn-learned-lmcut"]), seed=8)
    for problem in sorted((IPC / domain / "testing-easy").glob("*.pddl"))[:2]:
        task = load_task(IPC / domain / "domain.pddl", problem)
        eager = gbfs(task, CompiledWLHeuristic(trained, task), max_evaluations=1500)
        lazy_h = CompiledWLHeuristic(trained, task, search_bound="lazy")
        lazy = gbfs(task, lazy_h, max_evaluations=1500)
        assert (lazy.status, lazy.evaluations, lazy.expansions, lazy.plan) == (
            eager.status,
            eager.evaluations,
            eager.expansions,
            eager.plan,
        )
        states = states_of_a_search(task, budget=200)
        assert np.array_equal(lazy_h.batch(states), CompiledWLHeuristic(trained, task).batch(states))


@needs_ipc
def test_no_bound_at_search_gives_mu_and_finds_dead_ends_on_expansion():
    """``search_bound="none"``: the value of a TN head is μ (a finite value for a dead end, which
    the search closes when it would expand it, by relaxed reachability)."""
    domain = "spanner"
    trained = _model(_fitted(domain, *SETTINGS[0]), make_head(**HEADS["tn-learned-lmcut"]), seed=9)
    task = load_task(IPC / domain / "domain.pddl", sorted((IPC / domain / "testing-easy").glob("*.pddl"))[2])
    states = states_of_a_search(task)
    values = CompiledWLHeuristic(trained, task, search_bound="none").batch(states)
    mu, _ = _mu_sigma(trained, task, states)
    dead = np.isinf(make_heuristic("hmax", task).batch(states))
    assert dead.any() and np.isinf(values[dead]).all()
    assert np.allclose(values[~dead], mu[~dead], rtol=1e-6)
    args = CompiledWLHeuristic(trained, task, search_bound="none").engine_args()
    out = np.empty(len(states))
    _engine_loop(args, states, out)
    flagged = np.empty(len(states), dtype=np.bool_)
    _dead_on_expansion_loop(args, states, flagged)
    assert np.isfinite(out).all() and np.array_equal(flagged, dead)
    assert gbfs(
        task, CompiledWLHeuristic(trained, task, search_bound="none"), max_evaluations=3000
    ).evaluations


def test_an_unknown_search_bound_is_refused(wl_runs, tmp_path):
    trained = TrainedModel.load(wl_runs["tn"])
    with pytest.raises(AgentError, match="search_bound='lmcutt'"):
        CompiledWLHeuristic(trained, _ferry_task(tmp_path, 4, 2, 1), search_bound="lmcutt")
