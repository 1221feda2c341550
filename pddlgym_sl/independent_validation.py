"""Plans checked by an independent validator: Unified Planning's `SequentialPlanValidator`.

Every plan this project reports is replayed by its own task (`CompiledTask.validate_plan`), which
runs on the grounding of Fast Downward's translator that the search used too; a fault shared by
the grounding and the search would pass that replay. Unified Planning (the ``unified-planning``
package, in the ``[test]`` extra) reads the PDDL files itself (typing, negative preconditions,
equality, constants) and simulates the plan on its own lifted semantics, so a plan it accepts is
valid independently of our reader and grounder.

    from pddlgym_sl.independent_validation import validate_plan_files
    validate_plan_files(domain_file, problem_file, ["(board c0 l1)", ...])   # -> PlanCheck
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pddlgym_sl.errors import ConfigError, MissingExtraError

__all__ = ["PlanCheck", "validate_plan_files"]


@dataclass(frozen=True)
class PlanCheck:
    """The validator's verdict: ``valid``, and its reason when not."""

    valid: bool
    reason: str = ""


def _unified_planning():
    try:
        import unified_planning.shortcuts as up
    except ImportError:
        raise MissingExtraError(
            "the independent plan validator needs Unified Planning: pip install unified-planning "
            "(in the [test] extra)"
        ) from None
    up.get_environment().credits_stream = None  # no banner per validation
    return up


@functools.lru_cache(maxsize=4)
def _problem(domain_file: str, problem_file: str):
    """The task as Unified Planning reads it (the last few kept: several plans of one task)."""
    _unified_planning()
    from unified_planning.io import PDDLReader

    return PDDLReader().parse_problem(domain_file, problem_file)


def validate_plan_files(domain_file: str | Path, problem_file: str | Path, plan: Sequence[str]) -> PlanCheck:
    """Check `plan` (action names such as ``"(board c0 l1)"``) on the PDDL task of the two files
    with Unified Planning's `SequentialPlanValidator`; a name the task does not have is invalid."""
    _unified_planning()
    from unified_planning.engines import SequentialPlanValidator, ValidationResultStatus
    from unified_planning.plans import ActionInstance, SequentialPlan

    problem = _problem(str(domain_file), str(problem_file))
    objects = {o.name.lower(): o for o in problem.all_objects}
    actions = {a.name.lower(): a for a in problem.actions}
    steps = []
    for k, name in enumerate(plan, start=1):
        parts = name.strip().strip("()").lower().split()
        if not parts or parts[0] not in actions or any(p not in objects for p in parts[1:]):
            return PlanCheck(False, f"step {k}: {name!r} is no action of the task")
        steps.append(ActionInstance(actions[parts[0]], [objects[p] for p in parts[1:]]))
    try:
        result = SequentialPlanValidator().validate(problem, SequentialPlan(steps))
    except Exception as exc:  # the validator's own failure on an odd task is not a verdict
        raise ConfigError(f"Unified Planning could not validate a plan: {exc}", file=problem_file) from None
    if result.status == ValidationResultStatus.VALID:
        return PlanCheck(True)
    return PlanCheck(False, str(result.reason or result.status))
