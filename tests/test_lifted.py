"""Lifted planning (`pddlgym_sl.lifted`) against the grounded task of the same files.

The reference is the grounded `CompiledTask` (Fast Downward's translator): on the states a
grounded GBFS evaluates, the lifted applicable actions and successors must be the grounded ones
(`pddlgym_sl.lifted.check`: compared by action name and on the grounded facts); hmax and hadd
on the lifted relaxed program must equal the grounded kernels' values; every lifted plan must
replay on the grounded task and pass Unified Planning's validator. The IPC 2023 LT tasks come
from ``../shared/ipc23-lt`` (skipped without them); `benchmarks/lifted_successors.py` runs the
comparison on every easy task with 1,000-evaluation runs.
"""

from __future__ import annotations

import heapq
import json

import numpy as np
import pytest

import domains
from pddlgym_sl import load_task
from pddlgym_sl.errors import ConfigError, PlanError
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.lifted import Expander, lifted_task, load_lifted_task
from pddlgym_sl.lifted.check import StateMapper, compare_state, reached_states
from pddlgym_sl.lifted.heuristics import goal_count
from pddlgym_sl.lifted.mode import choose_grounding, load_for_search
from pddlgym_sl.lifted.relaxed import relaxed_args, relaxed_program, relaxed_value
from pddlgym_sl.lifted.search import LiftedSearch, lifted_gbfs
from pddlgym_sl.lifted.symmetry import object_classes
from pddlgym_sl.pddl import parse_domain, parse_problem
from pddlgym_sl.plan import main as plan_main
from tests.fd_reference import IPC, IPC_DOMAINS

needs_ipc = pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")
EASY = "testing-easy/p03.pddl"


def _pair(domain: str, problem: str = EASY):
    files = (IPC / domain / "domain.pddl", IPC / domain / problem)
    return load_task(*files), load_lifted_task(*files)


@needs_ipc
@pytest.mark.parametrize("domain", IPC_DOMAINS)
def test_successors_equal_the_grounded_ones(domain):
    """Every state a 100-evaluation grounded GBFS + hFF evaluates: the same applicable actions (by
    name) and the same successors (on the grounded facts) as the grounded task's."""
    grounded, lifted = _pair(domain)
    mapper, expander = StateMapper(grounded, lifted), Expander(lifted)
    states = reached_states(grounded, 100)
    assert len(states) > 5
    mismatches = [m for w in states if (m := compare_state(mapper, expander, w)) is not None]
    assert mismatches == []
    # the reachable atoms cover the grounded facts (some more: the translator's mutex pruning)
    assert set(grounded.facts) <= set(lifted.facts)


@needs_ipc
def test_a_broken_successor_is_reported():
    """The comparison itself can fail: a lifted successor with a fact removed differs."""
    grounded, lifted = _pair("ferry")
    mapper, expander = StateMapper(grounded, lifted), Expander(lifted)
    apply = expander.apply
    expander.apply = lambda state, row: apply(state, row)[1:]  # type: ignore[method-assign]
    mismatch = compare_state(mapper, expander, grounded.init.words)
    assert mismatch is not None and mismatch.successors_differ


@needs_ipc
@pytest.mark.parametrize("domain", ["blocksworld", "childsnack", "ferry", "rovers", "sokoban", "transport"])
def test_lifted_plans_replay_on_the_grounded_task(domain):
    grounded, lifted = _pair(domain)
    result = lifted_gbfs(lifted, "goal_count", max_evaluations=200_000)
    assert result.solved and result.cost == len(result.plan)
    grounded.validate_plan(result.plan)
    Expander(lifted).validate_plan(result.plan)
    with pytest.raises(PlanError):
        Expander(lifted).validate_plan(result.plan[:-1])


@needs_ipc
def test_lifted_plans_pass_the_independent_validator():
    pytest.importorskip("unified_planning")
    from pddlgym_sl.independent_validation import validate_plan_files

    for domain in ("childsnack", "transport", "satellite"):
        files = (IPC / domain / "domain.pddl", IPC / domain / EASY)
        result = lifted_gbfs(load_lifted_task(*files), "hff", max_evaluations=100_000)
        assert result.solved
        assert validate_plan_files(*files, result.plan).valid
        assert not validate_plan_files(*files, result.plan[1:]).valid


