"""Confidence-aware search: thresholds on a hand-made confidence table, single-queue GBFS with
pruning (equal to the engine's GBFS without it; unsolved, not a crash, when everything is pruned),
dual-queue GBFS with hFF (a useless learned heuristic still solves what GBFS + hFF solves), the
prioritizing queue, evaluation counting and determinism."""

from __future__ import annotations

import numpy as np
import pytest

import domains
from pddlgym_sl import load_task
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.search import CONFIDENCE_SEARCHES, confidence_gbfs, dual_gbfs, gbfs
from pddlgym_sl.search.thresholds import (
    AdaptiveThreshold,
    MeanThreshold,
    adaptive_threshold,
    mean_threshold,
    quantile_threshold,
)
from tests.problems import DOMAINS, GRIPPER_UNSOLVABLE

PROBLEMS = [
    ("ferry", {"locations": 6, "cars": 5}, 0),
    ("gripper", {"balls": 8}, 1),
    ("blocksworld", {"blocks": 7}, 2),
    ("visitall", {"x": 5, "y": 5, "ratio": 1.0}, 3),
]


@pytest.fixture(scope="module", params=PROBLEMS, ids=lambda p: p[0])
def task(request, tmp_path_factory):
    name, params, seed = request.param
    path = tmp_path_factory.mktemp(name) / "p.pddl"
    path.write_text(domains.generate_problem(name, seed=seed, **params))
    return load_task(domains.domain_file(name), path)


class Learned:
    """A confidence heuristic from a symbolic one, recording every batch it evaluates."""

    def __init__(self, task, name="goal_count", confidence=1.0, sign=1.0):
        self.h = make_heuristic(name, task)
        self.confidence, self.sign = confidence, sign
        self.seen: list[bytes] = []

    def values_and_confidences(self, states):
        self.seen += [row.tobytes() for row in states]
        conf = self.confidence(states) if callable(self.confidence) else np.full(len(states), self.confidence)
        return self.sign * self.h.batch(states), conf


def _key(result):
    return (result.status, result.plan, result.evaluations, result.expansions, result.generated)


# ------------------------------------------------------------------ thresholds
def test_quantile_and_mean_threshold_on_a_hand_made_table():
    conf = np.array([0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6, 1.0])
    assert quantile_threshold(conf, 0) == 0.1  # nothing below the smallest
    assert quantile_threshold(conf, 40) == 0.5  # 0.1 0.2 0.3 0.4 below: 40%
    assert quantile_threshold(conf, 45) == 0.5  # at most 45%: still four states
    assert quantile_threshold(conf, 100) > 1.0  # everything below
    t = mean_threshold(conf, 40)
    assert t == MeanThreshold(0.5) and (conf < t.value).mean() == 0.4
    assert t.below(np.zeros(3), np.array([0.49, 0.5, 0.51])).tolist() == [True, False, False]
    with pytest.raises(ConfigError, match="percentage"):
        mean_threshold(conf, 120)


def test_adaptive_threshold_merges_adjacent_costs_into_groups_of_100():
    rng = np.random.default_rng(0)
    # predicted cost -> number of training states: 0:60, 1:50 | 2:150 | 3:30, 5:40, 6:20, 7:15 | 9:10
    counts = {0: 60, 1: 50, 2: 150, 3: 30, 5: 40, 6: 20, 7: 15, 9: 10}
    predicted = np.concatenate([np.full(n, c, dtype=float) for c, n in counts.items()])
    predicted += rng.uniform(-0.4, 0.4, len(predicted))  # continuous predictions round to the cost
    # confidence falls with the cost, so one mean threshold would prune the far states
    conf = np.concatenate([rng.uniform(0.5, 1.0, n) - 0.05 * c for c, n in counts.items()])
    t = adaptive_threshold(predicted, conf, 40)
    # 0+1 reach 110; 2 alone 150; 3+5+6+7 reach 105; 9 (10 states) joins the group before it
    assert t.starts == (0, 2, 3) and t.sizes == (110, 150, 115)
    cost = np.round(predicted)
    for j, members in enumerate([cost <= 1, cost == 2, cost >= 3]):
        assert t.values[j] == quantile_threshold(conf[members], 40)
        assert (conf[members] < t.values[j]).mean() == pytest.approx(0.4, abs=0.01)
    # lookups: below the first group, inside gaps (4, 8) and beyond the last cost
    np.testing.assert_array_equal(
        t.group(np.array([-3.0, 0.4, 1.6, 2.4, 4.0, 8.0, 50.0, np.inf])), [0, 0, 1, 1, 2, 2, 2, 2]
    )
    below = t.below(np.array([0.0, 2.0, 9.0]), np.array([t.values[0], t.values[1] - 1e-9, 0.0]))
    assert below.tolist() == [False, True, True]
    # fewer than 100 states in all: one group
    small = adaptive_threshold(np.arange(50.0), np.linspace(0, 1, 50), 10)
    assert small == AdaptiveThreshold((0,), (quantile_threshold(np.linspace(0, 1, 50), 10),), (50,))


