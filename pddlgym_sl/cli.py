"""One wrapper for every ``python -m`` command of the project: the usage line, the errors, a parse-only entry.

Each command module defines how its arguments become a configuration (``parse``: a tyro dataclass
or an argparse parser) and what runs it (``run``), and hands both to a `Command`::

    COMMAND = Command("python -m agents.supervised", tyro_parse(Args, __doc__), train_and_print)

    def main(argv=None) -> int:
        return COMMAND.main(argv)

What every command then does alike:

- its usage and help name it as the user types it (``usage: python -m agents.supervised ...``), not
  as the file that runs it;
- every user error is one line on stderr, ``error: <cause>``, and exit status 2: a bad flag or value
  (tyro's boxes and argparse's two-line messages are folded into the line), a `PDDLError` from
  the work (a missing file, an unknown domain, a device that is not there, a missing extra, a
  run directory that does not hold a run), never a traceback;
- ``--help`` prints the help and exits 0;
- a command that names what an interruption keeps (`Command.interrupt`) ends on Ctrl-C or SIGTERM
  with one line saying so (`pddlgym_sl.parallel.interrupt`), exit status 130 or 143;
- `Command.parse` turns an argument list into the configuration without running anything (the
  test that parses every command of the README and ``docs/`` uses it).

Errors that are not the user's (a bug) keep their traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from pddlgym_sl.errors import ConfigError, PDDLError

__all__ = [
    "ArgumentParser",
    "Command",
    "UsageError",
    "argparse_parse",
    "exit_at_start",
    "one_line",
    "tyro_parse",
]


class UsageError(ConfigError):
    """Command-line arguments that do not parse: an unknown flag, a bad value, a missing argument."""


class ArgumentParser(argparse.ArgumentParser):
    """`argparse.ArgumentParser` whose errors raise `UsageError` (one line, via `Command`)
    instead of printing the usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_BOX = "│╭╮╰╯─┃┏┓┗┛━"


def one_line(text: str) -> str:
    """`text` on one line: its lines joined by single spaces (an error message may span several)."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _fold_tyro_error(text: str) -> str:
    """tyro's error box (a title, the message, rules, help hints) as one line: the message up to the
    first rule, without tyro's ``Error parsing <class>:`` prefix and its list of attempted types."""
    lines = [_ANSI.sub("", line).strip().strip(_BOX).strip() for line in text.splitlines()]
    content, title, started = [], "", False
    for raw in lines:
        if not started:
            if raw:
                title, started = raw.strip("─ ").strip(), True
            continue
        if raw and set(raw) <= set("─━ "):
            if content:
                break
            continue
        if raw:
            content.append(raw)
    message = " ".join(content) or title or one_line(text)
    message = message.split(" Got errors:")[0]
    message = re.sub(r"^Error parsing (?!-)[\w.]+: ", "", message)
    return message.removeprefix("Error parsing ")


def tyro_parse(
    args_class: type,
    description: str | None = None,
    default: Callable[[list[str]], Any] | None = None,
) -> Callable[[str, list[str]], Any]:
    """A ``parse(prog, argv)`` for `Command` from a tyro dataclass: `UsageError` with tyro's
    message on one line when the arguments do not parse or the dataclass refuses them; `default`
    (argv -> an instance) gives the defaults, such as those of a ``--config`` file."""

    def parse(prog: str, argv: list[str]) -> Any:
        import tyro

        kwargs: dict[str, Any] = {"args": argv, "prog": prog, "description": description}
        if default is not None:
            kwargs["default"] = default(argv)
        captured = io.StringIO()
        try:
            with contextlib.redirect_stderr(captured):
                parsed = tyro.cli(args_class, **kwargs)
        except SystemExit as exc:
            if exc.code in (0, None):  # --help
                raise
            # Again, unwrapped: tyro wraps its box to the terminal's width, which may split a token.
            wide = io.StringIO()
            columns = os.environ.get("COLUMNS")
            os.environ["COLUMNS"] = "100000"
            try:
                with contextlib.redirect_stderr(wide), contextlib.suppress(SystemExit):
                    tyro.cli(args_class, **kwargs)
            finally:
                if columns is None:
                    os.environ.pop("COLUMNS", None)
                else:
                    os.environ["COLUMNS"] = columns
            raise UsageError(_fold_tyro_error(wide.getvalue() or captured.getvalue())) from None
        sys.stderr.write(captured.getvalue())  # tyro's warnings, if any
        return parsed

    return parse


