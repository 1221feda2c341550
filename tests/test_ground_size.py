"""The grounding bound checked before grounding: an upper bound on what the translator grounds,
an estimate of its memory for the whole task, and a typed refusal of a task that would not fit."""

from __future__ import annotations

import pytest

import domains
from pddlgym_sl import load_task
from pddlgym_sl.errors import InputLimitError
from pddlgym_sl.ground_size import DEFAULT_MAX_GROUND_BYTES, estimate, schema_bounds
from pddlgym_sl.pddl import parse_domain, parse_domain_string, parse_problem, parse_problem_string
from tests.fd_reference import IPC, IPC_DOMAINS

# 300 bytes of domain whose one action has 40^7 instances: the translator would try them all
EXPLOSIVE_DOMAIN = """(define (domain boom) (:requirements :strips)
 (:predicates (p ?a) (q ?a ?b ?c ?d ?e ?f ?g))
 (:action go :parameters (?a ?b ?c ?d ?e ?f ?g) :precondition (p ?a)
  :effect (q ?a ?b ?c ?d ?e ?f ?g)))"""


def _explosive_problem(n: int) -> str:
    objects = " ".join(f"o{i}" for i in range(n))
    init = " ".join(f"(p o{i})" for i in range(n))
    goal = "(q o0 o0 o0 o0 o0 o0 o0)"
    return f"(define (problem boom{n}) (:domain boom) (:objects {objects}) (:init {init}) (:goal {goal}))"


def test_explosive_task_is_refused_quickly_with_the_schema_and_bound(tmp_path):
    domain_file, problem_file = tmp_path / "d.pddl", tmp_path / "p.pddl"
    domain_file.write_text(EXPLOSIVE_DOMAIN)
    problem_file.write_text(_explosive_problem(40))
    with pytest.raises(InputLimitError, match=r"'go' up to 163,840,000,000 instances") as info:
        load_task(domain_file, problem_file)  # refused before the translator starts grounding
    assert info.value.file == str(problem_file)
    assert "PDDLGYM_SL_MAX_GROUND_BYTES" in str(info.value)


def test_the_limit_is_configurable(tmp_path, monkeypatch):
    domain_file, problem_file = tmp_path / "d.pddl", tmp_path / "p.pddl"
    domain_file.write_text(EXPLOSIVE_DOMAIN)
    problem_file.write_text(_explosive_problem(3))  # 3^7 = 2,187 instances
    assert len(load_task(domain_file, problem_file).actions) > 0
    monkeypatch.setenv("PDDLGYM_SL_MAX_GROUND_BYTES", "1M")
    with pytest.raises(InputLimitError, match="2,187 instances"):
        load_task(domain_file, problem_file)


def test_static_preconditions_tighten_the_bound():
    domain = parse_domain_string(EXPLOSIVE_DOMAIN)
    text = _explosive_problem(5).replace("(p o3) (p o4)", "")
    assert schema_bounds(domain, parse_problem_string(text, domain)) == {"go": 3 * 5**6}


@pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")
@pytest.mark.parametrize(
    "domain_name",
    [pytest.param(d, marks=pytest.mark.slow) if d in ("rovers", "sokoban") else d for d in IPC_DOMAINS],
)  # rovers and sokoban: half a minute each (-m slow)
def test_bound_covers_what_is_grounded_and_admits_the_ipc_tasks(domain_name):
    """Every training, easy and medium task is estimated far below the limit; the hard tasks
    above it are childsnack's and transport's, whose grounding no IPC 2023 planner fitted in 8 GB.
    The instance bound covers what the translator grounds, schema by schema."""
    domain_file = IPC / domain_name / "domain.pddl"
    domain = parse_domain(domain_file)
    for problem_file in sorted((IPC / domain_name).glob("*/*.pddl")):
        total = estimate(domain, parse_problem(problem_file, domain)).total_bytes
        if problem_file.parent.name != "testing-hard":
            assert total * 8 < DEFAULT_MAX_GROUND_BYTES, problem_file
        elif total > DEFAULT_MAX_GROUND_BYTES:
            assert domain_name in ("childsnack", "transport"), problem_file
    for problem_file in (
        IPC / domain_name / "training" / "p30.pddl",
        min((IPC / domain_name).glob("testing-medium/*")),
    ):
        task = load_task(domain_file, problem_file)
        bounds = schema_bounds(domain, parse_problem(task.problem_file, domain))
        for name, bound in bounds.items():
            assert sum(a.startswith(f"({name} ") or a == f"({name})" for a in task.actions) <= bound, name


def test_preconditions_no_action_can_add_bound_like_static_ones():
    """spanner's ``(at ?s ?l)`` for a spanner: ``walk`` adds ``at`` for men only, so only initial
    atoms satisfy it: ``pickup_spanner`` has at most as many instances as there are initial ``at``
    atoms (10 spanners and the man), not locations x spanners x men."""
    text = """(define (domain sp) (:requirements :typing)
     (:types location locatable - object man spanner - locatable)
     (:predicates (at ?m - locatable ?l - location) (carrying ?m - man ?s - spanner) (link ?x ?y - location))
     (:action walk :parameters (?start ?end - location ?m - man)
      :precondition (and (at ?m ?start) (link ?start ?end)) :effect (and (not (at ?m ?start)) (at ?m ?end)))
     (:action pickup_spanner :parameters (?l - location ?s - spanner ?m - man)
      :precondition (and (at ?m ?l) (at ?s ?l)) :effect (and (not (at ?s ?l)) (carrying ?m ?s))))"""
    domain = parse_domain_string(text)
    locations = " ".join(f"l{i}" for i in range(20))
    links = " ".join(f"(link l{i} l{i + 1})" for i in range(19))
    spanners = " ".join(f"(at s{i} l{i})" for i in range(10))
    problem = parse_problem_string(
        f"(define (problem p) (:domain sp) (:objects {locations} - location m - man "
        f"{' '.join(f's{i}' for i in range(10))} - spanner) (:init (at m l0) {links} {spanners}) "
        "(:goal (carrying m s9)))",
        domain,
    )
    assert schema_bounds(domain, problem)["pickup_spanner"] == 11  # was 20 * 10 * 1


def test_paper_domains_are_far_below_the_limit():
    for name, params in {"blocksworld": {"blocks": 16}, "ferry": {"locations": 14, "cars": 14}}.items():
        domain = parse_domain(domains.domain_file(name))
        text = domains.generate_problem(name, seed=1, **params)
        assert max(schema_bounds(domain, parse_problem_string(text, domain)).values()) < 10**5
