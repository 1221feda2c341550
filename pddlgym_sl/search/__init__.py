"""Search algorithms as plain functions returning a `SearchResult`.

`gbfs` is the paper's evaluation algorithm (eager GBFS with a node-evaluation budget); `astar`
gives optimal plans. Both are Fast Downward's eager search on a compiled engine (`engine`) and
take a heuristic name, a heuristic object with ``batch(states)`` or a plain batch function.

`CONFIDENCE_SEARCHES` holds the confidence-aware searches of Heller et al. (SoCS 2022,
`confidence`): they take a heuristic that returns values *and confidences* for a batch, and a
threshold (`thresholds`) below which a state is unconfident.
"""

from pddlgym_sl.search.astar import astar
from pddlgym_sl.search.confidence import ConfidenceHeuristic, Threshold, confidence_gbfs, dual_gbfs
from pddlgym_sl.search.driver import BatchEvaluator, BatchHeuristic
from pddlgym_sl.search.gbfs import gbfs
from pddlgym_sl.search.result import SearchResult

SEARCHES = {"gbfs": gbfs, "astar": astar}
CONFIDENCE_SEARCHES = {"gbfs": confidence_gbfs, "dual": dual_gbfs}
"""Searches of a confidence heuristic: single-queue GBFS with pruning, dual-queue GBFS with hFF."""

__all__ = [
    "CONFIDENCE_SEARCHES",
    "SEARCHES",
    "BatchEvaluator",
    "BatchHeuristic",
    "ConfidenceHeuristic",
    "SearchResult",
    "Threshold",
    "astar",
    "confidence_gbfs",
    "dual_gbfs",
    "gbfs",
]
