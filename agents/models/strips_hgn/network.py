r"""STRIPS-HGN (Shen, Trevizan and Thiébaux, ICAPS 2020): a hypergraph network over the
delete relaxation of a planning task, in the encode-process-decode form of Battaglia et al. (2018).

The input is a `HypergraphData` (one per state; a batch is a disjoint union): nodes are facts with
features ``[in state, in goal]``, hyperedges are actions (senders = preconditions, receivers = add
effects) with features ``[cost, |pre|, |add|]`` (STRIPS-HGN's default "complex" hyperedge
features), and the global input is ``[log(1 + #facts), log(1 + #actions)]`` (the pddlsl authors fed
the raw counts; the log keeps the scale of large test problems in range).

One core step (`HypergraphNetworkBlock`), with ``x̃ = [x⁰ ‖ x]`` the encoder output concatenated to
the current latent (the "process" recursion of encode-process-decode):

.. math::
    e'_a = \phi_e\big(\tilde e_a,\ \textstyle\sum_{f \in add(a)} \tilde v_f,\
                      \sum_{f \in pre(a)} \tilde v_f\big)
    \qquad
    v'_f = \phi_v\big(\textstyle\sum_{a:\, f \in add(a)} e'_a,\ \tilde v_f\big)
    \qquad
    u' = \phi_u\big(\textstyle\sum_a e'_a,\ \sum_f v'_f,\ \tilde u\big)

Every ``φ`` (and every encoder / decoder) is STRIPS-HGN's two-layer MLP with LeakyReLU after both
layers. The output is a linear map of the decoded global latent after the last step.

`STRIPSHGN.forward` computes this by sparse incidence products
(`agents.models.strips_hgn.sparse_forward`: 1.7-1.9x the training steps, up to 4.8x a search's
evaluations); `STRIPSHGN.reference_forward` computes it as written here, for the tests.

Deviations from the reference code, both deliberate: (1) the sender / receiver node latents of a
hyperedge are summed instead of concatenated into zero-padded slots (the reference needs a
maximum number of preconditions and add effects per domain and depends on the order of the facts
inside an action; the sum is order-invariant and has no such limit); (2) the output layer has no
ReLU, because the distribution heads expect unconstrained raw values (a ReLU would forbid negative
residuals over h_FF).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.utils import scatter

from agents.errors import AgentError
from agents.models.strips_hgn.data import HypergraphData
from agents.models.strips_hgn.sparse_forward import TaskStates, forward_hypergraphs, forward_task_states

__all__ = ["STRIPSHGN", "HypergraphNetworkBlock"]


def _mlp(n_in: int, hidden: int) -> nn.Sequential:
    """STRIPS-HGN's block model: Linear -> LeakyReLU -> Linear -> LeakyReLU."""
    return nn.Sequential(nn.Linear(n_in, hidden), nn.LeakyReLU(), nn.Linear(hidden, hidden), nn.LeakyReLU())


def _reset(module: nn.Module) -> None:
    for m in module.modules():
        if isinstance(m, nn.Linear):
            m.reset_parameters()


class HypergraphNetworkBlock(nn.Module):
    r"""One full hypergraph-network update: hyperedges, then nodes, then globals.

    .. math::
        e'_a = \phi_e(e_a, \textstyle\sum_{f \in add(a)} v_f, \sum_{f \in pre(a)} v_f),\quad
        v'_f = \phi_v(\textstyle\sum_{a: f \in add(a)} e'_a, v_f),\quad
        u' = \phi_u(\textstyle\sum_a e'_a, \sum_f v'_f, u)

    Args:
        node_in, edge_in, global_in: input feature sizes.
        hidden: output size of the three updates.

    Shapes:
        - input: ``v [n_facts, node_in]``, ``e [n_actions, edge_in]``, ``u [n_graphs, global_in]``,
          incidence vectors ``pre_fact, pre_edge, add_fact, add_edge`` (long), ``node_graph
          [n_facts]``, ``edge_graph [n_actions]`` (graph of each fact / action).
        - output: ``(v' [n_facts, hidden], e' [n_actions, hidden], u' [n_graphs, hidden])``.
    """

    def __init__(self, node_in: int, edge_in: int, global_in: int, hidden: int):
        super().__init__()
        self.edge_model = _mlp(edge_in + 2 * node_in, hidden)
        self.node_model = _mlp(hidden + node_in, hidden)
        self.global_model = _mlp(2 * hidden + global_in, hidden)

    def reset_parameters(self) -> None:
        _reset(self)

    def forward(
        self,
        v: Tensor,
        e: Tensor,
        u: Tensor,
        pre_fact: Tensor,
        pre_edge: Tensor,
        add_fact: Tensor,
        add_edge: Tensor,
        node_graph: Tensor,
        edge_graph: Tensor,
    ) -> tuple[Tensor, Tensor, Tensor]:
        n_facts, n_actions, n_graphs = v.shape[0], e.shape[0], u.shape[0]
        receivers = scatter(v[add_fact], add_edge, dim=0, dim_size=n_actions, reduce="sum")
        senders = scatter(v[pre_fact], pre_edge, dim=0, dim_size=n_actions, reduce="sum")
        e = self.edge_model(torch.cat([e, receivers, senders], dim=-1))
        received = scatter(e[add_edge], add_fact, dim=0, dim_size=n_facts, reduce="sum")
        v = self.node_model(torch.cat([received, v], dim=-1))
        e_sum = scatter(e, edge_graph, dim=0, dim_size=n_graphs, reduce="sum")
        v_sum = scatter(v, node_graph, dim=0, dim_size=n_graphs, reduce="sum")
        u = self.global_model(torch.cat([e_sum, v_sum, u], dim=-1))
        return v, e, u


