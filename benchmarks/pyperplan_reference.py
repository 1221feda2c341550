"""pyperplan, the pure-Python reference the benchmarks time our kernels against: its own parser and
grounder, so that nothing of ours is on its side of the comparison."""

from __future__ import annotations

from pathlib import Path

from pyperplan.grounding import ground
from pyperplan.pddl.parser import Parser


def pyperplan_task(domain_file: str | Path, problem_file: str | Path):
    """pyperplan's grounded task of a STRIPS domain/problem pair."""
    parser = Parser(str(domain_file), str(problem_file))
    return ground(parser.parse_problem(parser.parse_domain()))
