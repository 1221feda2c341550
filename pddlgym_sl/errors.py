"""The package's exception hierarchy: every error pddlgym_sl raises on bad input is a `PDDLError`.

`PDDLError` carries the file, the line (when known) and the cause, and formats them as
``file:line: cause`` so that a user can jump straight to the offending spot.
"""

from __future__ import annotations

from pathlib import Path

from gymnasium.error import ResetNeeded


class PDDLError(Exception):
    """Root of every error raised by pddlgym_sl for bad input (files, kwargs, plans, solvers)."""

    def __init__(self, cause: str, file: str | Path | None = None, line: int | None = None) -> None:
        self.cause = cause
        self.file = str(file) if file is not None else None
        self.line = line
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file if self.line is None else f"{self.file}:{self.line}"
            where += ": "
        return f"{where}{self.cause}"


class ParseError(PDDLError):
    """The text is not well-formed PDDL (tokens, parentheses, section structure)."""


class SemanticError(PDDLError):
    """Well-formed PDDL that refers to unknown predicates, objects or types, or uses a wrong arity."""


class UnsupportedRequirementError(PDDLError):
    """The file declares or uses a PDDL feature outside the STRIPS (+ typing) fragment we compile."""


class GroundingError(PDDLError):
    """The problem cannot be turned into a compiled STRIPS task (e.g. it is for another domain)."""


class InputLimitError(PDDLError):
    """An input exceeds a configured limit (file size, ...); the message names the limit and how
    to raise it."""


class TimeLimitError(InputLimitError):
    """Loading a task took longer than its time limit (`pddlgym_sl.bounded_load`)."""


class PlanError(PDDLError):
    """A plan does not apply to its task or does not reach the goal."""


class SolverError(PDDLError):
    """An external solver (Fast Downward) is missing or failed."""


class ActionTypeError(PDDLError, TypeError):
    """An environment action that is not an integer (Gymnasium's `Discrete` accepts Python and
    numpy integers and 0-d integer arrays only); it is refused rather than truncated."""


class EpisodeEndedError(PDDLError, ResetNeeded):
    """`PDDLEnv.step` after the episode ended at the goal, without a `reset` (a Gymnasium
    `ResetNeeded`, as for a step before the first reset)."""


class WorkerError(PDDLError):
    """A worker process died while it ran a unit of `pddlgym_sl.parallel` (killed, or out of
    memory); finished units are kept."""


class ConfigError(PDDLError, ValueError):
    """Bad arguments: unknown domain, split, observation type, heuristic name, missing files, ..."""


class MissingExtraError(ConfigError, ImportError):
    """A feature needs an optional dependency group that is not installed (``pip install
    'pddlgym-sl[learn]'``, ``[rl]``); the message names the extra and the missing modules."""


class IncompleteSplitWarning(UserWarning):
    """A labelled split is loaded before its labelling finished (no ``manifest.json`` yet): it holds
    only the problems labelled so far, so a model trained on it sees fewer problems than asked for."""
