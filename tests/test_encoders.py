"""Observation encoders on a hand-written ferry problem: exact nodes, edges, labels and tensors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from gymnasium import spaces

from pddlgym_sl.envs.encoders import (
    ENCODERS,
    FlatEncoder,
    HypergraphEncoder,
    ILGEncoder,
    NLMEncoder,
    Schema,
    make_encoder,
)
from pddlgym_sl.envs.encoders.ilg import decode_label
from pddlgym_sl.envs.encoders.nlm import encode_batch as nlm_encode_batch
from pddlgym_sl.envs.encoders.schema import batch_bits
from pddlgym_sl.errors import ConfigError, PDDLError
from pddlgym_sl.pddl import parse_domain_string
from tests.problems import DOMAINS

FERRY_DOMAIN = DOMAINS / "ferry" / "domain.pddl"
OBJECTS = ["c0", "c1", "l0", "l1", "l2"]  # task.objects: sorted
STATIC = [
    "(car c0)",
    "(car c1)",
    "(location l0)",
    "(location l1)",
    "(location l2)",
    "(not-eq l0 l1)",
    "(not-eq l0 l2)",
    "(not-eq l1 l0)",
    "(not-eq l1 l2)",
    "(not-eq l2 l0)",
    "(not-eq l2 l1)",
]
ACHIEVED, UNACHIEVED, NON_GOAL = 0, 1, 2


@pytest.fixture
def schema() -> Schema:
    return Schema.from_domain_file(FERRY_DOMAIN)


def label(schema: Schema, pred: str, status: int) -> int:
    return 1 + 3 * schema.index[pred] + status


def expected_edges(names: list[str]) -> set[tuple[int, int, int]]:
    """(atom node, object node, position) for every argument of every atom node in `names`."""
    out = set()
    for i, name in enumerate(names):
        if name.startswith("("):
            for pos, obj in enumerate(name.strip("()").split()[1:]):
                out.add((i, OBJECTS.index(obj), pos))
    return out


def graph_edges(graph) -> set[tuple[int, int, int]]:
    return {(int(s), int(d), int(e)) for (s, d), e in zip(graph.edge_links, graph.edges, strict=True)}


def test_schema_is_the_domain_vocabulary(schema):
    assert schema.predicates == ("not-eq", "car", "location", "at-ferry", "at", "empty-ferry", "on")
    assert schema.arities == (2, 1, 1, 1, 2, 0, 1)
    assert schema.by_arity == {0: (5,), 1: (1, 2, 3, 6), 2: (0, 4)}
    assert schema.type_predicates == {}


def test_schema_adds_one_unary_predicate_per_non_root_type():
    domain = parse_domain_string(
        """(define (domain typed) (:requirements :typing)
          (:types vehicle place - object truck - vehicle)
          (:predicates (at ?v - vehicle ?p - place) (place ?p - place) (truck ?x))
          (:action go :parameters (?v - truck ?a ?b - place)
            :precondition (at ?v ?a) :effect (and (at ?v ?b) (not (at ?v ?a)))))"""
    )
    schema = Schema.from_domain(domain)
    # `place` reuses the unary predicate of that name; the others are appended in type order.
    assert schema.predicates[:3] == ("at", "place", "truck")
    assert set(schema.predicates[3:]) == {"vehicle"}
    assert schema.type_predicates == {"vehicle": "vehicle", "place": "place", "truck": "truck"}
    assert set(schema.type_closure["truck"]) == {"truck", "vehicle"}
    assert schema.type_closure["object"] == ()


def test_ilg_initial_state(schema, ferry_task):
    enc = ILGEncoder(schema, ferry_task)
    g = enc.encode(ferry_task.init)
    names = [
        *OBJECTS,
        *STATIC,
        "(at c0 l0)",
        "(at c0 l2)",
        "(at c1 l0)",
        "(at c1 l1)",
        "(at-ferry l0)",
        "(empty-ferry)",
    ]
    labels = [0] * 5
    labels += [label(schema, "car", NON_GOAL)] * 2 + [label(schema, "location", NON_GOAL)] * 3
    labels += [label(schema, "not-eq", NON_GOAL)] * 6
    labels += [
        label(schema, "at", NON_GOAL),  # (at c0 l0): true, not a goal
        label(schema, "at", UNACHIEVED),  # (at c0 l2): goal, false
        label(schema, "at", UNACHIEVED),  # (at c1 l0): goal, false
        label(schema, "at", NON_GOAL),
        label(schema, "at-ferry", NON_GOAL),
        label(schema, "empty-ferry", NON_GOAL),
    ]
    # The numbering itself: 1 + 3 * predicate index + status.
    assert labels[16:] == [15, 14, 14, 15, 12, 18]
    assert enc.node_names(ferry_task.init) == names
    assert g.nodes.tolist() == labels
    assert graph_edges(g) == expected_edges(names)
    assert len(g.edges) == len(expected_edges(names))  # no duplicates
    assert g.nodes.dtype == np.int64 and g.edges.dtype == np.int64 and g.edge_links.dtype == np.int64
    assert g in enc.space
    assert enc.space.node_space == spaces.Discrete(1 + 3 * 7)
    assert enc.space.edge_space == spaces.Discrete(2)


def test_ilg_after_board_and_with_an_achieved_goal(schema, ferry_task):
    enc = ILGEncoder(schema, ferry_task)
    s1 = ferry_task.successor(ferry_task.init, "(board c0 l0)")
    g = enc.encode(s1)
    names = [*OBJECTS, *STATIC, "(at c0 l2)", "(at c1 l0)", "(at c1 l1)", "(at-ferry l0)", "(on c0)"]
    assert enc.node_names(s1) == names
    assert g.nodes[16:].tolist() == [
        label(schema, "at", UNACHIEVED),
        label(schema, "at", UNACHIEVED),
        label(schema, "at", NON_GOAL),
        label(schema, "at-ferry", NON_GOAL),
        label(schema, "on", NON_GOAL),
    ]
    assert graph_edges(g) == expected_edges(names)

    s2 = ferry_task.state(["(at c1 l0)", "(at c0 l0)", "(at-ferry l2)"])
    g2 = enc.encode(s2.words)  # raw words work too
    assert enc.node_names(s2)[16:] == ["(at c0 l0)", "(at c0 l2)", "(at c1 l0)", "(at-ferry l2)"]
    assert g2.nodes[16:].tolist() == [
        label(schema, "at", NON_GOAL),
        label(schema, "at", UNACHIEVED),
        label(schema, "at", ACHIEVED),
        label(schema, "at-ferry", NON_GOAL),
    ]


def test_ilg_labels_decode_for_humans(schema, ferry_task):
    enc = ILGEncoder(schema, ferry_task)
    assert decode_label(schema, 0) == (None, "object")
    assert decode_label(schema, 14) == ("at", "unachieved goal")
    assert enc.label_name(label(schema, "on", ACHIEVED)) == "on / achieved goal"
    lines = enc.describe(enc.encode(ferry_task.init), ferry_task.init)
    assert lines[17].split() == ["17", "(at", "c0", "l2)", "[at", "/", "unachieved", "goal]"]
    with pytest.raises(ValueError):
        decode_label(schema, 1 + 3 * 7)


def test_ilg_typed_domain_has_type_atoms(write_problem):
    from pddlgym_sl import load_task

    schema = Schema.from_domain_file(DOMAINS / "visitall" / "domain.pddl")
    assert schema.predicates == ("connected", "at-robot", "visited", "place")
    problem = write_problem(
        """(define (problem v) (:domain visit-all) (:objects a b - place)
         (:init (at-robot a) (visited a) (connected a b) (connected b a)) (:goal (and (visited b))))"""
    )
    task = load_task(DOMAINS / "visitall" / "domain.pddl", problem)
    enc = ILGEncoder(schema, task)
    names = enc.node_names(task.init)
    # (visited a) never changes: a static atom, not a fact
    assert names[:7] == [
        "a",
        "b",
        "(connected a b)",
        "(connected b a)",
        "(visited a)",
        "(place a)",
        "(place b)",
    ]
    g = enc.encode(task.init)
    assert g.nodes[5:7].tolist() == [label(schema, "place", NON_GOAL)] * 2
    assert (5, 0, 0) in graph_edges(g)


def test_nlm_tensors(schema, ferry_task):
    enc = NLMEncoder(schema, ferry_task, n_objects=7)
    obs = enc.encode(ferry_task.init)
    assert set(obs) == {"arity0", "arity1", "arity2", "object_mask"}
    assert obs["arity0"].tolist() == [1, 0]  # empty-ferry: true, not a goal
    assert obs["arity1"].shape == (7, 8) and obs["arity2"].shape == (7, 7, 4)
    assert obs["object_mask"].tolist() == [1, 1, 1, 1, 1, 0, 0]
    c0, c1, l0, l1, l2 = range(5)
    a1 = obs["arity1"]  # channels: car s/g, location s/g, at-ferry s/g, on s/g
    assert a1[c0].tolist() == [1, 0, 0, 0, 0, 0, 0, 0]
    assert a1[l0].tolist() == [0, 0, 1, 0, 1, 0, 0, 0]
    assert a1[l2].tolist() == [0, 0, 1, 0, 0, 0, 0, 0]
    assert not a1[5:].any()
    a2 = obs["arity2"]  # channels: not-eq s/g, at s/g
    assert a2[l0, l1].tolist() == [1, 0, 0, 0]
    assert a2[l0, l0].tolist() == [0, 0, 0, 0]
    assert a2[c0, l0].tolist() == [0, 0, 1, 0]
    assert a2[c0, l2].tolist() == [0, 0, 0, 1]
    assert a2[c1, l0].tolist() == [0, 0, 0, 1]
    assert a2[c1, l1].tolist() == [0, 0, 1, 0]
    assert int(a2[..., 2].sum()) == 2 and int(a2[..., 3].sum()) == 2 and int(a2[..., 0].sum()) == 6
    assert obs in enc.space
    for key, space in enc.space.items():
        assert obs[key].dtype == space.dtype == np.int8


def test_an_empty_batch_encodes_to_empty_tensors(schema, ferry_task):
    """A problem can contribute no states (a short noise pool): its batch has a zero leading axis."""
    empty = np.zeros((0, ferry_task.n_words), np.uint64)
    assert batch_bits(empty, ferry_task.n_facts).shape == (0, ferry_task.n_facts)
    batch = NLMEncoder(schema, ferry_task).encode_batch(empty)
    assert batch["arity2"].shape == (0, 5, 5, 4) and batch["object_mask"].shape[0] == 0


def test_nlm_batch_matches_single_states(schema, ferry_task):
    states = [ferry_task.init, *(s for _, s in ferry_task.successors(ferry_task.init))]
    batch = nlm_encode_batch(schema, ferry_task, ferry_task.states_to_array(states))
    enc = NLMEncoder(schema, ferry_task)
    assert batch["arity2"].shape == (len(states), 5, 5, 4)
    for i, s in enumerate(states):
        single = enc.encode(s)
        for key in single:
            np.testing.assert_array_equal(batch[key][i], single[key])
    with pytest.raises(ConfigError, match="smaller"):
        NLMEncoder(schema, ferry_task, n_objects=3)


def test_hypergraph(schema, ferry_task):
    enc = HypergraphEncoder(schema, ferry_task)
    g = enc.encode(ferry_task.init)
    nf, na = ferry_task.n_facts, ferry_task.n_actions
    assert g.nodes.shape == (nf + na + len(STATIC), 6) and g.nodes.dtype == np.float32
    init = set(ferry_task.init.fact_indices().tolist())
    goal = set(ferry_task.goal.tolist())
    for f in range(nf):
        assert g.nodes[f].tolist() == [f in init, f in goal, 0, 0, 0, 0]
    a = ferry_task.action_index("(board c0 l0)")
    assert g.nodes[nf + a].tolist() == [0, 0, 1, 1, 3, 1]
    assert (g.nodes[nf + na :] == [1, 0, 0, 0, 0, 0]).all()  # static atoms: isolated, true
    edges = graph_edges(g)
    pre = {ferry_task.fact_index(x) for x in ("(at c0 l0)", "(at-ferry l0)", "(empty-ferry)")}
    assert {s for s, d, e in edges if d == nf + a} == pre
    assert all(e == 0 for s, d, e in edges if d == nf + a)
    assert {(d, e) for s, d, e in edges if s == nf + a} == {(ferry_task.fact_index("(on c0)"), 1)}
    n_pre = int(ferry_task.pre_ptr[-1])
    n_add = int(ferry_task.add_ptr[-1])
    assert len(g.edges) == n_pre + n_add  # deletes ignored
    assert g in enc.space
    h = enc.hyperedges
    assert h.senders[h.senders_ptr[a] : h.senders_ptr[a + 1]].tolist() == sorted(pre)
    assert h.features[a].tolist() == [1, 3, 1]
    states = ferry_task.states_to_array([ferry_task.init, ferry_task.init])
    np.testing.assert_array_equal(enc.fact_features_batch(states)[1], enc.fact_features(ferry_task.init))
    assert (
        HypergraphEncoder(schema, ferry_task, static=False).encode(ferry_task.init).nodes.shape[0] == nf + na
    )


def test_flat(schema, ferry_task):
    enc = FlatEncoder(schema, ferry_task)
    v = enc.encode(ferry_task.init)
    nf = ferry_task.n_facts
    assert v.dtype == np.int8 and v.shape == (nf + len(STATIC),)
    assert np.flatnonzero(v[:nf]).tolist() == ferry_task.init.fact_indices().tolist()
    assert v[nf:].all()
    assert v in enc.space and enc.space == spaces.MultiBinary(nf + len(STATIC))
    g = FlatEncoder(schema, ferry_task, static=False, goal=True).encode(ferry_task.init)
    assert g.shape == (2 * nf,)
    assert np.flatnonzero(g[nf:]).tolist() == ferry_task.goal.tolist()
    states = [ferry_task.init, *(s for _, s in ferry_task.successors(ferry_task.init))]
    batch = enc.encode_batch(ferry_task.states_to_array(states))
    np.testing.assert_array_equal(batch, np.stack([enc.encode(s) for s in states]))


def test_encoders_return_fresh_arrays(schema, ferry_task):
    for name in ("ilg", "nlm", "hypergraph", "flat"):
        enc = make_encoder(name, schema, ferry_task)
        a, b = enc.encode(ferry_task.init), enc.encode(ferry_task.init)
        leaves_a = list(a.values()) if isinstance(a, dict) else list(a) if isinstance(a, tuple) else [a]
        leaves_b = list(b.values()) if isinstance(b, dict) else list(b) if isinstance(b, tuple) else [b]
        for x, y in zip(leaves_a, leaves_b, strict=True):
            assert not np.shares_memory(x, y), name


def test_make_encoder_rejects_unknown_names_and_options(schema, ferry_task):
    with pytest.raises(ConfigError, match="unknown observation type 'pixels'"):
        make_encoder("pixels", schema, ferry_task)
    with pytest.raises(ConfigError, match="takes no option colour"):
        make_encoder("flat", schema, ferry_task, colour=True)


def test_schema_lists_the_action_schemas(schema, ferry_task):
    assert schema.actions == ("sail", "board", "debark") and schema.action_arities == (2, 2, 2)
    assert schema.max_action_arity == 2 and schema.action_index["debark"] == 2
    derived = Schema.from_task(dataclasses.replace(ferry_task, domain_file=None))
    assert set(derived.actions) == {"sail", "board", "debark"} and derived.action_arities == (2, 2, 2)


def test_action_table(schema, ferry_task):
    from pddlgym_sl.envs.actions import action_table, action_table_space

    table = action_table(schema, ferry_task, rows=ferry_task.n_actions + 2)
    a = ferry_task.action_index("(board c1 l2)")
    assert table[a].tolist() == [1, OBJECTS.index("c1"), OBJECTS.index("l2")]
    assert (table[ferry_task.n_actions :] == -1).all() and table.dtype == np.int64
    assert table in action_table_space(schema, ferry_task.n_actions + 2, n_objects=5)
    with pytest.raises(PDDLError, match="more than the 3 rows"):
        action_table(schema, ferry_task, rows=3)


@pytest.mark.parametrize("name", ["ilg", "hypergraph"])
def test_padded_graphs_are_the_graph_plus_zeros(schema, ferry_task, name):
    from pddlgym_sl.envs.encoders.padding import unpad_graph

    plain = make_encoder(name, schema, ferry_task)
    sizes = ENCODERS[name].padding(schema, ferry_task)
    assert (sizes["max_nodes"], sizes["max_edges"]) == plain.graph_bounds
    padded = make_encoder(
        name, schema, ferry_task, max_nodes=sizes["max_nodes"] + 3, max_edges=sizes["max_edges"]
    )
    # every fact true: the largest graph of the task fills the bounds exactly
    full = ferry_task.state(range(ferry_task.n_facts))
    for state in (ferry_task.init, full):
        g, p = plain.encode(state), padded.encode(state)
        assert p in padded.space and int(p["n_nodes"][0]) == len(g.nodes)
        np.testing.assert_array_equal(unpad_graph(p).nodes, g.nodes)
        np.testing.assert_array_equal(unpad_graph(p).edge_links, g.edge_links)
        assert not p["nodes"][len(g.nodes) :].any() and not p["edge_links"][len(g.edges) :].any()
    assert (
        len(plain.encode(full).nodes) == sizes["max_nodes"]
        and len(plain.encode(full).edges) == sizes["max_edges"]
    )
    with pytest.raises(PDDLError, match="more than the padded observation's"):
        make_encoder(name, schema, ferry_task, max_nodes=sizes["max_nodes"] - 1, max_edges=sizes["max_edges"])
    with pytest.raises(ConfigError, match="both max_nodes and max_edges"):
        make_encoder(name, schema, ferry_task, max_nodes=100)


def test_flat_size_pads_with_zeros(schema, ferry_task):
    plain = FlatEncoder(schema, ferry_task)
    assert FlatEncoder.padding(schema, ferry_task) == {"size": plain.size}
    padded = FlatEncoder(schema, ferry_task, size=plain.size + 4)
    v = padded.encode(ferry_task.init)
    assert v.shape == (plain.size + 4,) and np.array_equal(v[: plain.size], plain.encode(ferry_task.init))
    assert not v[plain.size :].any()
    np.testing.assert_array_equal(padded.encode_batch(ferry_task.states_to_array([ferry_task.init]))[0], v)
    with pytest.raises(PDDLError, match="more than size"):
        FlatEncoder(schema, ferry_task, size=plain.size - 1)
