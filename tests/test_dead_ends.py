"""Dead ends in the environments (issue 59): a state where no action applies ends the episode in
every env id (``terminated``, ``info["dead_end"]``), also at `reset`; Gymnasium's and SB3's
checkers accept such environments, and MaskablePPO trains on an unsolvable task without stalling."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from pddlgym_sl.envs import PDDLEnv
from pddlgym_sl.envs.pddl_env import PDDLEnvV0
from pddlgym_sl.errors import EpisodeEndedError

# one way forward, through a door that locks behind: `go-far` leaves a state without actions
DOMAIN = """(define (domain corridor) (:requirements :strips :typing) (:types room)
  (:predicates (at ?r - room) (next ?a ?b - room) (door ?a ?b - room) (won))
  (:action walk :parameters (?a ?b - room) :precondition (and (at ?a) (next ?a ?b))
    :effect (and (at ?b) (not (at ?a))))
  (:action go-far :parameters (?a ?b - room) :precondition (and (at ?a) (door ?a ?b))
    :effect (and (not (at ?a))))
  (:action win :parameters (?a - room) :precondition (and (at ?a) (next ?a ?a)) :effect (won)))"""
SOLVABLE = """(define (problem corridor-1) (:domain corridor) (:objects r0 r1 r2 - room)
  (:init (at r0) (next r0 r1) (next r1 r2) (next r2 r2) (door r0 r1)) (:goal (won)))"""
STUCK_AT_START = """(define (problem corridor-2) (:domain corridor) (:objects r0 r1 - room)
  (:init (next r0 r1)) (:goal (won)))"""


@pytest.fixture
def corridor(tmp_path):
    (tmp_path / "domain.pddl").write_text(DOMAIN)
    (tmp_path / "a-solvable.pddl").write_text(SOLVABLE)
    (tmp_path / "b-stuck.pddl").write_text(STUCK_AT_START)
    return tmp_path


@pytest.mark.parametrize("cls", [PDDLEnv, PDDLEnvV0])
def test_a_step_into_a_dead_end_terminates_the_episode(corridor, cls):
    env = cls(domain_file=corridor / "domain.pddl", problems=corridor, heuristics=("hmax",))
    _, info = env.reset(seed=0, options={"problem": "a-solvable"})
    assert not info["dead_end"] and not env.terminated and info["action_mask"].any()
    _, reward, terminated, truncated, info = env.step(env.task.action_index("(go-far r0 r1)"))
    assert terminated and not truncated and reward == -1.0
    assert info["dead_end"] and not info["action_mask"].any() and info["bounds"]["hmax"] == np.inf
    with pytest.raises(EpisodeEndedError, match="ended in a dead end"):
        env.step(0)
    _, info = env.reset(options={"problem": "a-solvable"})  # and the goal still ends it as before
    for action in ("(walk r0 r1)", "(walk r1 r2)", "(win r2)"):
        _, _, terminated, _, info = env.step(env.task.action_index(action))
    assert terminated and not info["dead_end"]


@pytest.mark.parametrize("cls", [PDDLEnv, PDDLEnvV0])
def test_a_task_stuck_at_its_initial_state_says_so_at_reset(corridor, cls):
    """Over at `reset` (``terminated``, ``info["dead_end"]``); its first step reports it and
    applies nothing, the next raises, as for a goal at reset."""
    env = cls(domain_file=corridor / "domain.pddl", problems=corridor, heuristics=())
    obs, info = env.reset(seed=0, options={"problem": "b-stuck"})
    assert info["dead_end"] and env.terminated
    again, reward, terminated, truncated, info = env.step(0)
    assert (reward, terminated, truncated, info["dead_end"]) == (0.0, True, False, True)
    assert np.array_equal(obs.nodes, again.nodes)  # nothing applied (ilg observations)
    with pytest.raises(EpisodeEndedError):
        env.step(0)


@pytest.mark.parametrize("env_id", ["pddl/custom-v1"])
def test_checkers_accept_an_environment_with_dead_ends(corridor, env_id):
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(env_id, domain_file=corridor / "domain.pddl", problems=corridor, obs="flat", heuristics=())
    check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(env.unwrapped, warn=False)


def test_maskable_ppo_trains_on_an_unsolvable_task(corridor):
    """Every episode of the corridor without its win ends in the dead end: MaskablePPO's rollouts
    go on from episode to episode (before, the all-zero mask left it nothing to sample)."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    (corridor / "a-solvable.pddl").unlink()
    env = gym.make(
        "pddl/custom-v1", domain_file=corridor / "domain.pddl", problems=corridor, obs="flat",
        heuristics=(), max_episode_steps=20,
    )  # fmt: skip
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=16, n_epochs=1, seed=0)
    model.learn(total_timesteps=64)
    assert model.num_timesteps >= 64
