"""Targets of value learning without optimal labels (`agents.value_targets`)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import truncnorm

from agents.heads import make_head
from agents.value_targets import (
    UpperBounds,
    bootstrap_targets,
    clip_targets,
    state_key,
    successor_values,
    target_mode,
    value_loss,
)
from pddlgym_sl.heuristics import make_heuristic


def test_goal_is_zero_dead_end_is_inf_else_one_plus_min():
    # state 0: goal; 1: successors valued 3, 1.5; 2: no successors; 3: infinite bound; 4: one successor
    is_goal = np.array([True, False, False, False, False])
    lower = np.array([0.0, 1.0, 2.0, np.inf, 1.0])
    succ = np.array([7.0, 3.0, 1.5, 4.0, 2.0])  # state 0 has one successor too: the goal wins
    offsets = np.array([0, 1, 3, 3, 4, 5])
    y = bootstrap_targets(is_goal, lower, succ, offsets)
    np.testing.assert_array_equal(y, [0.0, 2.5, np.inf, np.inf, 3.0])


def test_successor_values_goal_zero_and_dead_end_inf():
    values = successor_values(np.array([5.0, 5.0, 5.0]), np.array([True, False, False]), [0, np.inf, 2])
    np.testing.assert_array_equal(values, [0.0, np.inf, 5.0])


def test_a_state_next_to_the_goal_gets_target_one(ferry_task):
    """On a real task: y = 1 for a state one action from the goal, whatever the other successors'
    values, and y = 0 at the goal (plan from A* with LM-cut)."""
    from pddlgym_sl.search import astar

    result = astar(ferry_task, "lmcut")
    states = ferry_task.validate_plan(result.plan)
    before_goal, goal = states[-2], states[-1]
    acts, succ, goal_flags = ferry_task.expand(before_goal.words)
    assert goal_flags.any()
    lmcut = make_heuristic("lmcut", ferry_task)
    values = successor_values(np.full(len(acts), 10.0), goal_flags, lmcut.batch(succ))
    y = bootstrap_targets(np.array([False]), lmcut.batch(before_goal.words[None]), values, [0, len(acts)])
    assert y[0] == 1.0
    assert bootstrap_targets(np.array([ferry_task.is_goal(goal)]), [0.0], np.zeros(0), [0, 0])[0] == 0.0


def test_lower_bound_is_the_admissible_heuristic_of_the_env(ferry_task):
    """l is info["bounds"]["lmcut"] of the env: the admissible heuristic of the state."""
    import gymnasium as gym

    import pddlgym_sl  # noqa: F401

    env = gym.make("pddl/ferry-v1", problems=[ferry_task.problem_file], heuristics=("lmcut",), obs="flat")
    _, info = env.reset(seed=0)
    state = env.unwrapped.state
    assert info["bounds"]["lmcut"] == make_heuristic("lmcut", ferry_task).batch(state.words[None])[0]
    env.close()


def test_upper_bounds_only_from_goal_reaching_trajectories():
    keys = [state_key(0, np.array([i], dtype=np.uint64)) for i in range(4)]
    bounds = UpperBounds()
    bounds.record(keys, reached_goal=False)  # truncated: nothing learnt
    assert len(bounds) == 0 and np.isinf(bounds.lookup(keys)).all()
    # s0 s1 s2 s1 s3(goal): a loop through s1; u(s1) = 1 (its later visit), u(s0) = 4
    bounds.record([keys[0], keys[1], keys[2], keys[1], keys[3]], reached_goal=True)
    np.testing.assert_array_equal(bounds.lookup(keys), [4.0, 1.0, 2.0, 0.0])
    bounds.record([keys[0], keys[3]], reached_goal=True)  # a better trajectory improves, a worse one not
    bounds.record([keys[2], keys[0], keys[1], keys[3]], reached_goal=True)
    np.testing.assert_array_equal(bounds.lookup(keys), [1.0, 1.0, 2.0, 0.0])
    # other problem, same words: a different state
    assert np.isinf(bounds.lookup([state_key(1, np.array([1], dtype=np.uint64))])[0])
    again = UpperBounds.from_plain(bounds.to_plain())
    assert again.best == bounds.best


def test_clip_targets_into_the_bounds():
    y = clip_targets(np.array([0.5, 9.0, 3.0, np.inf]), np.array([1.0, 1.0, 1.0, np.inf]), [np.inf, 4, 5, 6])
    np.testing.assert_array_equal(y, [1.0, 4.0, 3.0, np.inf])


def test_target_modes():
    assert target_mode("n", False) == "n" and target_mode("n", True) == "n+clip"
    assert target_mode("tn", False) == "tn" == target_mode("tn", True)


def test_tn_nll_finite_at_u_inf_and_equal_to_scipy():
    head = make_head("tn", residual="none", upper="plan")
    raw = torch.tensor([[2.0, 0.3], [5.0, -1.0]], dtype=torch.float64)
    target, lower, upper = np.array([3.0, 40.0]), np.array([2.0, 1.0]), np.array([np.inf, np.inf])
    loss, count = value_loss(head, raw, target, lower, None, upper, "tn")
    assert count == 2 and torch.isfinite(loss)
    mu, sigma = head.mu_sigma(raw, None)
    mu, sigma = mu.numpy(), sigma.numpy()
    lo = lower - 0.1
    expected = -truncnorm.logpdf(target, (lo - mu) / sigma, np.inf, loc=mu, scale=sigma)
    assert loss.item() == pytest.approx(expected.mean(), rel=1e-9)


def test_value_loss_modes_and_dead_ends():
    head = make_head("n", sigma="fixed", residual="hff")
    raw = torch.tensor([[0.0], [0.0], [0.0]], dtype=torch.float64, requires_grad=True)
    base = np.array([2.0, 2.0, 2.0])
    target, lower, upper = np.array([1.0, 5.0, np.inf]), np.array([1.5, 1.0, np.inf]), np.array([9, 3.0, 9])
    # N: raw targets, the dead end dropped; (x - mu)^2 + log(sigma) + log(2 pi) / 2 with sigma^2 = 1/2
    loss, count = value_loss(head, raw, target, lower, base, upper, "n")
    const = math.log(1 / math.sqrt(2)) + 0.5 * math.log(2 * math.pi)
    assert count == 2 and loss.item() == pytest.approx(((1 - 2) ** 2 + (5 - 2) ** 2) / 2 + const)
    clipped, _ = value_loss(head, raw, target, lower, base, upper, "n+clip")  # targets 1.5 and 3
    assert clipped.item() == pytest.approx((0.5**2 + 1**2) / 2 + const)
    clipped.backward()
    assert raw.grad is not None and raw.grad[2, 0] == 0.0
    nothing, count = value_loss(head, raw, np.array([np.inf]), [np.inf], base[:1], [np.inf], "n")
    assert count == 0 and nothing.item() == 0.0


def test_tn_without_truncation_at_u_is_tn_with_u_inf():
    """``truncate_upper=False`` (rl_value --upper clip): u clips the target, the NLL has u = inf."""
    head = make_head("tn", residual="none", upper="plan")
    raw = torch.tensor([[2.0, 0.3], [5.0, -1.0]], dtype=torch.float64)
    target, lower, upper = np.array([3.0, 40.0]), np.array([2.0, 1.0]), np.array([4.0, 6.0])
    loose, _ = value_loss(head, raw, target, lower, None, upper, "tn", truncate_upper=False)
    clipped = clip_targets(target, lower, upper)
    as_inf, _ = value_loss(head, raw, clipped, lower, None, np.full(2, np.inf), "tn")
    tight, _ = value_loss(head, raw, target, lower, None, upper, "tn")
    assert loose.item() == pytest.approx(as_inf.item()) and tight.item() != pytest.approx(loose.item())