class STRIPSHGN(nn.Module):
    r"""STRIPS-HGN heuristic: a batch of delete-relaxation hypergraphs -> ``[n_graphs, n_outputs]``.

    Encode (independent MLPs), process (``steps`` applications of one shared
    `HypergraphNetworkBlock` on ``[latent⁰ ‖ latent]``), decode the global latent, linear output.
    Paper setting (appendix C.1): ``hidden=32, steps=4``.

    Args:
        n_outputs: raw outputs per graph (1: mu, 2: mu and sigma).
        node_in: fact features (2: in state, in goal).
        edge_in: action features (3: cost, #preconditions, #add effects).
        global_in: global features (2: log(1 + #facts), log(1 + #actions)).
        hidden: latent size.
        steps: message-passing (recursion) steps.

    Shapes:
        - input: `HypergraphData` or a torch-geometric batch of them (or a `TaskStates` batch of one
          task's states, `agents.models.strips_hgn.sparse_forward`), with ``x [n_facts, node_in]``,
          ``edge_attr [n_actions, edge_in]``, ``u [n_graphs, global_in]``, the incidence vectors,
          ``num_hyperedges`` (int or ``[n_graphs]``) and ``batch`` (``[n_facts]``, or None for one graph).
        - output: ``[n_graphs, n_outputs]``.
    """

    def __init__(
        self,
        n_outputs: int,
        node_in: int = 2,
        edge_in: int = 3,
        global_in: int = 2,
        hidden: int = 32,
        steps: int = 4,
    ):
        super().__init__()
        if min(n_outputs, hidden, steps) < 1:
            raise AgentError("n_outputs, hidden and steps must be positive")
        self.n_outputs, self.hidden, self.steps = n_outputs, hidden, steps
        self.node_encoder = _mlp(node_in, hidden)
        self.edge_encoder = _mlp(edge_in, hidden)
        self.global_encoder = _mlp(global_in, hidden)
        self.core = HypergraphNetworkBlock(2 * hidden, 2 * hidden, 2 * hidden, hidden)
        self.global_decoder = _mlp(hidden, hidden)
        self.output = nn.Linear(hidden, n_outputs)

    def reset_parameters(self) -> None:
        _reset(self)

    def forward(self, data: HypergraphData | TaskStates) -> Tensor:
        """The network by sparse incidence products (`agents.models.strips_hgn.sparse_forward`):
        on states of one task (search), or on a batch of hypergraphs."""
        if isinstance(data, TaskStates):
            return forward_task_states(self, data)
        return forward_hypergraphs(self, data)

    def reference_forward(self, data: HypergraphData) -> Tensor:
        """The same function as the module docstring writes it (`HypergraphNetworkBlock`: a gather
        and a scatter per incidence sum, concatenated inputs): the tests' reference for `forward`."""
        dtype = self.output.weight.dtype
        x, e0, u0 = data.x.to(dtype), data.edge_attr.to(dtype), data.u.to(dtype)
        n_graphs = u0.shape[0]
        node_graph = data.batch if data.batch is not None else x.new_zeros(x.shape[0], dtype=torch.long)
        n_edges = data.num_hyperedges
        if isinstance(n_edges, Tensor) and n_edges.dim() > 0:
            edge_graph = torch.repeat_interleave(
                torch.arange(n_graphs, device=x.device), n_edges.to(x.device)
            )
        else:
            edge_graph = x.new_zeros(e0.shape[0], dtype=torch.long)
        v0, e0, u0 = self.node_encoder(x), self.edge_encoder(e0), self.global_encoder(u0)
        v, e, u = v0, e0, u0
        for _ in range(self.steps):
            v, e, u = self.core(
                torch.cat([v0, v], dim=-1),
                torch.cat([e0, e], dim=-1),
                torch.cat([u0, u], dim=-1),
                data.pre_fact,
                data.pre_edge,
                data.add_fact,
                data.add_edge,
                node_graph,
                edge_graph,
            )
        return self.output(self.global_decoder(u))
