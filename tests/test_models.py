"""Models (`agents.models`) and their inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch
from torch_geometric.loader import DataLoader

from agents.models import MODELS, NLM, STRIPSHGN, HypergraphData, LinearRegression, make_model
from agents.models.nlm import masked_exists_forall, reference_nlm
from agents.models.nlm.fast.arity3_block import Block3
from agents.models.nlm.inputs import nlm_batch, nlm_channels
from agents.models.strips_hgn.hypergraph import hypergraph_data, state_fact_matrix, task_states
from pddlgym_sl import load_task
from pddlgym_sl.task import CompiledTask, parse_atom
from tests.problems import DOMAINS

FERRY_4_3 = """(define (problem ferry-4-3) (:domain ferry)
 (:objects l0 l1 l2 l3 c0 c1 c2)
 (:init (location l0) (location l1) (location l2) (location l3) (car c0) (car c1) (car c2)
  (not-eq l0 l1) (not-eq l1 l0) (not-eq l0 l2) (not-eq l2 l0) (not-eq l0 l3) (not-eq l3 l0)
  (not-eq l1 l2) (not-eq l2 l1) (not-eq l1 l3) (not-eq l3 l1) (not-eq l2 l3) (not-eq l3 l2)
  (empty-ferry) (at-ferry l2) (at c0 l0) (at c1 l1) (at c2 l3))
 (:goal (and (at c0 l3) (at c1 l0) (at c2 l3))))
