"""Parse PDDL domain and problem text into pyperplan's `Domain` / `Problem` objects.

Three stages, each reporting through `PDDLError` with the source file (and line where known):

1. `reader.read` turns the text into a line-numbered tree (one ``(define ...)`` form);
2. `validate.check_domain` / `validate.check_problem` check it against the STRIPS + typing
   fragment and return a canonical tree;
3. pyperplan's parser and tree visitors build the `Domain` / `Problem` from that tree.

pyperplan's own exceptions (ValueError, its ParseError/SemanticError, ...) never escape: after
validation they would be a bug in our checks, and they are still reported as `PDDLError`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pyperplan.pddl import parser as _pp
from pyperplan.pddl.errors import ParseError as _PyperplanParseError
from pyperplan.pddl.lisp_iterators import LispIterator
from pyperplan.pddl.pddl import Domain, Problem
from pyperplan.pddl.tree_visitor import SemanticError as _PyperplanSemanticError
from pyperplan.pddl.tree_visitor import TraversePDDLDomain, TraversePDDLProblem

from pddlgym_sl.errors import ConfigError, ParseError, PDDLError, SemanticError
from pddlgym_sl.pddl.reader import read
from pddlgym_sl.pddl.schema import schema_of
from pddlgym_sl.pddl.validate import check_domain, check_problem

_T = TypeVar("_T")


def _read_text(path: str | Path) -> str:
    """The file's text; `PDDLError` when unreadable, `ParseError` (with line) when not UTF-8."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PDDLError("file not found", file=path) from None
    except OSError as exc:
        raise PDDLError(f"cannot read file ({exc.strerror or exc})", file=path) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"binary data: not a UTF-8 text file (undecodable byte 0x{data[exc.start]:02x})",
            file=path,
            line=data.count(b"\n", 0, exc.start) + 1,
        ) from None


def _wrap(source: str, fn: Callable[[], _T]) -> _T:
    """Run `fn`, turning anything but a `PDDLError` into one that names `source`."""
    try:
        return fn()
    except PDDLError:
        raise
    except _PyperplanSemanticError as exc:
        raise SemanticError(str(getattr(exc, "value", exc)), file=source) from None
    except (_PyperplanParseError, ValueError) as exc:
        raise ParseError(str(exc), file=source) from None
    except Exception as exc:
        raise ParseError(f"malformed PDDL ({type(exc).__name__}: {exc})", file=source) from None


def _require_text(text: object, source: str) -> None:
    if not isinstance(text, str):
        raise ConfigError(f"PDDL text must be a str, not {type(text).__name__}", file=source)


def parse_domain_string(text: str, source: str = "<domain>") -> Domain:
    """Parse domain text; `source` names it in error messages."""
    _require_text(text, source)

    def run() -> Domain:
        _, canonical = check_domain(read(text, source), source)
        visitor = TraversePDDLDomain()
        _pp.parse_domain_def(LispIterator(canonical)).accept(visitor)
        return visitor.domain

    return _wrap(source, run)


def parse_domain(path: str | Path) -> Domain:
    """Parse a domain file."""
    return parse_domain_string(_read_text(path), source=str(path))


def parse_problem_string(text: str, domain: Domain, source: str = "<problem>") -> Problem:
    """Parse problem text against an already parsed `domain` (from `parse_domain`)."""
    _require_text(text, source)
    if not isinstance(domain, Domain):
        raise ConfigError(
            f"domain must be a pyperplan Domain from parse_domain, not {type(domain).__name__}", file=source
        )

    def run() -> Problem:
        canonical = check_problem(read(text, source), schema_of(domain), source)
        visitor = TraversePDDLProblem(domain)
        _pp.parse_problem_def(LispIterator(canonical)).accept(visitor)
        return visitor.get_problem()

    return _wrap(source, run)


def parse_problem(path: str | Path, domain: Domain) -> Problem:
    """Parse a problem file against an already parsed `domain`."""
    return parse_problem_string(_read_text(path), domain, source=str(path))
