"""PDDL reading: a line-aware reader and validator in front of the grounder.

`reader` tokenizes the text into a line-numbered tree, `validate` (with `checks`) checks it
against the fragment we compile and returns a `Domain` / `Problem` (see `schema`) holding a
canonical tree for the grounder (`pddlgym_sl.translate`). Every failure is a `PDDLError` naming
the file, the line where known, and the cause.
"""

from pddlgym_sl.pddl.load import (
    parse_domain,
    parse_domain_string,
    parse_problem,
    parse_problem_string,
    pddl_file_problem,
    read_pddl_file,
)
from pddlgym_sl.pddl.schema import Domain, DomainSchema, Problem

__all__ = [
    "Domain",
    "DomainSchema",
    "Problem",
    "parse_domain",
    "parse_domain_string",
    "parse_problem",
    "parse_problem_string",
    "pddl_file_problem",
    "read_pddl_file",
]
