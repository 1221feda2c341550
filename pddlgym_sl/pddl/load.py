"""Parse PDDL domain and problem text into pyperplan's `Domain` / `Problem` objects.

Every failure becomes a `PDDLError` subclass naming the source file (and line where known);
pyperplan's own exceptions (ValueError, SemanticError, ParseError, ...) never escape.
"""

from __future__ import annotations

from pathlib import Path

from pyperplan.pddl import parser as _pp
from pyperplan.pddl.errors import ParseError as _PyperplanParseError
from pyperplan.pddl.pddl import Domain, Problem
from pyperplan.pddl.tree_visitor import SemanticError as _PyperplanSemanticError
from pyperplan.pddl.tree_visitor import TraversePDDLDomain, TraversePDDLProblem

from pddlgym_sl.errors import ParseError, PDDLError, SemanticError


def _read_text(path: str | Path) -> str:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PDDLError("file not found", file=path) from None
    except OSError as exc:
        raise PDDLError(f"cannot read file ({exc.strerror})", file=path) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not a UTF-8 text file (undecodable byte at offset {exc.start})", file=path) from None


def _lisp(text: str, source: str):
    try:
        return _pp.parse_lisp_iterator(text.split("\n"))
    except StopIteration:
        raise ParseError("empty file: expected '(define ...)'", file=source) from None
    except _PyperplanParseError as exc:
        raise ParseError(str(exc), file=source) from None


def _wrap(source: str, fn, *args):
    try:
        return fn(*args)
    except PDDLError:
        raise
    except _PyperplanSemanticError as exc:
        raise SemanticError(str(exc.value) if hasattr(exc, "value") else str(exc), file=source) from None
    except (_PyperplanParseError, ValueError) as exc:
        raise ParseError(str(exc), file=source) from None
    except (KeyError, IndexError, AttributeError, TypeError, StopIteration, RecursionError) as exc:
        raise ParseError(f"malformed PDDL ({type(exc).__name__}: {exc})", file=source) from None


def parse_domain_string(text: str, source: str = "<domain>") -> Domain:
    """Parse domain text; `source` names it in error messages."""

    def run() -> Domain:
        ast = _pp.parse_domain_def(_lisp(text, source))
        visitor = TraversePDDLDomain()
        ast.accept(visitor)
        return visitor.domain

    return _wrap(source, run)


def parse_domain(path: str | Path) -> Domain:
    """Parse a domain file."""
    return parse_domain_string(_read_text(path), source=str(path))


def parse_problem_string(text: str, domain: Domain, source: str = "<problem>") -> Problem:
    """Parse problem text against an already parsed `domain`."""

    def run() -> Problem:
        ast = _pp.parse_problem_def(_lisp(text, source))
        visitor = TraversePDDLProblem(domain)
        ast.accept(visitor)
        return visitor.get_problem()

    return _wrap(source, run)


def parse_problem(path: str | Path, domain: Domain) -> Problem:
    """Parse a problem file against an already parsed `domain`."""
    return parse_problem_string(_read_text(path), domain, source=str(path))
