"""The translator's two quadratic steps, replaced by `pddlgym_sl.translator_patches`: the same
results as the translator's own code (task for task, and group for group), and a cost that no
longer grows with objects times groups."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

import pddlgym_sl.translate as translate_module
import pddlgym_sl.translator_patches as patches
from pddlgym_sl.pddl import parse_domain, parse_problem, parse_problem_string
from pddlgym_sl.translate import translate
from pddlgym_sl.translator_patches import SetMembershipList, instantiate_groups
from tests.fd_reference import IPC, IPC_DOMAINS

FERRY = Path(__file__).resolve().parents[1] / "domains" / "ferry" / "domain.pddl"


def _ferry_problem(cars: int, locations: int = 3) -> str:
    locs = " ".join(f"l{i}" for i in range(locations))
    cs = " ".join(f"c{i}" for i in range(cars))
    init = " ".join(f"(location l{i})" for i in range(locations))
    init += " " + " ".join(
        f"(not-eq l{i} l{j})" for i in range(locations) for j in range(locations) if i != j
    )
    init += " " + " ".join(f"(car c{i}) (at c{i} l{i % locations})" for i in range(cars))
    return (
        f"(define (problem p) (:domain ferry) (:objects {locs} {cs}) (:init {init} (at-ferry l0) "
        f"(empty-ferry)) (:goal (and (at c0 l1))))"
    )


def _tasks() -> list[tuple[str, object, object]]:
    ferry = parse_domain(FERRY)
    out = [("ferry 40 cars", ferry, parse_problem_string(_ferry_problem(40), ferry))]
    if IPC.is_dir():
        for name in IPC_DOMAINS:
            domain = parse_domain(IPC / name / "domain.pddl")
            out.append((name, domain, parse_problem(IPC / name / "training" / "p10.pddl", domain)))
    return out


@pytest.mark.parametrize("name, domain, problem", _tasks(), ids=lambda x: x if isinstance(x, str) else "")
def test_patched_translation_equals_the_translators_own(name, domain, problem, monkeypatch):
    """Fast Downward's variables, order and operators are what its own code gives, on ferry and
    on one training task of every IPC 2023 LT domain (when present)."""
    patched = translate(domain, problem)
    monkeypatch.setattr(translate_module, "linear_steps", contextlib.nullcontext)
    assert translate(domain, problem) == patched


def test_groups_equal_the_translators_group_for_group(monkeypatch):
    """`instantiate_groups` gives the translator's lists, atom for atom and in order, on the inputs
    the translator hands it (captured from a ferry task of 12 cars and 4 locations)."""
    from fast_downward.translate import fact_groups

    original = fact_groups.instantiate_groups
    calls = []

    def both(groups, task, reachable):
        ours = instantiate_groups(groups, task, reachable)
        calls.append((ours, original(groups, task, reachable)))
        return ours

    ferry = parse_domain(FERRY)
    problem = parse_problem_string(_ferry_problem(12, 4), ferry)
    monkeypatch.setattr(patches, "instantiate_groups", both)  # what linear_steps installs
    translate(ferry, problem)
    assert fact_groups.instantiate_groups is original  # restored after the call
    assert calls and all(ours == theirs for ours, theirs in calls)
    assert sum(len(g) for ours, _ in calls for g in ours) > 12  # groups with many atoms were compared


class _CountingObjects(list):
    """``task.objects`` that counts how often it is iterated or indexed."""

    reads = 0

    def __iter__(self):
        type(self).reads += len(self)
        return super().__iter__()

    def __getitem__(self, k):
        type(self).reads += 1
        return super().__getitem__(k)


def test_group_instantiation_reads_the_objects_once_not_once_per_group():
    """The translator's own step tries every object for every group (groups x objects reads);
    ours reads the object list once plus once per atom it returns."""
    from fast_downward.translate import pddl

    class Task:
        objects = _CountingObjects(pddl.TypedObject(f"o{i}", "object") for i in range(2000))

    groups = [[pddl.Atom("at", [f"o{i}", "?X"])] for i in range(500)]
    reachable = {pddl.Atom("at", [f"o{i}", f"o{(i + 1) % 2000}"]) for i in range(2000)}
    _CountingObjects.reads = 0
    result = instantiate_groups(groups, Task, reachable)
    assert [len(g) for g in result] == [1] * 500
    assert _CountingObjects.reads <= 2000 + 500  # the translator's: 500 * 2000


def test_set_membership_list_is_a_list_with_set_lookups():
    scc = SetMembershipList([3, 1, 2])
    assert scc == [3, 1, 2] and scc[0] == 3 and len(scc) == 3 and list(scc) == [3, 1, 2]
    assert 2 in scc and 5 not in scc
