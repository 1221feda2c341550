"""PDDL reading: a line-aware reader and validator in front of pyperplan's parser.

`reader` tokenizes the text into a line-numbered tree, `validate` (with `checks` and `schema`)
checks it against the STRIPS + typing fragment, and `load` hands the canonical tree to pyperplan.
Every failure is a `PDDLError` naming the file, the line where known, and the cause.
"""

from pddlgym_sl.pddl.load import (
    parse_domain,
    parse_domain_string,
    parse_problem,
    parse_problem_string,
)

__all__ = ["parse_domain", "parse_domain_string", "parse_problem", "parse_problem_string"]
