"""`PDDLEnv` and the registered ids: Gymnasium's checker, determinism, dynamics, info and errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence

import pddlgym_sl
from pddlgym_sl.envs import CUSTOM_ENV_ID, ENV_IDS, PDDLEnv, PDDLEnvV0
from pddlgym_sl.envs.encoders import ENCODERS
from pddlgym_sl.errors import ActionTypeError, ConfigError
from pddlgym_sl.heuristics import make_heuristic
from tests.problems import DOMAINS, FERRY_3_2, FERRY_3_2_PLAN, GRIPPER_2, ROOT

OBS_TYPES = ("ilg", "nlm", "hypergraph", "flat")

# Warnings `check_env` may emit that we accept, each with the reason. Anything else fails the test.
ALLOWED_WARNINGS = {
    # We check what users get from `gym.make` (TimeLimit, OrderEnforcing and PassiveEnvChecker
    # around PDDLEnv), on purpose; the checker merely advises checking the bare environment, which
    # test_check_env also does (where this warning cannot occur).
    r"is different from the unwrapped version": "checking the gym.make-wrapped env on purpose",
    # The padded hypergraph's node features include |pre| and |add| of an action: counts without an
    # upper bound (the Graph form's node Box is unbounded too, which the checker does not inspect).
    r"Box observation space maximum value is infinity": "unbounded counts in padded hypergraph nodes",
}


@pytest.fixture(autouse=True)
def problem_cache(tmp_path, monkeypatch):
    """Generate split problems into a per-test directory, never into the user's cache."""
    monkeypatch.setenv("PDDLGYM_SL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


ALL_IDS = (*sorted(ENV_IDS), CUSTOM_ENV_ID)
SIZES = ("ferry-l2-c2-s1.pddl", "ferry-l3-c4-s2.pddl", "ferry-l5-c3-s1.pddl")
"""Train problems of three sizes (4, 7 and 8 objects; 10, 30 and 50 ground actions)."""


def train_files(names=SIZES) -> list:
    from pddlgym_sl.envs.problems import split_files

    by_name = {f.name: f for f in split_files("ferry", "train")}
    return [by_name[n] for n in names]


def small(env_id: str, obs: str, **kwargs):
    """A registered env on two train problems (one pinned problem for flat on -v0); the generic id
    plays two ferry problems of different sizes through domain_file= and problems=."""
    if env_id == CUSTOM_ENV_ID:
        where = {"domain_file": DOMAINS / "ferry" / "domain.pddl", "problems": train_files(SIZES[:2])}
    elif obs == "flat" and env_id.endswith("-v0"):
        where = {"problem": 0}
    else:
        where = {"limit": 2}
    return gym.make(env_id, obs=obs, **where, **kwargs)


def run_check_env(env) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    unexpected = [
        str(w.message) for w in caught if not any(re.search(p, str(w.message)) for p in ALLOWED_WARNINGS)
    ]
    assert not unexpected, unexpected


# --------------------------------------------------------------------------- registration
def test_import_registers_the_four_ids_and_the_generic_one():
    assert set(ENV_IDS) == {
        f"pddl/{d}-v{v}" for d in ("blocksworld", "ferry", "gripper", "visitall") for v in (0, 1)
    }
    for env_id in (*ENV_IDS, CUSTOM_ENV_ID):
        spec = gym.spec(env_id)
        version = "V0" if env_id.endswith("-v0") else ""
        assert spec.entry_point == f"pddlgym_sl.envs.pddl_env:PDDLEnv{version}"
        assert spec.max_episode_steps == 500
    assert gym.spec(CUSTOM_ENV_ID).kwargs == {}
    assert pddlgym_sl.PDDLEnv is PDDLEnv and issubclass(PDDLEnvV0, PDDLEnv)
    assert pddlgym_sl.__version__


def test_make_with_module_prefix_needs_no_prior_import(problem_cache):
    code = (
        "import gymnasium as gym\n"
        "env = gym.make('pddlgym_sl:pddl/ferry-v0', limit=1, heuristics=())\n"
        "obs, info = env.reset(seed=0)\n"
        "print(info['problem'])\n"
    )
    env = {**os.environ, "PDDLGYM_SL_CACHE": str(problem_cache)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ferry-l2-c2-s1.pddl"


# --------------------------------------------------------------------------- gymnasium checker
# Advice SB3's checker gives that we accept, each with the reason. Anything else fails the test.
SB3_ADVICE = {
    # nlm's per-arity tensors, edge lists, hypergraph feature rows and the action table are 2-D or
    # more on purpose: the policies (agents/policies/) read that structure.
    r"has an unconventional shape": "multi-dimensional observations on purpose",
    # nlm's arity-2 tensor (N, N, C) looks like an image to SB3; it is not one.
    r"is an image|image is 36x36": "nlm tensors are not images",
}


def run_sb3_check_env(env) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_check_env(env)
    unexpected = [
        str(w.message)
        for w in caught
        if not any(re.search(p, str(w.message)) for p in (*ALLOWED_WARNINGS, *SB3_ADVICE))
    ]
    assert not unexpected, unexpected


SB3_OBS = ("nlm", "flat")
"""Observation types SB3 supports without padding (padded graphs: test_check_env_padded)."""


@pytest.mark.parametrize("obs", OBS_TYPES)
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_check_env(env_id, obs):
    env = small(env_id, obs, render_mode="ansi")
    run_check_env(env.unwrapped)
    run_check_env(env)
    if obs in SB3_OBS:
        run_sb3_check_env(env)
    env.close()


@pytest.mark.parametrize("obs", ["ilg", "hypergraph"])
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_check_env_padded(env_id, obs):
    """Padded graphs, with the action table on -v1: Gymnasium's checker and SB3's."""
    table = {} if env_id.endswith("-v0") else {"action_table": True}
    env = small(env_id, obs, padded=True, heuristics=(), **table)
    run_check_env(env.unwrapped)
    run_sb3_check_env(env)
    env.close()


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_seeded_rollouts_are_deterministic(env_id):
    def rollout() -> list:
        env = gym.make(env_id, limit=3)
        rng = np.random.default_rng(0)
        out = []
        obs, info = env.reset(seed=7)
        out.append((obs, info))
        for t in range(60):
            applicable = np.flatnonzero(info["action_mask"])
            # Mostly applicable actions, sometimes an arbitrary (possibly invalid) one.
            a = int(rng.integers(env.action_space.n)) if t % 7 == 3 else int(rng.choice(applicable))
            obs, reward, terminated, truncated, info = env.step(a)
            out.append((obs, reward, terminated, truncated, info))
            if terminated or truncated or t % 25 == 24:
                obs, info = env.reset()  # draws the next problem from the seeded np_random
                out.append((obs, info))
        return out

    first, second = rollout(), rollout()
    assert len(first) == len(second)
    for x, y in zip(first, second, strict=True):
        assert data_equivalence(x, y, exact=True)
    problems = {entry[-1]["problem"] for entry in first}
    assert len(problems) >= 2  # resets did draw different problems


# --------------------------------------------------------------------------- dynamics
@pytest.fixture
def ferry_env(write_problem):
    return PDDLEnv(problems=[write_problem(FERRY_3_2, "ferry-3-2.pddl")], domain="ferry", heuristics=())


def test_plan_reaches_goal_with_unit_rewards(ferry_env):
    _, info = ferry_env.reset(seed=0)
    assert info["problem"] == "ferry-3-2.pddl" and not info["invalid_action"]
    task = ferry_env.task
    plan = FERRY_3_2_PLAN
    for i, name in enumerate(plan):
        _, reward, terminated, truncated, info = ferry_env.step(task.action_index(name))
        assert reward == -1.0 and not truncated and not info["invalid_action"]
        assert terminated == (i == len(plan) - 1)
    assert task.is_goal(ferry_env.state)


def test_invalid_actions_are_no_ops(ferry_env):
    obs0, info0 = ferry_env.reset(seed=0)
    task = ferry_env.task
    before = ferry_env.state
    for a in (task.action_index("(debark c0 l0)"), task.n_actions, -1, 10**9):
        obs, reward, terminated, _, info = ferry_env.step(a)
        assert reward == -1.0 and info["invalid_action"] is True and not terminated
        assert ferry_env.state == before
        assert data_equivalence(obs, obs0, exact=True)
        np.testing.assert_array_equal(info["action_mask"], info0["action_mask"])


def test_non_integer_actions_are_refused_not_truncated(ferry_env):
    ferry_env.reset(seed=0)
    before = ferry_env.state
    applicable = int(np.flatnonzero(ferry_env.action_masks())[0])
    for bad in (applicable + 0.9, float(applicable), str(applicable), np.array([applicable]), None, 1j):
        assert not ferry_env.action_space.contains(bad)
        with pytest.raises(ActionTypeError, match="must be an integer"):
            ferry_env.step(bad)
        assert ferry_env.state == before
    for good in (applicable, np.int64(applicable), np.array(applicable, dtype=np.int32)):
        ferry_env.reset(seed=0)
        _, _, _, _, info = ferry_env.step(good)
        assert info["invalid_action"] is False


def test_action_mask_is_the_applicable_set(write_problem):
    env = PDDLEnv(domain="gripper", problems=[write_problem(GRIPPER_2, "g.pddl")], heuristics=())
    _, info = env.reset(seed=0)
    task = env.task
    assert env.action_space == gym.spaces.Discrete(task.n_actions)
    rng = np.random.default_rng(1)
    for _ in range(40):
        assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (task.n_actions,)
        assert np.flatnonzero(info["action_mask"]).tolist() == task.applicable(env.state).tolist()
        assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
        _, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated:
            _, info = env.reset()
    # (move rooma rooma) would change nothing: the grounding drops it, as Fast Downward does
    assert "(move rooma rooma)" not in task.actions
    _, info = env.reset()
    a = task.action_index("(move rooma roomb)")
    assert info["action_mask"][a] == 1
    _, _, _, _, info = env.step(a)
    assert info["invalid_action"] is False and env.state == task.successor(task.init, a)


def test_bounds_and_heuristics_in_info_equal_the_heuristics_module(ferry_env, write_problem):
    env = PDDLEnv(domain="ferry", problems=[write_problem(FERRY_3_2, "f.pddl")])
    _, info = env.reset(seed=0)
    task = env.task
    hs = {
        name: make_heuristic(name, task) for name in ("lmcut", "hmax", "blind", "hff", "hadd", "goal_count")
    }
    rng = np.random.default_rng(3)
    for _ in range(25):
        assert set(info["bounds"]) == {"lmcut", "hmax", "blind"}
        assert set(info["heuristics"]) == {"hff", "hadd", "goal_count"}
        for group in ("bounds", "heuristics"):
            for name, value in info[group].items():
                assert type(value) is float
                assert value == hs[name](env.state), name
        _, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated:
            assert info["bounds"]["lmcut"] == 0.0
            _, info = env.reset()
    only = PDDLEnv(domain="ferry", problems=[write_problem(FERRY_3_2, "g.pddl")], heuristics=["hff"])
    _, info = only.reset(seed=0)
    assert info["bounds"] == {} and set(info["heuristics"]) == {"hff"}


def test_dead_end_bounds_are_inf(write_problem):
    from tests.problems import GRIPPER_UNSOLVABLE

    env = PDDLEnv(domain="gripper", problems=[write_problem(GRIPPER_UNSOLVABLE, "dead.pddl")])
    _, info = env.reset(seed=0)
    # the translator proves the task unsolvable: every bound is inf, as Fast Downward reports
    assert info["bounds"] == {"lmcut": float("inf"), "hmax": float("inf"), "blind": float("inf")}


# --------------------------------------------------------------------------- problems and resets
def test_reset_pins_problems_by_name_or_index_and_switches_action_space():
    env = gym.make("pddl/ferry-v0", limit=3, heuristics=())
    names = env.unwrapped.problem_names
    assert names == ("ferry-l2-c2-s1.pddl", "ferry-l2-c2-s2.pddl", "ferry-l2-c2-s3.pddl")
    _, info = env.reset(seed=0, options={"problem": "ferry-l2-c2-s2"})
    assert info["problem"] == "ferry-l2-c2-s2.pddl"
    _, info = env.reset(options={"problem": 2})
    assert info["problem"] == "ferry-l2-c2-s3.pddl"
    assert env.action_space.n == env.unwrapped.task.n_actions
    big = gym.make("pddl/blocksworld-v0", split="val", problem="blocksworld-n6-s1.pddl", heuristics=())
    _, info = big.reset(seed=0)
    assert info["problem"] == "blocksworld-n6-s1.pddl" and big.unwrapped.problem_names == (info["problem"],)


def test_problems_generated_once_into_the_cache(problem_cache):
    env = gym.make("pddl/visitall-v0", split="test", limit=2, heuristics=())
    assert env.unwrapped.problem_names == ("visitall-x5-y5-r0.5-s1.pddl", "visitall-x5-y5-r0.5-s2.pddl")
    files = sorted((problem_cache / "visitall" / "test").iterdir())
    assert [f.name for f in files] == list(env.unwrapped.problem_names)
    stamps = [f.stat().st_mtime_ns for f in files]
    gym.make("pddl/visitall-v0", split="test", limit=2, heuristics=())
    assert [f.stat().st_mtime_ns for f in files] == stamps  # read from the cache, not rewritten


def test_user_domain_and_problem_directory(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "domain.pddl").write_text(
        """(define (domain lights) (:requirements :strips :typing) (:types light)
          (:predicates (on ?l - light) (off ?l - light))
          (:action switch-on :parameters (?l - light) :precondition (off ?l)
            :effect (and (on ?l) (not (off ?l)))))"""
    )
    for i in (1, 2):
        (tmp_path / "mine" / f"p{i}.pddl").write_text(
            f"""(define (problem p{i}) (:domain lights)
              (:objects {" ".join(f"x{j}" for j in range(i))} - light)
              (:init {" ".join(f"(off x{j})" for j in range(i))}) (:goal (and (on x0))))"""
        )
    env = PDDLEnv(domain_file=tmp_path / "mine" / "domain.pddl", problems=tmp_path / "mine", heuristics=())
    assert env.problem_names == ("p1.pddl", "p2.pddl")  # the domain file is not a problem
    env.reset(seed=0, options={"problem": "p1"})
    obs, reward, terminated, _, _ = env.step(env.task.action_index("(switch-on x0)"))
    assert terminated and reward == -1.0
    ilg = env.observation_space
    assert obs in ilg
    # The type predicate `light` is part of the observation (the schema appends it).
    assert env.schema.predicates == ("on", "off", "light")
    nodes = obs.nodes.tolist()
    assert nodes[:2] == [0, 1 + 3 * 2 + 2] and nodes[2] == 1 + 3 * 0 + 0  # object, (light x0), (on x0)


def test_nlm_pads_to_the_largest_problem():
    env = gym.make("pddl/ferry-v0", obs="nlm", limit=20, heuristics=())
    n = env.observation_space["object_mask"].shape[0]
    assert n == max(len(env.unwrapped.task_of(i).objects) for i in range(20)) == 5  # l2-c2 x16, l2-c3 x4
    obs, _ = env.reset(seed=0, options={"problem": 0})
    assert obs["object_mask"].tolist() == [1, 1, 1, 1, 0]
    assert obs["arity2"].shape == (5, 5, 4) and obs in env.observation_space


def test_render_ansi(ferry_env, write_problem):
    env = PDDLEnv(domain="ferry", problems=[write_problem(FERRY_3_2, "r.pddl")], render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "(at c0 l0)" in text and "(empty-ferry)" in text
    assert "[ ] (at c0 l2)" in text and "goal (0/2 achieved)" in text
    assert "(not-eq" not in text and "static atoms not shown" in text


# --------------------------------------------------------------------------- v1: fixed action interface
def test_v1_action_space_is_fixed_over_problems_of_different_sizes():
    env = gym.make("pddl/ferry-v1", problems=train_files(), domain="ferry", heuristics=())
    base = env.unwrapped
    sizes = [base.task_of(i).n_actions for i in range(3)]
    assert sizes == [10, 30, 50] and env.action_space == gym.spaces.Discrete(50)
    space = env.action_space
    for name, n in zip(SIZES, sizes, strict=True):
        _, info = env.reset(seed=0, options={"problem": name})
        assert env.action_space is space
        mask = info["action_mask"]
        assert mask.shape == (50,) and mask.dtype == np.int8 and not mask[n:].any()
        assert np.flatnonzero(mask).tolist() == base.task.applicable(base.state).tolist()
        assert np.array_equal(base.action_masks(), mask.astype(bool))
        before = base.state
        for a in (n, 49):  # past the problem's actions: invalid, a no-op
            _, reward, _, _, info = env.step(a)
            assert info["invalid_action"] and reward == -1.0 and base.state == before
    env.close()


def test_v0_action_space_follows_the_problem():
    env = gym.make("pddl/ferry-v0", problems=train_files(), domain="ferry", heuristics=())
    for name, n in zip(SIZES, (10, 30, 50), strict=True):
        _, info = env.reset(seed=0, options={"problem": name})
        assert env.action_space == gym.spaces.Discrete(n) and info["action_mask"].shape == (n,)


def test_max_actions_kwarg_compiles_lazily_and_refuses_larger_problems(monkeypatch):
    import pddlgym_sl.envs.problems as problems

    compiled = []
    real = problems.load_task
    monkeypatch.setattr(problems, "load_task", lambda d, p: compiled.append(p.name) or real(d, p))
    env = PDDLEnv(domain="ferry", problems=train_files(), max_actions=30, heuristics=())
    assert env.action_space == gym.spaces.Discrete(30) and compiled == [SIZES[0]]
    env.reset(seed=0, options={"problem": SIZES[1]})
    with pytest.raises(pddlgym_sl.PDDLError, match="50 ground actions, more than max_actions=30"):
        env.reset(options={"problem": SIZES[2]})


def test_problems_compile_once_per_process(monkeypatch):
    """max_actions needs every problem compiled: once, kept, and shared by the sub-envs."""
    import pddlgym_sl.envs.problems as problems

    compiled = []
    real = problems.load_task
    monkeypatch.setattr(problems, "load_task", lambda d, p: compiled.append(p.name) or real(d, p))
    envs = gym.make_vec(
        "pddl/ferry-v1", num_envs=3, vectorization_mode="sync", problems=train_files(), heuristics=()
    )
    envs.reset(seed=0)
    for _ in range(20):
        envs.step(np.array([int(np.flatnonzero(m)[0]) for m in envs.call("action_masks")]))
    assert sorted(compiled) == sorted(SIZES)
    envs.close()


def test_action_table_names_every_ground_action():
    env = PDDLEnv(domain="ferry", problems=train_files(), heuristics=(), action_table=True)
    schema = env.schema
    assert schema.actions == ("sail", "board", "debark") and schema.action_arities == (2, 2, 2)
    assert env.observation_space["actions"].shape == (50, 3)
    for name in SIZES:
        obs, _ = env.reset(seed=0, options={"problem": name})
        task, table = env.task, env.action_table
        assert table.dtype == np.int64 and table.shape == (50, 3)
        assert np.array_equal(obs["actions"], table) and obs in env.observation_space
        rows = [
            f"({schema.actions[r[0]]} {' '.join(task.objects[o] for o in r[1:] if o >= 0)})"
            for r in table[: task.n_actions]
        ]
        assert rows == list(task.actions)
        assert (table[task.n_actions :] == -1).all()
        # The argument indices are the ilg object nodes.
        names = env._encoder.node_names(env.state)
        assert [names[o] for o in table[0, 1:]] == task.actions[0].strip("()").split()[1:]


@pytest.mark.parametrize("obs", OBS_TYPES)
def test_action_table_in_every_observation_type(obs):
    env = gym.make("pddl/ferry-v1", problems=train_files(), domain="ferry", obs=obs, action_table=True)
    run_check_env(env.unwrapped)
    space = env.observation_space
    assert isinstance(space, gym.spaces.Dict) and "actions" in space.spaces
    if obs == "nlm":  # a Dict already: the table is one key more
        assert set(space.spaces) == {"arity0", "arity1", "arity2", "object_mask", "actions"}
    else:
        assert set(space.spaces) == {"state", "actions"}
    env.close()


@pytest.mark.parametrize("obs", ["ilg", "hypergraph"])
def test_padded_graphs_hold_the_graph(obs):
    from pddlgym_sl.envs.encoders.padding import unpad_graph

    padded = gym.make("pddl/ferry-v1", problems=train_files(), obs=obs, padded=True, heuristics=()).unwrapped
    plain = PDDLEnv(domain="ferry", problems=train_files(), obs=obs, heuristics=())
    run_check_env(padded)
    space = padded.observation_space
    sizes = [ENCODERS[obs].padding(padded.schema, padded.task_of(i)) for i in range(3)]
    assert space["nodes"].shape[0] == max(s["max_nodes"] for s in sizes) > min(s["max_nodes"] for s in sizes)
    assert space["edges"].shape == (max(s["max_edges"] for s in sizes),)
    rng = np.random.default_rng(0)
    for name in SIZES:
        a, info = padded.reset(seed=0, options={"problem": name})
        b, _ = plain.reset(seed=0, options={"problem": name})
        for _ in range(15):
            assert a in space and data_equivalence(unpad_graph(a), b, exact=True)
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            a, _, _, _, info = padded.step(action)
            b, _, _, _, _ = plain.step(action)


def test_flat_over_several_problems_is_zero_padded():
    env = PDDLEnv(domain="ferry", problems=train_files(), obs="flat", heuristics=())
    single = [PDDLEnv(domain="ferry", problems=[f], obs="flat", heuristics=()) for f in train_files()]
    assert env.observation_space.n == max(s.observation_space.n for s in single)
    for name, one in zip(SIZES, single, strict=True):
        obs, _ = env.reset(seed=0, options={"problem": name})
        ref, _ = one.reset(seed=0)
        assert np.array_equal(obs[: len(ref)], ref) and not obs[len(ref) :].any()


@pytest.mark.parametrize("obs", ["ilg", "nlm", "hypergraph", "flat"])
def test_the_environment_asks_the_encoder_what_it_is_not_its_name(obs, monkeypatch):
    """The environment branched on ``"nlm"``, ``"flat"`` and ``GRAPH_OBS``; now each encoder says
    whether it is a graph and how its space depends on the problem, so the same class under another
    name gets the same sizes, padding and checks."""
    cls = ENCODERS[obs]
    monkeypatch.setitem(ENCODERS, "renamed", cls)
    kwargs = dict(domain="ferry", problems=train_files(), heuristics=(), padded=cls.graph)
    original, renamed = PDDLEnv(obs=obs, **kwargs), PDDLEnv(obs="renamed", **kwargs)
    assert renamed.observation_space == original.observation_space
    for name in SIZES:
        a, _ = original.reset(seed=0, options={"problem": name})
        b, _ = renamed.reset(seed=0, options={"problem": name})
        assert data_equivalence(a, b, exact=True)
    if not cls.graph:
        with pytest.raises(ConfigError, match="padded=True pads graph observations \\(ilg, hypergraph"):
            PDDLEnv(obs="renamed", **{**kwargs, "padded": True})
    if cls.width == "facts":
        with pytest.raises(ConfigError, match="fact vector of ONE problem"):
            PDDLEnvV0(obs="renamed", **kwargs)


def test_unsupported_render_modes_follow_gymnasium():
    """SB3's make_vec_env passes render_mode="rgb_array": a warning, and render() returns None."""
    with pytest.warns(UserWarning, match="render_mode='rgb_array' is not supported"):
        env = PDDLEnv(domain="ferry", limit=1, heuristics=(), render_mode="rgb_array")
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="returns None"):
        assert env.render() is None


# --------------------------------------------------------------------------- vectorised
def test_make_vec_sync_flat():
    envs = gym.make_vec(
        "pddl/ferry-v0",
        num_envs=4,
        vectorization_mode="sync",
        obs="flat",
        problem="ferry-l3-c3-s1",
        heuristics=(),
    )
    obs, info = envs.reset(seed=0)
    n_actions = envs.single_action_space.n
    assert obs.shape == (4, envs.single_observation_space.n) and obs.dtype == np.int8
    assert info["action_mask"].shape == (4, n_actions)
    rng = np.random.default_rng(0)
    for _ in range(30):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        obs, reward, _, _, info = envs.step(actions)
        assert obs.shape[0] == 4 and reward.tolist() == [-1.0] * 4
        assert not info["invalid_action"].any()
    envs.close()


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"domain": "sokoban"}, "unknown domain 'sokoban'"),
        ({"domain": "ferry", "split": "dev"}, "unknown split 'dev'"),
        ({"domain": "ferry", "obs": "pixels"}, "unknown observation type 'pixels'"),
        (
            {"domain": "ferry", "problems": ["/nonexistent/p1.pddl"]},
            "/nonexistent/p1.pddl: problem file: file not found",
        ),
        ({"domain": "ferry", "problems": "/nonexistent/dir"}, "not found"),
        ({"domain": "ferry", "problems": []}, "empty list"),
        (
            {"domain_file": "/nonexistent/domain.pddl", "problems": ["x"]},
            "domain.pddl: domain file: file not found",
        ),
        ({"domain_file": DOMAINS / "ferry" / "domain.pddl"}, "needs problems="),
        ({}, "no domain"),
        ({"domain": "ferry", "split": "train", "problems": ["x.pddl"]}, "either split= .* or problems="),
        ({"domain": "ferry", "heuristics": ["lmcut", "h*"]}, "unknown heuristic.*'h\\*'"),
        ({"domain": "ferry", "problem": "ferry-l99-c1-s1"}, "unknown problem 'ferry-l99-c1-s1'"),
        ({"domain": "ferry", "limit": 0}, "limit must be a positive int"),
        ({"domain": "ferry", "obs": "nlm", "padded": True}, "pads graph observations"),
        ({"domain": "ferry", "limit": 2, "max_actions": 0}, "max_actions must be a positive int"),
        ({"domain": "ferry", "limit": 2, "max_actions": 2.5}, "max_actions must be a positive int"),
        (
            {"domain": "ferry", "limit": 2, "obs_kwargs": {"max_nodes": 10}},
            "needs both max_nodes and max_edges",
        ),
        (
            {"domain": "ferry", "obs": "flat", "problem": 0, "obs_kwargs": {"colour": 1}},
            "takes no option colour",
        ),
    ],
)
def test_bad_kwargs_give_clear_errors(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        PDDLEnv(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"domain": "ferry", "obs": "flat", "limit": 2}, "ONE problem in -v0"),
        ({"domain": "ferry", "limit": 2, "max_actions": 50}, "need the -v1 ids"),
        ({"domain": "ferry", "limit": 2, "action_table": True}, "need the -v1 ids"),
    ],
)
def test_v0_keeps_its_interface(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        PDDLEnvV0(**kwargs)


def test_bad_kwargs_through_gym_make_and_reset():
    with pytest.raises(ConfigError, match="unknown split 'dev'"):
        gym.make("pddl/ferry-v0", split="dev")
    env = gym.make("pddl/ferry-v0", limit=1, heuristics=())
    with pytest.raises(ConfigError, match="unknown reset option"):
        env.reset(options={"state": 1})
    with pytest.raises(ConfigError, match="out of range"):
        env.reset(options={"problem": 5})
    assert issubclass(ConfigError, ValueError)


def test_nlm_observation_accepts_spaced_objects_section(write_problem):
    """``( :objects ...`` is valid PDDL: the object count used for padding must see it."""
    text = FERRY_3_2.replace("(:objects", "( :objects")
    assert "( :objects" in text
    env = PDDLEnv(domain="ferry", problems=[write_problem(text, "spaced.pddl")], obs="nlm", heuristics=())
    obs, _ = env.reset(seed=0)
    assert obs["object_mask"].sum() == len(env.task.objects)


def test_file_errors_say_what_the_path_is_as_the_commands_do(tmp_path):
    """A directory given as a problem, a symbolic link loop and a FIFO are named as such, with the
    words of the command-line tools (`pddlgym_sl.pddl.pddl_file_problem`; issue 59), not "not found"."""
    import os

    loop = tmp_path / "loop.pddl"
    os.symlink(loop, loop)
    fifo = tmp_path / "pipe.pddl"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.pddl"
    folder.mkdir()
    ferry = DOMAINS / "ferry" / "domain.pddl"
    for path, cause in (
        (loop, "cannot read file (a symbolic link loop)"),
        (folder, "is a directory, not a PDDL file"),
        (fifo, "not a regular file (a FIFO)"),
    ):
        with pytest.raises(ConfigError, match=re.escape(f"{path}: problem file: {cause}")):
            PDDLEnv(domain="ferry", problems=[path])
        with pytest.raises(ConfigError, match=re.escape(f"{path}: domain file: {cause}")):
            PDDLEnv(domain_file=path, problems=[ferry])