# ------------------------------------------------------------------ single queue
@pytest.mark.parametrize("name", ["goal_count", "hff"])
@pytest.mark.parametrize("budget", [None, 25])
def test_without_a_threshold_single_queue_is_the_engines_gbfs(task, name, budget):
    learned = Learned(task, name)
    ours = confidence_gbfs(task, learned, max_evaluations=budget)
    engine = gbfs(task, make_heuristic(name, task).batch, max_evaluations=budget)
    assert _key(ours) == _key(engine)
    assert len(learned.seen) == len(set(learned.seen)) == ours.evaluations
    if ours.solved:
        task.validate_plan(ours.plan)


def test_pruning_everything_reports_unsolved(task):
    result = confidence_gbfs(task, Learned(task, confidence=0.0), MeanThreshold(0.5))
    assert not result.solved and result.status == "pruned" and result.expansions == 1
    successors = {s for _, s in task.successors(task.init)} - {task.init}
    assert result.evaluations == 1 + len(successors)  # the initial state and its successors, all pruned
    assert (
        confidence_gbfs(task, Learned(task), MeanThreshold(0.5), max_evaluations=0).status
        == "evaluation_limit"
    )


def test_pruning_some_states_prunes_exactly_the_unconfident_ones(task):
    rng_conf = lambda states: (states.sum(axis=1) % np.uint64(7)).astype(float) / 6  # noqa: E731
    learned = Learned(task, confidence=rng_conf)
    threshold = MeanThreshold(0.3)
    result = confidence_gbfs(task, learned, threshold, max_evaluations=None)
    plan_states = task.validate_plan(result.plan) if result.solved else [task.init]
    conf = rng_conf(task.states_to_array(plan_states))
    assert (conf[1:] >= 0.3).all()  # a plan only passes through confident states (init excepted)


# ------------------------------------------------------------------ dual queue
def test_dual_queue_with_hnn_pruned_everywhere_is_gbfs_with_hff(task):
    ours = dual_gbfs(task, Learned(task, confidence=0.0), MeanThreshold(0.5))
    assert _key(ours) == _key(gbfs(task, "hff"))


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["constant", "misleading"])
def test_dual_queue_with_a_useless_heuristic_solves_what_gbfs_hff_solves(task, sign):
    """A constant h^NN (breadth first) or a misleading one (−hFF) takes half the turns; hFF's queue
    still reaches the goal (on these problems within 4x GBFS + hFF's evaluations)."""
    reference = gbfs(task, "hff")
    assert reference.solved
    learned = Learned(task, name="hff" if sign < 0 else "blind", sign=sign)
    ours = dual_gbfs(task, learned, max_evaluations=4 * reference.evaluations)
    assert ours.solved
    task.validate_plan(ours.plan)


def test_dual_queue_counts_one_evaluation_per_state(task):
    calls: list[int] = []

    def second(states):
        calls.append(len(states))
        return make_heuristic("hff", task).batch(states)

    learned = Learned(task)
    result = dual_gbfs(task, learned, second=second, max_evaluations=60)
    assert sum(calls) == len(learned.seen) == len(set(learned.seen)) == result.evaluations <= 60


def test_prioritizing_queue(task):
    always = dual_gbfs(task, Learned(task), MeanThreshold(0.5), prioritize=True)
    assert _key(always) == _key(gbfs(task, "goal_count"))  # never leaves the h^NN queue (no dead ends here)
    never = dual_gbfs(task, Learned(task, confidence=0.0), MeanThreshold(0.5), prioritize=True)
    assert _key(never) == _key(dual_gbfs(task, Learned(task)))  # always one hFF turn: round robin
    with pytest.raises(ConfigError, match="threshold"):
        dual_gbfs(task, Learned(task), prioritize=True)


def test_searches_are_deterministic(task):
    conf = lambda states: (states.sum(axis=1) % np.uint64(5)).astype(float) / 4  # noqa: E731
    for search in CONFIDENCE_SEARCHES.values():
        runs = [search(task, Learned(task, confidence=conf), MeanThreshold(0.4)) for _ in range(2)]
        assert _key(runs[0]) == _key(runs[1])


def test_dead_ends_and_unsolvable_tasks(write_problem):
    task = load_task(DOMAINS / "gripper" / "domain.pddl", write_problem(GRIPPER_UNSOLVABLE))
    for search in CONFIDENCE_SEARCHES.values():
        result = search(task, Learned(task, name="blind"))
        assert not result.solved and result.status == "exhausted"
    dead = lambda states: (np.full(len(states), np.inf), np.ones(len(states)))  # noqa: E731
    assert confidence_gbfs(task, dead).expansions == 0


def test_bad_heuristics_raise(task):
    with pytest.raises(ConfigError, match="values_and_confidences"):
        confidence_gbfs(task, 3)
    with pytest.raises(ConfigError, match="NaN"):
        confidence_gbfs(task, lambda s: (np.full(len(s), np.nan), np.ones(len(s))))
    with pytest.raises(ConfigError, match="for a batch"):
        dual_gbfs(task, lambda s: (np.zeros(len(s)), np.ones(len(s) + 1)))
