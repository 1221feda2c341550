"""The error that `agents` raises on bad input, under the project's one exception root.

`AgentError` is a `pddlgym_sl.errors.ConfigError`, hence a `pddlgym_sl.errors.PDDLError` (and a
``ValueError``): ``except PDDLError`` catches what the planning core and the learning code raise
on bad input alike, and the command lines print it as ``error: ...`` instead of a traceback.
"""

from __future__ import annotations

from pddlgym_sl.errors import ConfigError

__all__ = ["AgentError", "CheckpointError"]


class AgentError(ConfigError):
    """Bad input to the learning code: an unknown model or head option, tensors of the wrong shape
    or dtype for a model, a distribution with an invalid parameter."""


class CheckpointError(AgentError):
    """A checkpoint or run-directory file cannot be loaded (the message names the file, the field
    when one is at fault, and why)."""
