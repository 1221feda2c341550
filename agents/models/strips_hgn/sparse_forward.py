r"""STRIPS-HGN's forward by sparse products: a batch of hypergraphs, and the search's batches.

The textbook formulation (`agents.models.strips_hgn.network.STRIPSHGN.reference_forward`) gathers
the latents of every incidence, scatters them onto the actions or facts, and concatenates the
inputs of each update; on CPU that took about 70% of a search's time (ferry 30/30:
``aten::index``, ``cat`` and ``scatter_add_``) and half of a training step's. The forwards here
compute the same function (to float rounding: their sums run in another order):

* an incidence sum is one product of a sparse incidence matrix (``[A, F]``) with the latents:
  ``Σ_{f ∈ add(a)} x_f`` for every action at once;
* the first linear map of each update is split by the blocks of its input (``W [x ‖ y] = W_x x +
  W_y y``), so that nothing is concatenated, the parts that no step changes (the encoders'
  outputs ``v⁰`` and ``e⁰``) are mapped once per call, and the hyperedge update maps facts'
  latents before summing them onto actions (``Σ_f W x_f = W Σ_f x_f``; there are fewer facts
  than incidences).

`forward_hypergraphs` takes a torch-geometric batch of `HypergraphData` (training: states of many
tasks), its incidence matrices built per batch from the tiled incidence lists, the per-graph sums
by membership matrices. `forward_task_states` takes a `TaskStates` batch (search: the successors of
one expansion, states of one task, which share every incidence and every action and global
feature): the latents are laid out ``[facts, states, hidden]`` and the task's incidence matrices,
built once per task, multiply all the states at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from agents.models.strips_hgn.data import HypergraphData

__all__ = ["TaskStates", "forward_hypergraphs", "forward_task_states", "incidence_matrices"]


@dataclass(frozen=True)
class TaskStates:
    """Several states of one task for `STRIPSHGN`: the task's shared hypergraph (built once per
    task and device, `agents.models.strips_hgn.hypergraph`) and the facts of each state.

    Attributes:
        in_state: ``[B, F]`` bool, which facts hold in each state.
        goal: ``[F]`` bool, the goal's facts.
        edge_attr: ``[A, 3]`` action features (cost, |pre|, |add|).
        u: ``[1, 2]`` global features.
        add_af, pre_af: ``[A, F]`` sparse incidence matrices (1 where fact f is an add effect,
            resp. a precondition, of action a); add_fa: ``[F, A]``, add_af's transpose.
    """

    in_state: Tensor
    goal: Tensor
    edge_attr: Tensor
    u: Tensor
    add_af: Tensor
    pre_af: Tensor
    add_fa: Tensor


def incidence_matrices(
    facts_pre: Tensor, edges_pre: Tensor, facts_add: Tensor, edges_add: Tensor, n_facts: int, n_actions: int
) -> tuple[Tensor, Tensor, Tensor]:
    """The sparse (coalesced COO) ``add_af [A, F]``, ``pre_af [A, F]`` and ``add_fa [F, A]`` of a
    task's incidence lists (one entry per (fact, action) pair, as in `HypergraphData`)."""

    add_af = _ones(edges_add, facts_add, (n_actions, n_facts))
    pre_af = _ones(edges_pre, facts_pre, (n_actions, n_facts))
    add_fa = _ones(facts_add, edges_add, (n_facts, n_actions))
    return add_af, pre_af, add_fa


def _ones(rows: Tensor, cols: Tensor, shape: tuple[int, int]) -> Tensor:
    """The sparse ``shape`` matrix with a 1 at every ``(rows[i], cols[i])`` (repeats add up)."""
    values = torch.ones(len(rows), device=rows.device)
    return torch.sparse_coo_tensor(torch.stack([rows, cols]), values, shape, check_invariants=True).coalesce()


def _spmm(matrix: Tensor, x: Tensor) -> Tensor:
    """``matrix [R, C] @ x [C, B, H]`` -> ``[R, B, H]``."""
    c, b, h = x.shape
    return torch.sparse.mm(matrix, x.reshape(c, b * h)).view(-1, b, h)


def _add_spmm_(z: Tensor, matrix: Tensor, x: Tensor) -> None:
    """``z [R, B, H] += matrix [R, C] @ x [C, B, H]``, in place (half the time of a product into a
    new tensor and an addition)."""
    c, b, h = x.shape
    z.view(-1, b * h).addmm_(matrix, x.reshape(c, b * h))


def _blocks(linear: nn.Linear, widths: list[int]) -> list[Tensor]:
    """The weight of ``linear`` split by the blocks of its input."""
    return list(torch.split(linear.weight, widths, dim=1))


def _mlp_tail(mlp: nn.Sequential, z: Tensor) -> Tensor:
    """STRIPS-HGN's block model after its first linear map's pre-activation ``z`` (a fresh tensor,
    overwritten: the activations run in place)."""
    first = F.leaky_relu(z, mlp[1].negative_slope, inplace=True)
    return F.leaky_relu(mlp[2](first), mlp[3].negative_slope, inplace=True)