def _lazy_gbfs_reference(task) -> tuple[list[str], int, int]:
    """Lazy GBFS with goal count, written plainly in Python over `Expander` (no symmetry): each
    successor queued under its parent's value, with its parent and action only; when popped, it is
    dropped if its state was seen, else tested for the goal, evaluated and expanded (the initial
    state evaluated once); ties first in first out. (plan, evaluations, expansions)."""
    expander = Expander(task)
    goal, goal_neg = task.goal.astype(np.uint32), task.goal_neg.astype(np.uint32)

    def h(state: np.ndarray) -> float:
        return goal_count(goal, goal_neg, state, len(state))

    init = np.ascontiguousarray(task.init, dtype=np.uint32)
    seen: set[bytes] = set()
    queue: list = [(h(init), 0, None, None, [])]
    evaluations, expansions, seq = 1, 0, 1
    while queue:
        key, _, parent, row, plan = heapq.heappop(queue)
        state = init if parent is None else expander.apply(parent, row)
        if state.tobytes() in seen:
            continue
        seen.add(state.tobytes())
        expansions += 1
        if expander.is_goal(state):
            return plan, evaluations, expansions
        if parent is not None:
            evaluations += 1
            key = h(state)
            if key == np.inf:
                continue
        for row in expander.actions(state):
            heapq.heappush(queue, (key, seq, state, row, [*plan, task.action_name(row)]))
            seq += 1
    raise AssertionError("the reference search found no plan")


def test_lazy_gbfs_expands_as_the_plain_reference(write_problem):
    """The engine's lazy GBFS (no symmetry) finds the plain Python reference's plan with its
    evaluations and expansions (one evaluation per expansion, the goal not evaluated)."""
    for seed, size in ((1, 4), (2, 6), (3, 8)):
        problem = domains.generate_problem("ferry", seed=seed, locations=size, cars=size)
        task = load_lifted_task(domains.domain_file("ferry"), write_problem(problem))
        result = lifted_gbfs(task, "goal_count", max_evaluations=None, symmetry=False, lazy=True)
        plan, evaluations, expansions = _lazy_gbfs_reference(task)
        assert result.solved and result.plan == plan
        assert (result.evaluations, result.expansions) == (evaluations, expansions)
        assert result.evaluations == result.expansions - 1
        # every generated successor is a node; only the expanded ones (and dropped duplicates) states
        search = LiftedSearch(task, "goal_count", max_evaluations=None, symmetry=False, lazy=True)
        while search.step():
            pass
        assert search.stored_states == result.generated + 1


@needs_ipc
@pytest.mark.parametrize("domain", ["transport", "rovers", "satellite"])
def test_lazy_lifted_plans_replay_and_pass_the_independent_validator(domain):
    pytest.importorskip("unified_planning")
    from pddlgym_sl.independent_validation import validate_plan_files

    files = (IPC / domain / "domain.pddl", IPC / domain / EASY)
    result = lifted_gbfs(load_lifted_task(*files), "hff", max_evaluations=100_000, lazy=True)
    assert result.solved and result.evaluations < result.expansions
    load_task(*files).validate_plan(result.plan)
    assert validate_plan_files(*files, result.plan).valid
    limited = lifted_gbfs(load_lifted_task(*files), "hff", max_evaluations=3, lazy=True)
    assert limited.status == "evaluation_limit" and limited.evaluations == 3


@needs_ipc
@pytest.mark.parametrize("domain", IPC_DOMAINS)
def test_hmax_and_hadd_equal_the_grounded_values(domain):
    """The relaxed program (projected, with auxiliary atoms) gives Fast Downward's hmax and hadd on
    every state of a grounded search (hFF counts each effect's rule apart: not compared)."""
    grounded, lifted = _pair(domain)
    mapper, program = StateMapper(grounded, lifted), relaxed_program(lifted)
    for name in ("hmax", "hadd"):
        args, h = relaxed_args(lifted, name, program), make_heuristic(name, grounded)
        for words in reached_states(grounded, 50):
            state = mapper.to_lifted(words)
            assert relaxed_value(args, state, len(state)) == h.batch(words[None])[0]


def test_symmetry_keeps_one_successor_per_class(write_problem):
    """Childsnack: sandwiches not yet made are interchangeable, so are the breads and fillings of one
    kind: a few successors instead of all (sandwich, bread, filling) triples, and the same plan length."""
    bread = " ".join(f"b{i}" for i in range(6))
    content = " ".join(f"f{i}" for i in range(6))
    sandwiches = " ".join(f"s{i}" for i in range(6))
    init = " ".join(f"(at_kitchen_bread b{i}) (at_kitchen_content f{i}) (notexist s{i})" for i in range(6))
    init += " (no_gluten_bread b0) (no_gluten_content f0) (at tray1 kitchen) (waiting c0 table1)"
    init += " (waiting c1 table1) (allergic_gluten c0) (not_allergic_gluten c1)"
    text = (
        f"(define (problem p) (:domain childsnack) (:objects c0 c1 - child {bread} - bread-portion "
        f"{content} - content-portion tray1 - tray table1 - place {sandwiches} - sandwich) (:init {init}) "
        "(:goal (and (served c0) (served c1))))"
    )
    domain = IPC / "childsnack" / "domain.pddl"
    if not domain.is_file():
        pytest.skip(f"the IPC 2023 LT tasks are not at {IPC}")
    task = load_lifted_task(domain, write_problem(text))
    full, reduced = Expander(task).actions(task.init), Expander(task, symmetry=True).actions(task.init)
    assert len(full) == 6 * 6 * 6 + 6 * 1 * 1 + 1  # make_sandwich, its gluten-free version, move_tray
    assert len(reduced) == 2 * 2 + 1 + 1
    assert {tuple(r) for r in reduced} <= {tuple(r) for r in full}
    cls, rank = object_classes(task, task.init)
    sandwich = [task.objects.index(f"s{i}") for i in range(6)]
    assert len({int(cls[o]) for o in sandwich}) == 1 and sorted(int(rank[o]) for o in sandwich) == list(
        range(6)
    )
    with_sym = lifted_gbfs(task, "goal_count", max_evaluations=None)
    without = lifted_gbfs(task, "goal_count", max_evaluations=None, symmetry=False)
    assert with_sym.solved and without.solved
    assert with_sym.generated < without.generated
    Expander(task).validate_plan(with_sym.plan)


