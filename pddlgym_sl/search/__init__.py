"""Search algorithms as plain functions returning a `SearchResult`.

`gbfs` is the paper's evaluation algorithm (eager GBFS with a node-evaluation budget); `astar`
gives optimal plans. Both are Fast Downward's eager search on a compiled engine (`engine`) and
take a heuristic name, a heuristic object with ``batch(states)`` or a plain batch function.
`anytime` runs `gbfs`, then restarts GBFS after each plan with the incumbent's cost as an upper
bound (pruning, and u = C − g(s) for heuristics that take it); `anytime_without_u` is its
ablation without u.

`CONFIDENCE_SEARCHES` holds the confidence-aware searches of Heller et al. (SoCS 2022,
`confidence`): they take a heuristic that returns values *and confidences* for a batch, and a
threshold (`thresholds`) below which a state is unconfident.
"""

from pddlgym_sl.search.anytime import AnytimeResult, anytime, anytime_without_u
from pddlgym_sl.search.astar import astar
from pddlgym_sl.search.confidence import ConfidenceHeuristic, Threshold, confidence_gbfs, dual_gbfs
from pddlgym_sl.search.driver import BatchEvaluator, BatchHeuristic
from pddlgym_sl.search.gbfs import gbfs
from pddlgym_sl.search.result import SearchResult

SEARCHES = {"gbfs": gbfs, "astar": astar, "anytime": anytime, "anytime-no-u": anytime_without_u}
CONFIDENCE_SEARCHES = {"gbfs": confidence_gbfs, "dual": dual_gbfs}
"""Searches of a confidence heuristic: single-queue GBFS with pruning, dual-queue GBFS with hFF."""

__all__ = [
    "CONFIDENCE_SEARCHES",
    "SEARCHES",
    "AnytimeResult",
    "BatchEvaluator",
    "BatchHeuristic",
    "ConfidenceHeuristic",
    "SearchResult",
    "Threshold",
    "anytime",
    "anytime_without_u",
    "astar",
    "confidence_gbfs",
    "dual_gbfs",
    "gbfs",
]
