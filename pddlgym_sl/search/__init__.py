"""Search algorithms as plain functions returning a `SearchResult`.

`gbfs` is the paper's evaluation algorithm (eager GBFS with a node-evaluation budget); `astar`
gives optimal plans. Both are Fast Downward's eager search on a compiled engine (`engine`) and
take a heuristic name, a heuristic object with ``batch(states)`` or a plain batch function.
`anytime` runs `gbfs`, then restarts GBFS after each plan with the incumbent's cost as an upper
bound (pruning, and u = C − g(s) for heuristics that take it); `anytime_without_u` is its
ablation without u.
"""

from pddlgym_sl.search.anytime import AnytimeResult, anytime, anytime_without_u
from pddlgym_sl.search.astar import astar
from pddlgym_sl.search.driver import BatchEvaluator, BatchHeuristic
from pddlgym_sl.search.gbfs import gbfs
from pddlgym_sl.search.result import SearchResult

SEARCHES = {"gbfs": gbfs, "astar": astar, "anytime": anytime, "anytime-no-u": anytime_without_u}

__all__ = [
    "SEARCHES",
    "AnytimeResult",
    "BatchEvaluator",
    "BatchHeuristic",
    "SearchResult",
    "anytime",
    "astar",
    "gbfs",
]
