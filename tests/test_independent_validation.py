"""Plans checked by Unified Planning's validator (`pddlgym_sl.independent_validation`): the plans our
searches find are valid by its own reading of the PDDL files, and broken plans are not."""

from __future__ import annotations

from pathlib import Path

import pytest

import domains
from pddlgym_sl.independent_validation import validate_plan_files
from pddlgym_sl.search import gbfs
from pddlgym_sl.task import load_task

pytest.importorskip("unified_planning")
IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"


def _bundled(tmp_path, domain: str, seed: int = 1) -> tuple[Path, Path]:
    text = domains.generate_problem(domain, seed=seed, **dict(domains.DOMAINS[domain].plan_defaults))
    # visitall's generated problem names hold a '.' (its ratio, "r1.0"), which PDDL's names do not
    # allow and Unified Planning's reader refuses (ours accepts it)
    name = text.split("(problem ", 1)[1].split(")", 1)[0]
    problem = tmp_path / f"{domain}.pddl"
    problem.write_text(text.replace(name, name.replace(".", "_"), 1))
    return domains.domain_file(domain), problem


@pytest.mark.parametrize("domain", domains.DOMAIN_NAMES)
def test_our_plans_are_valid_and_broken_ones_are_not(tmp_path, domain):
    domain_file, problem = _bundled(tmp_path, domain)
    plan = gbfs(load_task(domain_file, problem), "hff").plan
    assert validate_plan_files(domain_file, problem, plan).valid
    assert not validate_plan_files(domain_file, problem, plan[:-1]).valid  # the goal not reached
    if len(plan) > 2:
        swapped = [plan[1], plan[0], *plan[2:]]
        check = validate_plan_files(domain_file, problem, swapped)
        assert check.valid == _replays(domain_file, problem, swapped)
    unknown = validate_plan_files(domain_file, problem, ["(fly-to-the-moon x)", *plan])
    assert not unknown.valid and "step 1" in unknown.reason


def _replays(domain_file, problem, plan) -> bool:
    try:
        load_task(domain_file, problem).validate_plan(plan)
    except Exception:
        return False
    return True


@pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")
@pytest.mark.parametrize("domain", ["childsnack", "ferry", "satellite", "transport"])
def test_plans_of_ipc_tasks_with_negative_preconditions_and_types(domain):
    """childsnack, ferry and satellite have negative preconditions, transport types: Unified
    Planning accepts GBFS + hFF's plans of their first easy tasks."""
    domain_file = IPC / domain / "domain.pddl"
    for problem in sorted((IPC / domain / "testing-easy").glob("p*.pddl"))[:2]:
        result = gbfs(load_task(domain_file, problem), "hff", max_evaluations=200_000)
        assert result.solved
        assert validate_plan_files(domain_file, problem, result.plan).valid
