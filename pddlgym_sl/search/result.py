"""`SearchResult`: what every search function returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class SearchResult:
    """Outcome of one search run.

    Attributes:
        solved: a plan was found.
        plan: action names of the plan (empty when unsolved or when the initial state is a goal).
        cost: plan cost (unit costs: its length); None when unsolved.
        evaluations: heuristic evaluations (states whose value was computed, the initial one included).
        expansions: states expanded.
        generated: successor states generated (duplicates included).
        seconds: wall-clock time of the search (excluding task loading).
        status: "solved", "evaluation_limit" (the next evaluation would exceed the budget),
            "exhausted" (the reachable space with finite heuristic values was searched: unsolvable
            as far as the heuristic's dead-end detection goes) or "time_limit".
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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (keys: solved, plan, cost, evaluations, expansions, generated, seconds, status)."""
        d = asdict(self)
        d.pop("plan_indices")
        return d