def forward_task_states(model: nn.Module, batch: TaskStates) -> Tensor:
    """``model`` (a `STRIPSHGN`) on the states of ``batch``: ``[B, n_outputs]``."""
    dtype = model.output.weight.dtype
    n_states, n_facts = batch.in_state.shape
    matrices = [m.to(dtype) for m in (batch.add_af, batch.pre_af, batch.add_fa)]
    # encoders: v0 [F, B, H] from [in state, in goal]; e0 [A, H] and u0 [1, H], the same for every state
    x = torch.stack([batch.in_state.t(), batch.goal[:, None].expand(n_facts, n_states)], dim=-1)
    v0 = model.node_encoder(x.to(dtype))
    e0 = model.edge_encoder(batch.edge_attr.to(dtype))
    u0 = model.global_encoder(batch.u.to(dtype)).expand(n_states, model.hidden)
    per_state = lambda x: x.sum(0)  # noqa: E731
    return _process(model, v0, e0, u0, *matrices, pool_actions=per_state, pool_facts=per_state)


def forward_hypergraphs(model: nn.Module, data: HypergraphData) -> Tensor:
    """``model`` (a `STRIPSHGN`) on one `HypergraphData` or a torch-geometric batch of them:
    ``[n_graphs, n_outputs]``."""
    dtype = model.output.weight.dtype
    x, edge_attr, u = data.x.to(dtype), data.edge_attr.to(dtype), data.u.to(dtype)
    n_graphs, n_facts, n_actions = u.shape[0], x.shape[0], edge_attr.shape[0]
    device = x.device
    node_graph = (
        data.batch if data.batch is not None else torch.zeros(n_facts, dtype=torch.long, device=device)
    )
    counts = data.num_hyperedges
    if isinstance(counts, Tensor) and counts.dim() > 0:
        edge_graph = torch.repeat_interleave(torch.arange(n_graphs, device=device), counts.to(device))
    else:
        edge_graph = torch.zeros(n_actions, dtype=torch.long, device=device)
    matrices = incidence_matrices(
        data.pre_fact, data.pre_edge, data.add_fact, data.add_edge, n_facts, n_actions
    )
    facts_of = _ones(node_graph, torch.arange(n_facts, device=device), (n_graphs, n_facts)).to(dtype)
    actions_of = _ones(edge_graph, torch.arange(n_actions, device=device), (n_graphs, n_actions)).to(dtype)

    v0 = model.node_encoder(x)[:, None, :]  # [F, 1, H]: one "state" per graph's own facts
    e0 = model.edge_encoder(edge_attr)
    u0 = model.global_encoder(u)
    return _process(
        model,
        v0,
        e0,
        u0,
        *(m.to(dtype) for m in matrices),
        pool_actions=lambda x: torch.sparse.mm(actions_of, x[:, 0]),  # [A, 1, H] -> [G, H]
        pool_facts=lambda x: torch.sparse.mm(facts_of, x[:, 0]),
    )


def _process(
    model: nn.Module,
    v0: Tensor,
    e0: Tensor,
    u0: Tensor,
    add_af: Tensor,
    pre_af: Tensor,
    add_fa: Tensor,
    pool_actions: Callable[[Tensor], Tensor],
    pool_facts: Callable[[Tensor], Tensor],
) -> Tensor:
    """The process and decode parts of STRIPS-HGN on latents ``v0 [F, B, H]`` (fact-major), ``e0
    [A, H]`` (the same for the ``B`` columns), ``u0 [G, H]``; ``pool_actions`` and ``pool_facts``
    sum ``[A, B, H]`` and ``[F, B, H]`` latents per graph into ``[G, H]``."""
    h, core = model.hidden, model.core
    n_states = v0.shape[1]
    # the edge update's first map: [e0 | e | Σ_add v0 | Σ_add v | Σ_pre v0 | Σ_pre v]
    w_e0, w_e, w_r0, w_r, w_s0, w_s = _blocks(core.edge_model[0], [h] * 6)
    # the node update's first map: [received | v0 | v]
    w_rc, w_v0, w_v = _blocks(core.node_model[0], [h] * 3)
    edge_const = F.linear(e0, w_e0, core.edge_model[0].bias)[:, None, :]  # [A, 1, H]
    edge_from_e0 = F.linear(e0, w_e)[:, None, :]  # step 1's e is e0
    recv_v0 = F.linear(v0, w_r0).view(-1, h)  # [F * B, H]
    send_v0 = F.linear(v0, w_s0).view(-1, h)
    node_const = F.linear(v0, w_v0, core.node_model[0].bias).view(-1, h)

    v, e, u = v0, None, u0
    for _ in range(model.steps):
        if e is None:
            z = (edge_const + edge_from_e0).expand(-1, n_states, -1).contiguous()
        else:
            z = F.linear(e, w_e).add_(edge_const)
        _add_spmm_(z, add_af, torch.addmm(recv_v0, v.view(-1, h), w_r.t()).view_as(v))
        _add_spmm_(z, pre_af, torch.addmm(send_v0, v.view(-1, h), w_s.t()).view_as(v))
        e = _mlp_tail(core.edge_model, z)  # [A, B, H]
        z = torch.addmm(node_const, v.view(-1, h), w_v.t())
        z = z.addmm_(_spmm(add_fa, e).view(-1, h), w_rc.t()).view_as(v)
        v = _mlp_tail(core.node_model, z)  # [F, B, H]
        u = core.global_model(torch.cat([pool_actions(e), pool_facts(v), u0, u], dim=-1))
    return model.output(model.global_decoder(u))
