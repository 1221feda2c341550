"""The searches an evaluation runs, by name: ``--search`` and the confidence-aware options.

Every entry of `EVAL_SEARCHES` is ``(task, heuristic, SearchOptions) -> SearchResult``: the engine's
GBFS (or, with a confidence threshold, the single-queue GBFS that prunes unconfident states), the
dual-queue GBFS with hFF, and every other search of `pddlgym_sl.search.SEARCHES` under the same
budget. Importing this module imports no torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pddlgym_sl.search import SEARCHES, SearchResult, Threshold, confidence_gbfs, dual_gbfs, gbfs
from pddlgym_sl.search.thresholds import THRESHOLDS

__all__ = [
    "CONFIDENCE_AWARE",
    "DEFAULT_SEARCH",
    "EVAL_SEARCHES",
    "PRUNE_CHOICES",
    "SEARCH_NAMES",
    "SearchOptions",
    "config_label",
    "on_the_engine",
]


@dataclass(frozen=True)
class SearchOptions:
    """How a problem is searched: the evaluation budget and, for the confidence-aware searches, the
    learned heuristic's threshold (None: none) and whether it prioritizes instead of pruning;
    whether the time and memory limits cover loading and grounding the task too; how a task loaded
    lifted is searched (`pddlgym_sl.lifted.mode.LIFTED_SEARCHES`)."""

    limit: int
    threshold: Threshold | None = None
    prioritize: bool = False
    time_limit: float | None = None
    memory_limit: float | None = None
    covers_grounding: bool = False
    grounding: str = "ground"
    lifted_search: str = "eager"


def _single_queue(task, heuristic, options: SearchOptions) -> SearchResult:
    """The engine's GBFS, or with a threshold the single-queue GBFS that prunes unconfident states."""
    if options.threshold is None:
        return gbfs(
            task,
            heuristic,
            max_evaluations=options.limit,
            time_limit=options.time_limit,
            memory_limit=options.memory_limit,
        )
    return confidence_gbfs(
        task, heuristic, options.threshold, max_evaluations=options.limit, time_limit=options.time_limit
    )


def _dual_queue(task, heuristic, options: SearchOptions) -> SearchResult:
    """Dual-queue GBFS with hFF (pruning on the learned queue, or the prioritizing queue)."""
    return dual_gbfs(
        task,
        heuristic,
        options.threshold,
        options.prioritize,
        max_evaluations=options.limit,
        time_limit=options.time_limit,
    )


def _plain(name: str):
    """A search of `pddlgym_sl.search.SEARCHES` under the budget (no confidence threshold)."""

    def search(task, heuristic, options: SearchOptions) -> SearchResult:
        return SEARCHES[name](
            task,
            heuristic,
            max_evaluations=options.limit,
            time_limit=options.time_limit,
            memory_limit=options.memory_limit,
        )

    return search


CONFIDENCE_AWARE = ("gbfs", "dual")
"""The searches that take a confidence threshold (``--prune``)."""
EVAL_SEARCHES = {
    "gbfs": _single_queue,
    "dual": _dual_queue,
    **{name: _plain(name) for name in SEARCHES if name != "gbfs"},
}
"""``--search``: name -> ``(task, heuristic, SearchOptions) -> SearchResult``."""
DEFAULT_SEARCH = "gbfs"
SEARCH_NAMES = tuple(EVAL_SEARCHES)
PRUNE_CHOICES = ("none", *THRESHOLDS)  # = agents.confidence.THRESHOLD_KINDS
_PRUNE_LETTERS = {"mean": "M", "adaptive": "A"}  # the paper's configuration names (Table 2)
_PRIORITIZE_LETTERS = {"mean": "PM", "adaptive": "P"}


def on_the_engine(search: str, prunes: bool) -> bool:
    """Whether the search runs on the engine, which takes a memory limit: not the confidence-aware
    ones, ``dual`` and a pruning ``gbfs`` (their queues are Python's)."""
    return search != "dual" and not prunes


def config_label(config: Any) -> str:
    """The paper's name of a search configuration (Table 2) from a config's ``prune``,
    ``prioritize`` and ``threshold``: ``Base`` (confidence-unaware), ``M<X>`` / ``A<X>`` (mean /
    adaptive threshold pruning X% of the training states), ``P<X>`` / ``PM<X>`` (prioritizing queue
    with the adaptive / mean threshold)."""
    if config.prune == "none":
        return "Base"
    letters = _PRIORITIZE_LETTERS if config.prioritize else _PRUNE_LETTERS
    return f"{letters[config.prune]}{config.threshold:g}"
