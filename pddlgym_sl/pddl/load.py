"""Parse PDDL domain and problem text into validated `Domain` / `Problem` records.

Two stages, each reporting through `PDDLError` with the source file (and line where known):

1. `reader.read` turns the text into a line-numbered tree (one ``(define ...)`` form);
2. `validate.check_domain` / `validate.check_problem` check it against the fragment we compile
   and return the `Domain` / `Problem` with a canonical tree, which `pddlgym_sl.translate`
   hands to Fast Downward's translator for grounding.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from pddlgym_sl.errors import ConfigError, InputLimitError, ParseError, PDDLError
from pddlgym_sl.limits import limit_from_env
from pddlgym_sl.pddl.reader import read
from pddlgym_sl.pddl.schema import Domain, Problem
from pddlgym_sl.pddl.validate import check_domain, check_problem

MAX_FILE_BYTES_VAR = "PDDLGYM_SL_MAX_FILE_BYTES"
DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024
"""Largest PDDL file read: 8 MiB, six times the largest IPC 2023 LT task (1.4 MB); reading costs up to
about 120 bytes of memory per byte of input, so this bounds a file at about 1 GB. Change it with
``$PDDLGYM_SL_MAX_FILE_BYTES``."""


def max_file_bytes() -> int:
    """The file-size limit in force (`DEFAULT_MAX_FILE_BYTES` unless the environment sets one)."""
    return limit_from_env(MAX_FILE_BYTES_VAR, DEFAULT_MAX_FILE_BYTES)


def pddl_file_problem(path: str | Path) -> str | None:
    """Why `path` cannot be read as a PDDL file, said precisely (``file not found``, ``is a
    directory, not a PDDL file``, ``cannot read file (a symbolic link loop)``, ``not a regular file
    (a FIFO)``, ...), or None when it is a regular file. Looks at the file's kind only (a FIFO
    would block a reader forever); every command and the environments use it, so they say the same."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "file not found" if not os.path.islink(path) else "file not found (a broken symbolic link)"
    except OSError as exc:
        why = "a symbolic link loop" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        return f"cannot read file ({why})"
    if stat.S_ISDIR(mode):
        return "is a directory, not a PDDL file"
    if not stat.S_ISREG(mode):
        return f"not a regular file ({'a FIFO' if stat.S_ISFIFO(mode) else 'a device or socket'})"
    return None


def read_pddl_file(path: str | Path) -> str:
    """The file's text; `PDDLError` when missing, not a regular file or unreadable,
    `InputLimitError` when larger than `max_file_bytes`, `ParseError` (with line) when not UTF-8.

    The kind of file is checked before it is opened (a FIFO would block forever, ``/dev/zero``
    never ends) and at most the limit plus one byte is read, so no input costs more memory than
    the limit."""
    path = Path(path)
    limit = max_file_bytes()
    problem = pddl_file_problem(path)
    if problem is not None:
        raise PDDLError(problem, file=path)
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise PDDLError(f"cannot read file ({exc.strerror or exc})", file=path) from None
    if len(data) > limit:
        raise InputLimitError(
            f"larger than the {limit:,}-byte limit for PDDL files (set ${MAX_FILE_BYTES_VAR} to raise it)",
            file=path,
        )
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
    return parse_domain_string(read_pddl_file(path), source=str(path))


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
    return parse_problem_string(read_pddl_file(path), domain, source=str(path))
