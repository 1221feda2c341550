"""Environment observations to torch-geometric (`agents.graphs`): two problems of different sizes
batched, the action table mapped to node indices, the padded fast path equal to the list path,
and hypergraph observations equal to STRIPS-HGN's own hypergraphs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.graphs import batch, hypergraph_data, ilg_data, padded_ilg_batch
from pddlgym_sl.envs import PDDLEnv
from pddlgym_sl.task import parse_atom
from tests.test_envs import SIZES, train_files

SMALL, LARGE = SIZES[0], SIZES[2]  # 4 objects and 10 actions; 8 objects and 50 actions


@pytest.fixture(autouse=True)
def problem_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PDDLGYM_SL_CACHE", str(tmp_path / "cache"))


def observations(obs: str, steps: int = 3, **kwargs) -> tuple[PDDLEnv, list, list]:
    """The states reached by a few random steps on the small and the large problem, with tasks."""
    env = PDDLEnv(domain="ferry", problems=train_files(), obs=obs, action_table=True, heuristics=(), **kwargs)
    rng = np.random.default_rng(0)
    out, tasks = [], []
    for name in (SMALL, LARGE):
        o, info = env.reset(seed=0, options={"problem": name})
        for _ in range(steps):
            o, _, _, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        out.append((o, env.state))
        tasks.append(env.task)
    return env, out, tasks


def test_ilg_batch_of_two_sizes_maps_actions_to_their_object_nodes():
    env, obs, tasks = observations("ilg")
    graphs = [ilg_data(o) for o, _ in obs]
    b = batch(graphs)
    n_small = graphs[0].num_nodes
    assert b.num_graphs == 2 and b.num_nodes == n_small + graphs[1].num_nodes
    assert b.num_actions.tolist() == [10, 50] and b.action_schema.shape == (60,)
    assert torch.equal(b.x, torch.cat([g.x for g in graphs]))
    assert torch.equal(b.edge_index[:, graphs[0].num_edges :], graphs[1].edge_index + n_small)
    # Every argument of every action of both problems points at the object node of that name.
    for action, node, pos in zip(*b.action_args.tolist(), b.action_arg_pos.tolist(), strict=True):
        g = int(action >= 10)
        task, local_action, local_node = tasks[g], action - 10 * g, node - n_small * g
        assert b.batch[node] == g and b.x[node] == 0  # an object node of its own graph
        name, args = parse_atom(task.actions[local_action])
        assert task.objects[local_node] == args[pos]
        assert env.schema.actions[int(b.action_schema[action])] == name
    assert b.action_args.shape[1] == 2 * 60  # ferry's actions all have two arguments


def test_padded_batch_equals_the_list_batch():
    _, plain, _ = observations("ilg", steps=4)
    _, padded, _ = observations("ilg", steps=4, padded=True)
    expected = batch([ilg_data(o) for o, _ in plain])
    assert torch.equal(batch([ilg_data(o) for o, _ in padded]).x, expected.x)
    stacked = {k: torch.as_tensor(np.stack([o[k] for o, _ in padded])).float() for k in padded[0][0]}
    fast = padded_ilg_batch(stacked)  # as SB3 hands them over: float32 tensors
    for key in ("x", "edge_index", "edge_attr", "batch", "action_schema", "action_args", "action_arg_pos"):
        assert torch.equal(fast[key], expected[key]), key
    assert fast.num_actions.tolist() == expected.num_actions.tolist() == [10, 50]


def test_hypergraph_observations_are_strips_hgn_hypergraphs():
    from agents.models.strips_hgn import STRIPSHGN
    from agents.models.strips_hgn.hypergraph import hypergraph_data as hgn_hypergraph

    _, obs, tasks = observations("hypergraph")
    converted = [hypergraph_data(o) for o, _ in obs]
    reference = [hgn_hypergraph(task, [state])[0] for (_, state), task in zip(obs, tasks, strict=True)]
    for ours, ref in zip(converted, reference, strict=True):
        for key in ("x", "edge_attr", "u"):
            assert torch.equal(ours[key], ref[key]), key
        # the same incidences (the observation lists them in another order)
        for fact, edge in (("pre_fact", "pre_edge"), ("add_fact", "add_edge")):
            assert sorted(zip(ours[fact].tolist(), ours[edge].tolist(), strict=True)) == sorted(
                zip(ref[fact].tolist(), ref[edge].tolist(), strict=True)
            )
    torch.manual_seed(0)
    net = STRIPSHGN(n_outputs=2).eval()
    with torch.no_grad():
        assert torch.allclose(net(batch(converted)), net(batch(reference)), atol=1e-5)
    b = batch(converted)
    assert b.action_edge.tolist() == list(range(10 + 50))  # hyperedge of each action, shifted
    assert b.action_schema.shape == (60,)


def test_hypergraph_padded_equals_plain():
    _, plain, _ = observations("hypergraph")
    _, padded, _ = observations("hypergraph", padded=True)
    for (a, _), (b, _) in zip(plain, padded, strict=True):
        x, y = hypergraph_data(a), hypergraph_data(b)
        for key in ("x", "edge_attr", "pre_fact", "pre_edge", "add_fact", "add_edge", "action_schema"):
            assert torch.equal(x[key], y[key]), key


def test_graphs_refuse_other_observations():
    from agents.errors import AgentError

    env = PDDLEnv(domain="ferry", problems=train_files()[:1], obs="nlm", heuristics=())
    obs, _ = env.reset(seed=0)
    with pytest.raises(AgentError, match="expected a graph observation"):
        ilg_data(obs)
    with pytest.raises(AgentError, match="expected a graph observation"):
        ilg_data(np.zeros(3))
