"""The arguments a run directory records, whichever command made it, checked field by field.

``args.json`` of `agents.supervised` and of `agents.rl_value` (``"app": "rl_value"``) are read as
that command's ``Args`` (`agents.checkpoint.load_run_args`), so that the commands that read a run
(`agents.evaluate --run`, a ``--resume``, the labels a command prints) use the run's own record,
checked, never a default standing in for a missing field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.errors import CheckpointError

SUPERVISED_ADDED_LATER = {
    "test_split": "test",
    "loss": "nll",
    "upper": "none",
    "ood": "none",
    "ood_ratio": 0.5,
}
"""Fields of `agents.supervised` that runs written before they existed lack, with the value those
runs behaved as."""
RL_VALUE_ADDED_LATER = {"upper": "observed"}
"""Likewise for `agents.rl_value` (its TN truncated at the observed u before ``--upper`` existed)."""


def run_args(run_dir: Path) -> tuple[str, Any]:
    """(command, its checked ``Args``) recorded in ``run_dir/args.json``; `CheckpointError`
    naming the file and field when it does not hold a run's arguments."""
    from agents.checkpoint import load_json_object, load_run_args

    path = run_dir / "args.json"
    app = load_json_object(path).get("app", "supervised")
    if app == "rl_value":
        from agents.apps.rl_value import Args

        command, added, ignore = "agents.rl_value", RL_VALUE_ADDED_LATER, ("app",)
    elif app == "supervised":
        from agents.apps.supervised import Args

        command, added, ignore = "agents.supervised", SUPERVISED_ADDED_LATER, ()
    else:
        raise CheckpointError(f"field 'app' must be 'rl_value' (or absent), not {app!r}", file=path)
    return command, load_run_args(run_dir, Args, command, ignore, added)
