"""Parse PDDL domain and problem text into validated `Domain` / `Problem` records.

Two stages, each reporting through `PDDLError` with the source file (and line where known):

1. `reader.read` turns the text into a line-numbered tree (one ``(define ...)`` form);
2. `validate.check_domain` / `validate.check_problem` check it against the fragment we compile
   and return the `Domain` / `Problem` with a canonical tree, which `pddlgym_sl.translate`
   hands to Fast Downward's translator for grounding.
"""

from __future__ import annotations

from pathlib import Path

from pddlgym_sl.errors import ConfigError, ParseError, PDDLError
from pddlgym_sl.pddl.reader import read
from pddlgym_sl.pddl.schema import Domain, Problem
from pddlgym_sl.pddl.validate import check_domain, check_problem


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


def _require_text(text: object, source: str) -> None:
    if not isinstance(text, str):
        raise ConfigError(f"PDDL text must be a str, not {type(text).__name__}", file=source)


def parse_domain_string(text: str, source: str = "<domain>") -> Domain:
    """Parse and validate domain text; `source` names it in error messages."""
    _require_text(text, source)
    return check_domain(read(text, source), source)


def parse_domain(path: str | Path) -> Domain:
    """Parse and validate a domain file."""
    return parse_domain_string(_read_text(path), source=str(path))


def parse_problem_string(text: str, domain: Domain, source: str = "<problem>") -> Problem:
    """Parse and validate problem text against an already parsed `domain` (from `parse_domain`)."""
    _require_text(text, source)
    if not isinstance(domain, Domain):
        raise ConfigError(
            f"domain must be a Domain from parse_domain, not {type(domain).__name__}", file=source
        )
    return check_problem(read(text, source), domain, source)


def parse_problem(path: str | Path, domain: Domain) -> Problem:
    """Parse and validate a problem file against an already parsed `domain`."""
    return parse_problem_string(_read_text(path), domain, source=str(path))