def argparse_parse(build: Callable[[str], argparse.ArgumentParser]) -> Callable[[str, list[str]], Any]:
    """A ``parse(prog, argv)`` for `Command` from a function that builds an `ArgumentParser` for a
    program name."""

    def parse(prog: str, argv: list[str]) -> argparse.Namespace:
        return build(prog).parse_args(argv)

    return parse


@dataclass(frozen=True)
class Command:
    """One ``python -m`` command: its name as typed (`prog`), how an argument list becomes its
    configuration (`parser`: ``(prog, argv) -> config``, see `tyro_parse` and `argparse_parse`),
    what runs a configuration (`runner`: ``config -> exit status``, None meaning 0), the optional
    dependency group it needs (`extra`, checked before anything is imported), and, for a command
    that keeps its finished work when interrupted, what it keeps (`interrupt`: ``config -> text``,
    or ``(text, how to resume)``; the runner then runs under
    `pddlgym_sl.parallel.interrupt.stop_on_signals`)."""

    prog: str
    parser: Callable[[str, list[str]], Any]
    runner: Callable[[Any], int | None]
    extra: str | None = None
    interrupt: Callable[[Any], str | tuple[str, str]] | None = None

    def parse(self, argv: Sequence[str]) -> Any:
        """The configuration of `argv`, nothing run: `UsageError` or another `ConfigError` when
        the arguments are refused, `MissingExtraError` when the command's extra is not installed;
        ``--help`` prints the help and raises ``SystemExit(0)``, with or without the extra."""
        config = self.parser(self.prog, list(argv))
        if self.extra is not None:
            from pddlgym_sl.extras import require_extra

            require_extra(self.extra, self.prog)
        return config

    def main(self, argv: Sequence[str] | None = None) -> int:
        """Parse `argv` (default: ``sys.argv[1:]``, a command run from the shell) and run it; return
        the exit status, 2 after one ``error:`` line on stderr for a user error."""
        from_shell = argv is None
        argv = sys.argv[1:] if argv is None else list(argv)
        config = None
        try:
            config = self.parse(argv)
            if self.interrupt is None:
                status = self.runner(config)
            else:
                from pddlgym_sl.parallel.interrupt import stop_on_signals

                with stop_on_signals():
                    status = self.runner(config)
        except UsageError as exc:
            return _fail(f"{exc} (see {self.prog} --help)")
        except PDDLError as exc:
            return _fail(str(exc))
        except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM: the workers are stopped already
            if self.interrupt is None or config is None:
                raise
            from pddlgym_sl.parallel.interrupt import RESUME, interrupted

            said = self.interrupt(config)
            kept, resume = (said, RESUME) if isinstance(said, str) else said
            return interrupted(exc, kept, resume, now=from_shell)
        return 0 if status is None else int(status)


def _fail(message: str) -> int:
    print(f"error: {one_line(message)}", file=sys.stderr)
    return 2


def exit_at_start(error: PDDLError) -> None:
    """Exit with `error` on one line and status 2 if a ``python -m`` command is being started (its
    package is being imported, so no code of the command could catch it); else return.

    While ``python -m pkg.mod`` imports ``pkg``, ``sys.argv[0]`` is ``"-m"`` (the interpreter's
    documented behaviour); an import from a script, a test or ``python -c`` sees another value."""
    if sys.argv[:1] == ["-m"]:
        raise SystemExit(_fail(str(error)))
