"""`SearchResult`: what every search function returns; `evaluation_budget`: the limits it is given."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.task import CompiledTask


@dataclass
class SearchResult:
    """Outcome of one search run.

    Attributes:
        solved: a plan was found.
        plan: action names of the plan (empty when unsolved or when the initial state is a goal).
        cost: plan cost (unit costs: its length); None when unsolved.
        evaluations: states evaluated by the heuristic (the initial one included), as Fast
            Downward's "Evaluated N state(s)".
        expansions: states expanded (the goal state included, as Fast Downward counts).
        generated: successor states generated (duplicates included).
        seconds: wall-clock time of the search (excluding task loading).
        status: "solved", "evaluation_limit" (the next evaluation would exceed the budget),
            "exhausted" (the reachable space with finite heuristic values was searched: unsolvable
            as far as the heuristic's dead-end detection goes), "pruned" (a confidence-aware search's
            open lists ran empty after it pruned states: not a proof of anything), "time_limit" or
            "memory_limit" (the search would have passed its memory limit).
        plan_indices: action indices of the plan.
    """

    solved: bool
    plan: list[str]
    cost: int | None
    evaluations: int
    expansions: int
    generated: int
    seconds: float
    status: str
    plan_indices: list[int] = field(default_factory=list, repr=False)

    @classmethod
    def of(
        cls,
        task: CompiledTask,
        status: str,
        plan: list[int] | None,
        seconds: float,
        *,
        evaluations: int,
        expansions: int,
        generated: int,
    ) -> SearchResult:
        """The result of a search that ended with `status` (with the action indices `plan` when
        solved, else None)."""
        solved = status == "solved"
        indices = plan or []
        return cls(
            solved=solved,
            plan=[task.actions[a] for a in indices],
            cost=int(task.fdr.cost[indices].sum()) if solved else None,
            evaluations=evaluations,
            expansions=expansions,
            generated=generated,
            seconds=seconds,
            status=status,
            plan_indices=list(indices),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (keys: solved, plan, cost, evaluations, expansions, generated, seconds, status)."""
        d = asdict(self)
        d.pop("plan_indices")
        return d


def evaluation_budget(max_evaluations: int | None, time_limit: float | None) -> int:
    """The evaluation budget of a search given `max_evaluations` (None: no limit, the largest
    int64; a negative one counts as 0), after checking the limits every search takes: a whole
    number of evaluations and a positive time limit (`ConfigError` otherwise)."""
    if max_evaluations is not None and (
        isinstance(max_evaluations, bool) or int(max_evaluations) != max_evaluations
    ):
        raise ConfigError(f"max_evaluations must be a whole number, not {max_evaluations!r}")
    if time_limit is not None and not time_limit > 0:
        raise ConfigError(f"time_limit must be positive, not {time_limit!r}")
    return int(np.iinfo(np.int64).max) if max_evaluations is None else max(int(max_evaluations), 0)
