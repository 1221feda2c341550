"""CompiledTask and State: compilation, determinism, transitions checked against pyperplan."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest

from pddlgym_sl import State, load_task
from pddlgym_sl.errors import PDDLError, PlanError
from pddlgym_sl.task import NO_PROP, state_tables
from tests.problems import DOMAINS, FERRY_3_2, FERRY_3_2_PLAN, GRIPPER_2, pyperplan_task


def test_compiled_arrays_describe_the_ferry_task(ferry_task):
    t = ferry_task
    assert t.domain_name == "ferry" and t.name == "ferry-3-2"
    assert list(t.facts) == sorted(t.facts) and list(t.actions) == sorted(t.actions)
    # the finite-domain view: the ferry is at exactly one location (one variable, no "none")
    ferry_var = [v for v in range(t.fdr.n_vars) if t.facts[t.fdr.facts_of_var(v)[0]].startswith("(at-ferry")]
    assert len(ferry_var) == 1 and len(t.fdr.facts_of_var(ferry_var[0])) == 3
    assert t.fdr.var_none[ferry_var[0]] == -1
    # 6 (at c l) + 3 (at-ferry l) + empty-ferry + 2 (on c); sail: 6 ordered pairs, board/debark: 6 each.
    assert t.n_facts == 12 and t.n_actions == 18
    a = t.action_index("(board c0 l1)")
    pre = {t.facts[f] for f in t.pre_idx[t.pre_ptr[a] : t.pre_ptr[a + 1]]}
    add = {t.facts[f] for f in t.add_idx[t.add_ptr[a] : t.add_ptr[a + 1]]}
    dele = {t.facts[f] for f in t.del_idx[t.del_ptr[a] : t.del_ptr[a + 1]]}
    assert pre == {"(at c0 l1)", "(at-ferry l1)", "(empty-ferry)"}  # static (car c0) compiled away
    assert add == {"(on c0)"}
    assert dele == {"(at c0 l1)", "(empty-ferry)"}
    assert {t.facts[g] for g in t.goal} == {"(at c0 l2)", "(at c1 l0)"}
    assert set(t.true_facts(t.init)) == {"(at c0 l0)", "(at c1 l1)", "(at-ferry l0)", "(empty-ferry)"}
    assert "(not-eq l0 l1)" in t.static_atoms and "(car c0)" in t.static_atoms
    assert t.predicates == {
        "not-eq": 2,
        "car": 1,
        "location": 1,
        "at-ferry": 1,
        "at": 2,
        "empty-ferry": 0,
        "on": 1,
    }
    assert t.objects == ("c0", "c1", "l0", "l1", "l2")


def test_state_tables_mark_variables_without_a_none_value():
    """The layout's tables are unsigned; a variable without a "none of those" value (-1 in the int32
    ``var_none``) gets NO_PROP (NumPy 2.5 refused the int32/NO_PROP mix: every task failed to load)."""
    ptr = np.array([0, 2, 5], dtype=np.int32)
    idx = np.array([1, 0, 4, 2, 3], dtype=np.int32)
    tables = state_tables(ptr, idx, np.array([-1, 7], dtype=np.int32), np.arange(10, 15, dtype=np.int32))
    assert tables["var_table"].dtype == np.uint32
    assert tables["var_table"].tolist() == [[0, 2, NO_PROP], [2, 5, 7]]
    assert tables["fact_table"].tolist() == [[1, 11], [0, 10], [4, 14], [2, 12], [3, 13]]


def test_actions_that_change_nothing_are_dropped(gripper_task):
    # (move rooma rooma) is a legal ground action of gripper that changes nothing; Fast Downward's
    # translator drops it (as PDDLGym does), and so do we.
    assert "(move rooma rooma)" not in gripper_task.actions
    assert gripper_task.is_applicable(gripper_task.init, gripper_task.action_index("move rooma roomb"))


def test_compilation_is_independent_of_the_hash_seed(write_problem):
    path = write_problem(FERRY_3_2)
    code = (
        "from pddlgym_sl import load_task;"
        f"t = load_task({str(DOMAINS / 'ferry' / 'domain.pddl')!r}, {str(path)!r});"
        "print(t.facts, t.actions, t.pre_idx.tolist(), bytes(t.init).hex())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1


def test_state_is_an_immutable_hashable_fact_set(ferry_task):
    t = ferry_task
    s = t.state(["(at c0 l0)", "(at-ferry l2)"])
    same = t.state([t.fact_index("(at-ferry l2)"), "(at c0 l0)"])
    assert s == same and hash(s) == hash(same) and len({s, same}) == 1
    assert isinstance(s, bytes) and len(s) == 8 * t.n_words
    assert t.fact_index("(at c0 l0)") in s and t.fact_index("(at c1 l0)") not in s
    assert t.true_facts(s) == ["(at c0 l0)", "(at-ferry l2)"]
    assert s.words.dtype == np.dtype("<u8") and not s.words.flags.writeable
    with pytest.raises(PDDLError, match="not a fact"):
        t.state(["(at c9 l0)"])


def _pyperplan_task(domain_file, problem_file):
    return pyperplan_task(domain_file, problem_file, remove_irrelevant_operators=False)


@pytest.mark.parametrize(
    ("domain", "problem"),
    [("ferry", FERRY_3_2), ("gripper", GRIPPER_2)],
)
def test_successors_equal_pyperplans_on_random_walks(domain, problem, write_problem):
    path = write_problem(problem)
    ours = load_task(DOMAINS / domain / "domain.pddl", path)
    ref = _pyperplan_task(DOMAINS / domain / "domain.pddl", path)
    rng = random.Random(0)
    state = ours.init
    for _ in range(200):
        names = frozenset(ours.true_facts(state))
        # Fast Downward's translator drops actions that change nothing (gripper's move rooma rooma)
        expected = {
            (op.name, op.apply(names))
            for op in ref.operators
            if op.applicable(names) and op.apply(names) != names
        }
        got = {(ours.actions[a], frozenset(ours.true_facts(s))) for a, s in ours.successors(state)}
        assert got == expected
        assert ours.is_goal(state) == ref.goal_reached(names)
        mask = ours.action_mask(state)
        assert set(np.flatnonzero(mask)) == set(ours.applicable(state).tolist())
        state = rng.choice(ours.successors(state))[1]


def test_plan_validation_by_replay(ferry_task):
    t = ferry_task
    states = t.validate_plan(FERRY_3_2_PLAN)
    assert len(states) == len(FERRY_3_2_PLAN) + 1 and t.is_goal(states[-1]) and states[0] == t.init
    assert t.validate_plan([t.action_index(a) for a in FERRY_3_2_PLAN])[-1] == states[-1]
    with pytest.raises(PlanError, match="ends in a non-goal state"):
        t.validate_plan(FERRY_3_2_PLAN[:3])
    with pytest.raises(PlanError, match="step 2: action \\(board c0 l0\\) is not applicable"):
        t.validate_plan(["(board c0 l0)", "(board c0 l0)"])
    with pytest.raises(PlanError, match=r"step 1: .*not a ground action"):
        t.validate_plan(["(fly c0 l0)"])


def test_successor_rejects_inapplicable_actions(ferry_task):
    with pytest.raises(PlanError):
        ferry_task.successor(ferry_task.init, "(debark c0 l1)")
    assert isinstance(ferry_task.successor(ferry_task.init, "(sail l0 l1)"), State)


def test_states_to_array_round_trip(ferry_task):
    t = ferry_task
    states = [t.init] + [s for _, s in t.successors(t.init)]
    batch = t.states_to_array(states)
    assert batch.shape == (len(states), t.n_words) and batch.dtype == np.dtype("<u8")
    assert [t.state_from_words(row) for row in batch] == states
