"""PDDL reading: pyperplan's parser behind a front end that reports errors as `PDDLError`."""

from pddlgym_sl.pddl.load import (
    parse_domain,
    parse_domain_string,
    parse_problem,
    parse_problem_string,
)

__all__ = ["parse_domain", "parse_domain_string", "parse_problem", "parse_problem_string"]