"""

FERRY_CHANNELS = {0: 2, 1: 8, 2: 4}  # (empty-ferry) | car location at-ferry on | not-eq at


# ----------------------------------------------------------------------------- helpers
def encode_nlm(task: CompiledTask, states) -> dict[str, np.ndarray]:
    """Test-only NLM encoder: per arity ``[n, N..., 2P]``, channels [true (statics too), in goal]."""
    arity_of = dict(task.predicates)
    types = sorted({t for t in task.object_types.values() if t != "object"})
    arity_of.update({f"type:{t}": 1 for t in types})
    max_arity = max(arity_of.values())
    by_arity = {k: [p for p, a in arity_of.items() if a == k] for k in range(max_arity + 1)}
    chan = {p: (k, 2 * by_arity[k].index(p)) for k, ps in by_arity.items() for p in ps}
    obj = {o: i for i, o in enumerate(task.objects)}
    n, n_obj = len(states), len(task.objects)
    out = {k: np.zeros((n, *([n_obj] * k), 2 * len(ps)), dtype=np.int8) for k, ps in by_arity.items()}

    def put(rows, atom: tuple[str, tuple[str, ...]], offset: int) -> None:
        k, c = chan[atom[0]]
        out[k][(rows, *(obj[a] for a in atom[1]), c + offset)] = 1

    static = [parse_atom(a) for a in task.static_atoms]
    static += [(f"type:{t}", (o,)) for o, t in task.object_types.items() if t != "object"]
    for atom in static:
        put(slice(None), atom, 0)
    for g in task.goal:
        put(slice(None), task.fact_atoms[g], 1)
    for i, s in enumerate(states):
        for f in s.fact_indices():
            put(i, task.fact_atoms[f], 0)
    return {f"arity{k}": v for k, v in out.items()}


def some_states(task: CompiledTask, n: int, seed: int = 0) -> list:
    """``n`` states reached by random walks from the initial state."""
    rng = np.random.default_rng(seed)
    states, s = [task.init], task.init
    while len(states) < n:
        succ = task.successors(s)
        s = succ[rng.integers(len(succ))][1] if succ else task.init
        states.append(s)
    return states


def random_nlm_input(batch: int, n: int, channels: dict[int, int], seed: int = 0, n_real=None):
    """Continuous truth values (no ties), a mask with ``n_real[b]`` real objects, zero padding."""
    g = torch.Generator().manual_seed(seed)
    n_real = n_real if n_real is not None else [n] * batch
    mask = torch.zeros(batch, n, dtype=torch.bool)
    for b, m in enumerate(n_real):
        mask[b, :m] = True
    inp = {
        f"arity{k}": torch.rand(batch, *([n] * k), c, generator=g, dtype=torch.float64)
        for k, c in channels.items()
    }
    for k in channels:
        if k >= 1:
            full = mask.view(batch, *([1] * (k - 1)), n, 1)
            for j in range(k - 1):
                shape = [batch] + [1] * k + [1]
                shape[1 + j] = n
                full = full & mask.view(shape)
            inp[f"arity{k}"] = inp[f"arity{k}"] * full
    inp["object_mask"] = mask
    return inp


def permute_objects(inputs, perm: torch.Tensor):
    out = {}
    for key, x in inputs.items():
        if key == "object_mask":
            out[key] = x[:, perm]
        elif key != "arity0":
            k = int(key[5:])
            for axis in range(1, k + 1):
                x = x.index_select(axis, perm)
            out[key] = x
        else:
            out[key] = x
    return out


@pytest.fixture
def ferry_pair(write_problem):
    from tests.problems import FERRY_3_2

    domain = DOMAINS / "ferry" / "domain.pddl"
    small = load_task(domain, write_problem(FERRY_3_2, "small.pddl"))
    big = load_task(domain, write_problem(FERRY_4_3, "big.pddl"))
    return small, big


# ----------------------------------------------------------------------------- NLM
@pytest.mark.parametrize("exclude_self", [True, False])
@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("depth", [5, 3, 6])
def test_nlm_matches_textbook_reference(exclude_self, fused, depth):
    torch.manual_seed(0)
    model = NLM(FERRY_CHANNELS, n_outputs=2, depth=depth, exclude_self=exclude_self, fused=fused).double()
    inputs = random_nlm_input(3, 5, FERRY_CHANNELS, n_real=[5, 2, 4])
    out, ref = model(inputs), reference_nlm(model, inputs)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)
    params = list(model.parameters())
    g_out = torch.autograd.grad(out.sum(), params)
    g_ref = torch.autograd.grad(ref.sum(), params)
    for a, b in zip(g_out, g_ref, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("batch", "n_real", "hidden", "depth", "exclude_self"),
    [
        (1, [6], 8, 5, True),  # one state: nothing to split between threads
        (5, [6, 3, 1, 5, 2], 8, 5, True),  # padding, a lone object (empty reductions)
        (4, [4, 6, 5, 2], 5, 5, False),  # channels not a multiple of the SIMD width
        (3, [5, 4, 6], 8, 4, True),  # depth 4: the arity-3 block has no second-layer output
        (3, [5, 4, 6], 3, 6, True),  # depth 6: arity 3 kept full (generic path inside)
    ],
)
def test_nlm_fused_matches_generic(batch, n_real, hidden, depth, exclude_self):
    """The compiled CPU kernels compute the generic PyTorch path's function: outputs, parameter
    and input gradients, with and without autograd recording (float64)."""
    channels = {0: 2, 1: 6, 2: 3}
    torch.manual_seed(6)
    fused = NLM(channels, n_outputs=2, hidden=hidden, depth=depth, exclude_self=exclude_self, fused=True)
    fused = fused.double()
    generic = NLM(channels, n_outputs=2, hidden=hidden, depth=depth, exclude_self=exclude_self, fused=False)
    generic = generic.double()
    generic.load_state_dict(fused.state_dict())
    inputs = random_nlm_input(batch, 6, channels, seed=8, n_real=n_real)
    inputs = {k: v.requires_grad_() if v.is_floating_point() else v for k, v in inputs.items()}
    out, ref = fused(inputs), generic(inputs)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)
    with torch.no_grad():  # the inference plan (agents.models.nlm.fast.inference) where it applies
        torch.testing.assert_close(fused(inputs), out.detach(), rtol=0, atol=1e-12)
    w = torch.randn(out.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    wrt = [*fused.parameters(), inputs["arity1"], inputs["arity2"]]
    wrt_ref = [*generic.parameters(), inputs["arity1"], inputs["arity2"]]
    for a, b in zip(
        torch.autograd.grad((w * out).sum(), wrt), torch.autograd.grad((w * ref).sum(), wrt_ref), strict=True
    ):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    ("n_real", "depth", "channels"),
    [
        ([7], 5, FERRY_CHANNELS),
        ([7, 4], 5, FERRY_CHANNELS),
        ([5, 7, 1], 5, FERRY_CHANNELS),
        ([7, 3, 6, 7, 2, 5, 7, 4, 6, 1, 7, 5], 5, FERRY_CHANNELS),  # a slice per thread
        ([6, 4, 5], 3, FERRY_CHANNELS),
        ([6, 7], 5, {1: 3, 2: 5}),  # no nullary input (visitall)
    ],
)
def test_nlm_inference_plan_matches_training_path(n_real, depth, channels, dtype):
    """The gradient-free forward (`agents.models.nlm.fast.inference`, used under no_grad / inference_mode)
    computes the training path's function: batches of 1, 2, 3 and 12 states, padding with
    different object counts and garbage in the padding; rebuilt after the weights change."""
    from agents.models.nlm.fast.inference import InferencePlan

    torch.manual_seed(11)
    model = NLM(channels, n_outputs=2, depth=depth).to(dtype)
    assert InferencePlan.build(model) is not None
    inputs = random_nlm_input(len(n_real), 7, channels, seed=12, n_real=n_real)
    g = torch.Generator().manual_seed(3)
    for k in channels:  # garbage in the padding
        if k >= 1:
            x = inputs[f"arity{k}"]
            inputs[f"arity{k}"] = torch.where(x == 0, torch.rand(x.shape, generator=g, dtype=x.dtype), x)
    inputs = {k: v.to(dtype) if v.is_floating_point() else v for k, v in inputs.items()}
    tol = 1e-6 if dtype == torch.float32 else 1e-12
    for _ in range(2):
        ref = model(inputs)  # parameters require gradients: the autograd (training) path
        assert ref.requires_grad
        with torch.inference_mode():
            fast = model(inputs)
        torch.testing.assert_close(fast, ref.detach(), rtol=tol, atol=tol)
        with torch.no_grad():
            torch.testing.assert_close(model(inputs), fast, rtol=0, atol=0)
            for p in model.parameters():  # in place, as an optimiser step: the plan is rebuilt
                p.mul_(1.1)


def test_nlm_fused_float32_close_to_float64():
    """float32 on the compiled kernels stays within single precision of the float64 result."""
    torch.manual_seed(7)
    model = NLM(FERRY_CHANNELS, n_outputs=2)
    inputs = random_nlm_input(6, 7, FERRY_CHANNELS, seed=9, n_real=[7, 5, 6, 3, 7, 4])
    out32 = model({k: v.float() if v.is_floating_point() else v for k, v in inputs.items()})
    out64 = model.double()(inputs)
    torch.testing.assert_close(out32.double(), out64, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fused", [True, False])
def test_nlm_permutation_invariance(fused):
    torch.manual_seed(1)
    model = NLM(FERRY_CHANNELS, n_outputs=2, fused=fused).double()
    inputs = random_nlm_input(4, 6, FERRY_CHANNELS, seed=3, n_real=[6, 6, 5, 3])
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    torch.testing.assert_close(model(permute_objects(inputs, perm)), model(inputs), rtol=0, atol=1e-12)


@pytest.mark.parametrize("fused", [True, False])
def test_nlm_padding_invariance(fused):
    """Extra padded objects holding garbage (and garbage in padded rows) change nothing."""
    torch.manual_seed(2)
    model = NLM(FERRY_CHANNELS, n_outputs=2, fused=fused).double()
    inputs = random_nlm_input(3, 5, FERRY_CHANNELS, seed=4, n_real=[5, 3, 4])
    g = torch.Generator().manual_seed(9)
    padded = {"object_mask": torch.cat([inputs["object_mask"], torch.zeros(3, 3, dtype=torch.bool)], 1)}
    for k in FERRY_CHANNELS:
        x = inputs[f"arity{k}"]
        big = torch.randn(3, *([8] * k), x.shape[-1], generator=g, dtype=torch.float64) * 5
        if k:
            m = inputs["object_mask"]
            real = m.view(3, *([1] * (k - 1)), 5, 1)
            for j in range(k - 1):
                shape = [3] + [1] * k + [1]
                shape[1 + j] = 5
                real = real & m.view(shape)
            big[(slice(None), *([slice(0, 5)] * k))] = torch.where(
                real, x, big[(slice(None), *([slice(0, 5)] * k))]
            )
        else:
            big = x
        padded[f"arity{k}"] = big
    out, out_padded = model(inputs), model(padded)
    torch.testing.assert_close(out_padded, out, rtol=0, atol=1e-12)
    params = list(model.parameters())
    for a, b in zip(
        torch.autograd.grad(out.sum(), params), torch.autograd.grad(out_padded.sum(), params), strict=True
    ):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("fused", [True, False])
def test_nlm_batch_independence(fused):
    torch.manual_seed(3)
    model = NLM(FERRY_CHANNELS, n_outputs=1, fused=fused).double()
    inputs = random_nlm_input(4, 5, FERRY_CHANNELS, seed=5, n_real=[5, 4, 2, 5])
    out = model(inputs)
    for b in range(4):
        one = {k: v[b : b + 1] for k, v in inputs.items()}
        torch.testing.assert_close(model(one), out[b : b + 1], rtol=0, atol=1e-12)
    other = random_nlm_input(4, 5, FERRY_CHANNELS, seed=6)
    mixed = {k: torch.cat([inputs[k][:1], other[k][1:]]) for k in inputs}
    torch.testing.assert_close(model(mixed)[0], out[0], rtol=0, atol=1e-12)


def test_nlm_gradients_reach_every_parameter():
    torch.manual_seed(4)
    model = NLM(FERRY_CHANNELS, n_outputs=2)
    inputs = random_nlm_input(8, 6, FERRY_CHANNELS, seed=7)
    inputs = {k: (v.float() if v.is_floating_point() else v) for k, v in inputs.items()}
    model(inputs).square().sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
        assert p.grad.abs().sum() > 0, name


def test_nlm_structure_and_parameter_count():
    model = NLM(FERRY_CHANNELS, n_outputs=2)  # breadth 3, depth 5, hidden 8
    assert [sorted(layer.out_channels) for layer in model.layers] == [
        [0, 1, 2, 3],
        [0, 1, 2, 3],
        [0, 1, 2],
        [0, 1],
        [0],
    ]
    assert [layer.activation for layer in model.layers] == [True] * 4 + [False]

    def linear(r: int, c_exp: int, c_own: int, c_out: int = 8) -> int:
        return (np.prod(range(1, r + 1)) * (c_exp + c_own) + 1) * c_out

    first = linear(0, 0, 2 + 2 * 8) + linear(1, 2, 8 + 2 * 4) + linear(2, 8, 4) + linear(3, 4, 0)
    middle = linear(0, 0, 24) + linear(1, 8, 24) + linear(2, 8, 24) + linear(3, 8, 8)
    third = linear(0, 0, 24) + linear(1, 8, 24) + linear(2, 8, 24)
    fourth = linear(0, 0, 24) + linear(1, 8, 24)
    out = linear(0, 0, 24, c_out=2)
    n_params = sum(p.numel() for p in model.parameters())
    assert n_params == first + middle + third + fourth + out
    assert 2_000 < n_params < 10_000


def test_nlm_single_object_and_nullary_only_channels():
    """Empty reductions (one object, exclude_self) stay finite; arity-0 may have no channels."""
    model = NLM({0: 0, 1: 3, 2: 2}, n_outputs=2).double()
    inputs = random_nlm_input(2, 3, {1: 3, 2: 2}, n_real=[1, 3])
    inputs["arity0"] = torch.zeros(2, 0, dtype=torch.float64)
    out = model(inputs)
    assert out.shape == (2, 2) and torch.isfinite(out).all()
    torch.testing.assert_close(out, reference_nlm(model, inputs), rtol=0, atol=1e-12)


def test_masked_exists_forall_semantics():
    x = torch.tensor([[[0.2], [0.9], [0.5]]], dtype=torch.float64, requires_grad=True)  # [1, N=3, 1]
    valid = torch.tensor([[[True], [False], [True]]])
    ex, fa = masked_exists_forall(x, valid)
    assert ex.item() == 0.5 and fa.item() == 0.2
    (ex + 2 * fa).sum().backward()
    assert x.grad.flatten().tolist() == [2.0, 0.0, 1.0]
    ex, fa = masked_exists_forall(x, torch.zeros_like(valid))
    assert ex.item() == 0.0 and fa.item() == 1.0  # empty: exists is false, forall is true


@pytest.mark.parametrize("exclude_self", [True, False])
def test_block3_gradcheck(exclude_self):
    """The fused arity-3 block (odd channel counts: padded to 8 inside) against finite differences."""
    g = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64, requires_grad=True)

    x, x2 = rand(2, 4, 4, 3), rand(2, 4, 4, 4)
    w0, b0 = rand(5, 6 * 3), rand(5)  # C_t = 5 from C_x = 3
    w1, b1 = rand(7, 6 * (4 + 5)), rand(7)  # C_p = 7 from C_x' = 4 and T
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=torch.bool)

    def f(*args):
        return Block3.apply(*args, mask, exclude_self, True)

    assert torch.autograd.gradcheck(f, (x, w0, b0, x2, w1, b1), eps=1e-6, atol=1e-6)
    ex_t, _, _, _ = Block3.apply(x, w0, b0, None, None, None, mask, exclude_self, False)
    torch.testing.assert_close(ex_t, f(x, w0, b0, x2, w1, b1)[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_simd_sigmoid_accuracy(dtype):
    """The vectorised sigmoid of the kernels (`agents.models.nlm.fast.simd.vsigmoid`) against a
    float64 reference."""
    from numba import njit

    from agents.models.nlm.fast.simd import vload, vsigmoid, vstore

    @njit
    def sigmoid(x, out):
        for i in range(0, x.size, 8):
            vstore(out, i, vsigmoid(vload(x, i)))

    x = np.concatenate([np.linspace(-30, 30, 4000), [-1e4, -800, -100, -0.0, 0.0, 100, 800, 1e4]])
    x = x.astype(dtype)
    out = np.empty_like(x)
    sigmoid(x, out)
    ref = torch.sigmoid(torch.from_numpy(x.astype(np.float64))).numpy()
    eps = np.finfo(dtype).eps
    assert np.all(np.abs(out - ref) <= 3 * eps * np.maximum(ref, np.finfo(dtype).tiny) + np.finfo(dtype).tiny)
    assert out[-1] == 1.0 and out[-8] <= np.finfo(dtype).tiny and out[-5] == out[-4] == 0.5


def test_masked_max_min_kernel_matches_generic():
    """The compiled masked ∃/∀ (`agents.models.nlm.fast.exists_forall`) equals the generic one,
    values and gradients."""
    from agents.models.nlm.fast.exists_forall import masked_max_min

    g = torch.Generator().manual_seed(1)
    mask = torch.tensor([[1, 1, 1, 0, 1], [1, 0, 0, 0, 0]], dtype=torch.bool)
    for k, exclude_self in ((1, False), (2, True), (2, False)):
        x = torch.rand(2, *([5] * k), 3, generator=g, dtype=torch.float64, requires_grad=True)
        valid = mask.view(2, *([1] * (k - 1)), 5, 1)
        if k == 2 and exclude_self:
            valid = valid & ~torch.eye(5, dtype=torch.bool).unsqueeze(-1)
        ref = masked_exists_forall(x, valid, -1.0, 2.0)
        out = masked_max_min(x, mask, exclude_self, -1.0, 2.0)
        w = torch.rand(2, *ref[0].shape, generator=g, dtype=torch.float64)
        for a, b in zip(out, ref, strict=True):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
        ga = torch.autograd.grad((w[0] * out[0] + w[1] * out[1]).sum(), x)[0]
        gb = torch.autograd.grad((w[0] * ref[0] + w[1] * ref[1]).sum(), x)[0]
        torch.testing.assert_close(ga, gb, rtol=0, atol=0)


def test_nlm_on_encoded_ferry_states(ferry_pair):
    """Real encodings of two problems of different sizes, padded together by `nlm_batch`."""
    small, big = ferry_pair
    items = [encode_nlm(small, some_states(small, 5)), encode_nlm(big, some_states(big, 7, seed=1))]
    assert nlm_channels(items[0]) == FERRY_CHANNELS
    batch = nlm_batch(items, dtype=torch.float64)
    assert batch["arity2"].shape == (12, 7, 7, 4) and batch["arity1"].shape == (12, 7, 8)
    assert batch["object_mask"].sum(1).tolist() == [5] * 5 + [7] * 7
    torch.manual_seed(5)
    model = make_model("nlm", n_outputs=2, in_channels=nlm_channels(batch)).double()
    out = model(batch)
    assert out.shape == (12, 2)
    alone = torch.cat([model(nlm_batch([item], dtype=torch.float64)) for item in items])
    torch.testing.assert_close(out, alone, rtol=0, atol=1e-12)


def test_nlm_batch_pads_and_masks():
    items = [
        {
            "arity0": np.ones((2, 1), np.int8),
            "arity1": np.ones((2, 3, 2), np.int8),
            "arity2": np.ones((2, 3, 3, 1), np.int8),
        },
        {
            "arity0": np.zeros((1, 1), np.int8),
            "arity1": np.ones((1, 5, 2), np.int8),
            "arity2": np.ones((1, 5, 5, 1), np.int8),
        },
    ]
    batch = nlm_batch(items)
    assert batch["arity1"].dtype == torch.float32 and batch["object_mask"].dtype == torch.bool
    assert batch["arity2"].shape == (3, 5, 5, 1)
    assert batch["arity2"][:2].sum().item() == 2 * 9 and batch["arity2"][2].sum().item() == 25
    assert batch["object_mask"].tolist() == [[True] * 3 + [False] * 2] * 2 + [[True] * 5]
    with pytest.raises(ValueError, match="disagree"):
        nlm_batch(
            [
                items[0],
                {"arity0": np.ones((1, 2)), "arity1": np.ones((1, 3, 2)), "arity2": np.ones((1, 3, 3, 1))},
            ]
        )


# ----------------------------------------------------------------------------- STRIPS-HGN
def test_hypergraph_batching_offsets(ferry_pair):
    small, big = ferry_pair
    g1 = hypergraph_data(small, [small.init])[0]
    g2 = hypergraph_data(big, [big.init])[0]
    assert (g1.num_nodes, g1.num_hyperedges) == (small.n_facts, small.n_actions)
    assert g1.num_nodes != g2.num_nodes and g1.num_hyperedges != g2.num_hyperedges
    batch = Batch.from_data_list([g1, g2])
    f1, a1 = g1.num_nodes, g1.num_hyperedges
    for key, shift in (("pre_fact", f1), ("add_fact", f1), ("pre_edge", a1), ("add_edge", a1)):
        n1 = getattr(g1, key).numel()
        assert torch.equal(batch[key][:n1], g1[key]), key
        assert torch.equal(batch[key][n1:], g2[key] + shift), key
    assert batch.num_hyperedges.tolist() == [a1, g2.num_hyperedges]
    assert batch.x.shape == (f1 + g2.num_nodes, 2) and batch.u.shape == (2, 2)
    assert batch.edge_attr.shape == (a1 + g2.num_hyperedges, 3)
    assert batch.batch.tolist() == [0] * f1 + [1] * g2.num_nodes
    loaded = next(iter(DataLoader([g1, g2, g1], batch_size=3)))
    assert loaded.pre_edge.max().item() == 2 * a1 + g2.num_hyperedges - 1


def test_hypergraph_content(ferry_task):
    state = ferry_task.init
    g = hypergraph_data(ferry_task, [state])[0]
    in_state = set(state.fact_indices().tolist())
    assert g.x[:, 0].nonzero().flatten().tolist() == sorted(in_state)
    assert g.x[:, 1].nonzero().flatten().tolist() == ferry_task.goal.tolist()
    a = ferry_task.action_index("(board c0 l0)")
    pre = g.pre_fact[g.pre_edge == a].tolist()
    add = g.add_fact[g.add_edge == a].tolist()
    assert pre == ferry_task.pre_idx[ferry_task.pre_ptr[a] : ferry_task.pre_ptr[a + 1]].tolist()
    assert add == [ferry_task.fact_index("(on c0)")]
    assert g.edge_attr[a].tolist() == [1.0, len(pre), 1.0]
    # the static structure is shared, not copied, between the states of a task
    g2 = hypergraph_data(ferry_task, [state])[0]
    assert g2.pre_fact.data_ptr() == g.pre_fact.data_ptr()


def test_state_forms_agree(ferry_task):
    states = some_states(ferry_task, 4)
    ref = state_fact_matrix(ferry_task, states)
    assert np.array_equal(state_fact_matrix(ferry_task, ferry_task.states_to_array(states)), ref)
    assert np.array_equal(state_fact_matrix(ferry_task, [s.fact_indices() for s in states]), ref)


def test_hgn_batch_equals_single_graphs(ferry_task, gripper_task):
    torch.manual_seed(0)
    model = STRIPSHGN(n_outputs=2).double()
    graphs = hypergraph_data(ferry_task, some_states(ferry_task, 2), dtype=torch.float64)
    graphs += hypergraph_data(gripper_task, [gripper_task.init], dtype=torch.float64)
    out = model(Batch.from_data_list(graphs))
    assert out.shape == (3, 2)
    alone = torch.cat([model(g) for g in graphs])
    torch.testing.assert_close(out, alone, rtol=0, atol=1e-10)
    reference = model.reference_forward(Batch.from_data_list(graphs))  # gathers and scatters
    torch.testing.assert_close(out, reference, rtol=0, atol=1e-10)


def test_hgn_on_one_tasks_states_equals_the_reference_forward(ferry_task, gripper_task):
    """The search's fact-major forward (`TaskStates`: sparse incidence products, split first
    maps) computes the textbook forward's function on every state of a batch, in float64 to
    1e-10 and in float32 to rounding; states of one task in any number, the one-state batch too."""
    torch.manual_seed(0)
    model = STRIPSHGN(n_outputs=2)
    for task in (ferry_task, gripper_task):
        for n in (1, 4):
            states = some_states(task, n)
            words = task.states_to_array(states)
            general = model.reference_forward(Batch.from_data_list(hypergraph_data(task, states)))
            torch.testing.assert_close(model(task_states(task, words)), general, rtol=1e-5, atol=1e-6)
    model = model.double()
    states = some_states(ferry_task, 3)
    general = model.reference_forward(
        Batch.from_data_list(hypergraph_data(ferry_task, states, dtype=torch.float64))
    )
    fact_major = model(task_states(ferry_task, ferry_task.states_to_array(states)))
    torch.testing.assert_close(fact_major, general, rtol=0, atol=1e-10)
    assert task_states(ferry_task, states).add_af is task_states(ferry_task, states).add_af  # built once


def test_hgn_gradients_and_state_dependence(ferry_task):
    torch.manual_seed(1)
    model = STRIPSHGN(n_outputs=1)
    states = some_states(ferry_task, 4)
    graphs = Batch.from_data_list(hypergraph_data(ferry_task, states))
    model.reference_forward(graphs).sum().backward()
    reference = {name: p.grad.clone() for name, p in model.named_parameters()}
    for batch in (graphs, task_states(ferry_task, states)):  # the sparse forwards' gradients
        model.zero_grad()
        out = model(batch)
        assert out[:, 0].unique().numel() > 1  # different states, different outputs
        out.sum().backward()
        for name, p in model.named_parameters():
            assert p.grad is not None and p.grad.abs().sum() > 0, name
            torch.testing.assert_close(p.grad, reference[name], rtol=1e-4, atol=1e-6)
    assert 10_000 < sum(p.numel() for p in model.parameters()) < 100_000


# ----------------------------------------------------------------------------- linear, factory
def test_linear_regression():
    model = LinearRegression(n_outputs=2)
    out = model(torch.tensor([[3, 5, 7, 1.4]], dtype=torch.float64))
    assert out.shape == (1, 2) and out.dtype == torch.float32
    assert sum(p.numel() for p in model.parameters()) == 10


def test_make_model():
    assert set(MODELS) == {"nlm", "hgn", "linear", "mlp", "wl"}
    assert isinstance(make_model("linear", n_outputs=1), LinearRegression)
    assert isinstance(make_model("hgn", n_outputs=2), STRIPSHGN)
    nlm = make_model("nlm", n_outputs=1, in_channels=FERRY_CHANNELS)
    assert isinstance(nlm, NLM) and nlm.n_outputs == 1
    with pytest.raises(ValueError, match="unknown model 'gnn'") as refused:
        make_model("gnn", n_outputs=1)
    assert all(name in str(refused.value) for name in MODELS)  # the choices are named
    assert isinstance(hypergraph_data, object) and HypergraphData is not None


def _near_states(nb: int, n: int, cx: int, cx2: int, dtype, seed: int):
    """Arity-2 inputs ``X`` (0/1) and ``X'`` of ``nb`` states, each a few changes away from an
    earlier one (as a search's states are): flipped ``X`` pairs, and ``X'`` rows and columns of an
    object redrawn (what a change of its own atoms does to the second layer's input)."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.rand(nb, n, n, cx, generator=g) > 0.7).to(dtype)
    x2 = torch.rand(nb, n, n, cx2, generator=g, dtype=dtype)
    for b in range(1, nb):
        src = int(torch.randint(0, b, (1,), generator=g))
        x[b], x2[b] = x[src], x2[src]
        for _ in range(int(torch.randint(0, 3, (1,), generator=g))):
            u, v, c = (int(torch.randint(0, m, (1,), generator=g)) for m in (n, n, cx))
            x[b, u, v, c] = 1 - x[b, u, v, c]
        for _ in range(int(torch.randint(0, 3, (1,), generator=g))):
            o = int(torch.randint(0, n, (1,), generator=g)) if b % 2 else b % 4  # objects 0 and 2: often
            x2[b, o] = torch.rand(n, cx2, generator=g, dtype=dtype)
            x2[b, :, o] = torch.rand(n, cx2, generator=g, dtype=dtype)
    return x, x2


@pytest.mark.parametrize("exclude_self", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_block3_memo_is_exact_whatever_came_before(dtype, exclude_self):
    """`Block3Memo` (the inference path's arity-3 block): its outputs are the fused block's to
    rounding, and every state's outputs are bit for bit those of the state computed alone in full,
    whether it was derived from a reference (with ``X`` pairs recomputed on a base, rows of
    differing objects and rows whose reference extremes fall among them computed in full, special
    objects recomputed), made a reference on a reused, patched or new base, in another memo slot,
    or after evictions: a state's value does not depend on what was evaluated before it."""
    from agents.models.nlm.fast.arity3_block import block3_forward
    from agents.models.nlm.fast.arity3_memo import Block3Memo

    nb, n, cx, ct, cp, cx2 = 40, 11, 3, 6, 7, 5  # channel counts off the SIMD width: padded lanes
    x, x2 = _near_states(nb, n, cx, cx2, dtype, seed=5)
    g = torch.Generator().manual_seed(6)
    w0, b0 = torch.randn(ct, 6 * cx, generator=g, dtype=dtype), torch.randn(ct, generator=g, dtype=dtype)
    w1 = torch.randn(cp, 6 * (cx2 + ct), generator=g, dtype=dtype)
    b1 = torch.randn(cp, generator=g, dtype=dtype)
    mask = torch.ones(nb, n, dtype=torch.bool)
    mask[4, 7:] = False  # padding: a state of another size
    mask[9, :] = False  # no objects at all
    weights = [t.numpy() for t in (w0, b0, w1, b1)]
    xn, x2n, mk = x.numpy(), x2.numpy(), mask.numpy()
    memo = Block3Memo(*weights, max_touched=4, base_touched=1, incremental_from=0)
    out = [a[..., :c] for a, c in zip(memo(xn, x2n, mk, exclude_self), (ct, ct, cp, cp), strict=True)]
    counts = memo.counts
    assert counts["derived"] > 10 and counts["reference"] > 3 and counts["full_rows"] > 0
    assert counts["special"] > 0  # references leaving objects often in D out of their extremes
    assert counts["base_full"] >= 1 and counts["base_patched"] >= 1
    ref = block3_forward(x, w0, b0, x2, w1, b1, mask, exclude_self, False)[0]
    tol = 1e-6 if dtype == torch.float32 else 1e-12
    for a, r in zip(out, ref, strict=True):
        torch.testing.assert_close(torch.from_numpy(np.ascontiguousarray(a)), r, rtol=tol, atol=tol)
    t_only = Block3Memo(*weights[:2])(xn, None, mk, exclude_self)  # no second layer: ∃T and ∀T
    for a, t in zip(out, t_only, strict=False):
        np.testing.assert_array_equal(a, t[..., :ct])
    slots = np.arange(nb) % 3  # three interleaved searches, one slot each
    tiny = Block3Memo(*weights, max_entries=3, budget_bytes=1, incremental_from=0)  # evicts every base
    in_slots = tiny(xn, x2n, mk, exclude_self, slots)
    plain = Block3Memo(*weights)(xn, x2n, mk, exclude_self)  # few objects: full passes from bases
    for a, p in zip(out, plain, strict=True):
        np.testing.assert_array_equal(a, p[..., : a.shape[-1]])
    for b in range(nb):
        rows = slice(b, b + 1)
        alone = Block3Memo(*weights)(xn[rows], x2n[rows], mk[rows], exclude_self)
        for a, f, t in zip(out, alone, in_slots, strict=True):
            np.testing.assert_array_equal(a[rows], f[..., : a.shape[-1]])
            np.testing.assert_array_equal(a[rows], t[rows][..., : a.shape[-1]])
    assert len(tiny) <= 3 + 2 * tiny.candidates * 3


def test_inline_kernels_keep_the_work_on_the_calling_thread():
    """Inside `inline_kernels` the kernels' batch slices run on the calling thread (the search's
    bounds use the other core), and the outputs are the same as with the pool."""
    import threading

    from agents.models.nlm.fast.threads import inline_kernels, kernel_threads, parallel, split_batch

    mask = np.ones((64, 30), bool)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert kernel_threads() == 2 and len(split_batch(mask, 2)) > 1
        with inline_kernels():
            assert kernel_threads() == 1 and split_batch(mask, 2) == [(0, 64)]
            seen: list[threading.Thread] = []
            parallel([lambda: seen.append(threading.current_thread())] * 3)
            assert seen == [threading.current_thread()] * 3
            torch.manual_seed(2)
            model = NLM(FERRY_CHANNELS, n_outputs=2)
            inputs = random_nlm_input(32, 24, FERRY_CHANNELS, seed=4, n_real=[24, 20] * 16)
            assert len(split_batch(inputs["object_mask"].bool().numpy(), 2)) == 1
            with torch.inference_mode():
                inline = model(inputs)
        assert kernel_threads() == 2 and len(split_batch(inputs["object_mask"].bool().numpy(), 2)) > 1
        with torch.inference_mode():
            torch.testing.assert_close(model(inputs), inline, rtol=0, atol=0)
    finally:
        torch.set_num_threads(threads)