def test_negative_preconditions_equality_and_constants(write_problem):
    """Ferry's (not (at-ferry ?to)), its not-eq statics and the bundled domain's constants-free
    typing, on a task of our own: lifted successors equal the grounded ones in every state of a
    whole search."""
    from tests.problems import FERRY_3_2

    path = write_problem(FERRY_3_2)
    grounded = load_task(domains.domain_file("ferry"), path)
    lifted = load_lifted_task(domains.domain_file("ferry"), path)
    mapper, expander = StateMapper(grounded, lifted), Expander(lifted)
    for words in reached_states(grounded, 1000):
        assert compare_state(mapper, expander, words) is None


def test_auto_grounds_small_tasks_and_lifts_large_ones(write_problem):
    from tests.problems import FERRY_3_2

    domain_file = domains.domain_file("ferry")
    small = write_problem(FERRY_3_2)
    loaded = load_for_search(domain_file, small, "auto")
    assert loaded.grounding == "ground" and not loaded.lifted and loaded.reason == ""
    big = write_problem(domains.generate_problem("ferry", seed=1, locations=60, cars=60))
    domain = parse_domain(domain_file)
    mode, why = choose_grounding(domain, parse_problem(big, domain), memory_limit=1)
    assert mode == "lifted" and "more than the 1 MiB limit" in why
    loaded = load_for_search(domain_file, big, "auto", memory_limit=1)
    assert loaded.lifted and "estimated" in loaded.reason
    assert load_for_search(domain_file, small, "lifted").lifted
    with pytest.raises(ConfigError, match="grounding must be one of"):
        load_for_search(domain_file, small, "partial")


def test_plan_command_says_it_planned_lifted(write_problem, capsys):
    from tests.problems import FERRY_3_2

    argv = [str(domains.domain_file("ferry")), str(write_problem(FERRY_3_2))]
    assert plan_main([*argv, "--grounding", "lifted", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["solved"] and out["grounding"] == "lifted" and out["plan"][0].startswith("(")
    assert plan_main([*argv, "--grounding", "lifted", "--heuristic", "goal_count"]) == 0
    text = capsys.readouterr().out
    assert "grounding: lifted" in text and "lifted gbfs + goal_count" in text
    assert plan_main([*argv, "--grounding", "lifted", "--lifted-search", "lazy", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["solved"] and out["lifted_search"] == "lazy" and out["evaluations"] == out["expansions"] - 1
    assert plan_main([*argv, "--grounding", "lifted", "--lifted-search", "lazy"]) == 0
    assert "lifted lazy gbfs + hff" in capsys.readouterr().out
    assert plan_main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["grounding"] == "ground"
    assert plan_main([*argv, "--grounding", "lifted", "--heuristic", "lmcut"]) == 2
    assert "has no lifted version" in capsys.readouterr().err


def test_lifted_search_limits(write_problem):
    task = lifted_task(
        parse_domain(domains.domain_file("ferry")),
        parse_problem(write_problem(domains.generate_problem("ferry", seed=2, locations=8, cars=8)),
                      parse_domain(domains.domain_file("ferry"))),
    )  # fmt: skip
    assert lifted_gbfs(task, "blind", max_evaluations=5).status == "evaluation_limit"
    result = lifted_gbfs(task, "blind", max_evaluations=None, time_limit=0.05)
    assert result.status in ("time_limit", "solved") and result.seconds < 5
    assert lifted_gbfs(task, "blind", max_evaluations=None, memory_limit=1).status == "memory_limit"
    unsolvable = lifted_task(
        parse_domain(domains.domain_file("ferry")),
        parse_problem(write_problem(FERRY_UNREACHABLE), parse_domain(domains.domain_file("ferry"))),
    )
    assert not unsolvable.solvable
    assert lifted_gbfs(unsolvable, "goal_count").status == "exhausted"
    assert np.array_equal(unsolvable.init, np.sort(unsolvable.init))


FERRY_UNREACHABLE = """(define (problem p) (:domain ferry) (:objects l0 l1 c0)
 (:init (location l0) (location l1) (car c0) (not-eq l0 l1) (not-eq l1 l0) (at-ferry l0) (empty-ferry)
  (at c0 l0))
 (:goal (and (at c0 c0))))
"""
