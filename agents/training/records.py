"""A run directory's record, ``args.json``: the configuration the run was made with, which command
made it, and the package version, checked field by field when read back.

`agents.supervised` and `agents.rl_value` write it (`write_record`) when a run starts or resumes;
the commands that read a run (`agents.evaluate --run`, a ``--resume``, the labels a command prints,
the learning curves) take the run's own record (`run_args`), checked (`agents.run_files.check_args`),
never a default standing in for a missing field. Records written before version 0.3 also hold the
command lines' own options (``runs``, ``name``, ``resume``, ``config``, ``quiet``), which are ignored.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from agents.errors import CheckpointError
from agents.training.configs import SupervisedConfig, ValueConfig
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.io import atomic_write_json

__all__ = [
    "RECORDS",
    "RL_VALUE_ADDED_LATER",
    "SUPERVISED_ADDED_LATER",
    "resumed_config",
    "run_args",
    "write_record",
]

SUPERVISED_ADDED_LATER = {
    "test_split": "test",
    "loss": "nll",
    "upper": "none",
    "ood": "none",
    "ood_ratio": 0.5,
    "time_budget": None,
    "wl_iterations": 2,
    "wl_pruning": "none",
    "wl_hash": "set",
    "nll_weight": 1.0,
    "interval_split": None,
    "rank_on": "value",
}
"""Fields of `SupervisedConfig` that runs written before they existed lack, with the value those
runs behaved as."""
RL_VALUE_ADDED_LATER = {"upper": "observed"}
"""Likewise for `ValueConfig` (its TN truncated at the observed u before ``upper`` existed)."""
RECORDS: dict[str, tuple[str, type, dict[str, Any]]] = {
    "supervised": ("agents.supervised", SupervisedConfig, SUPERVISED_ADDED_LATER),
    "rl_value": ("agents.rl_value", ValueConfig, RL_VALUE_ADDED_LATER),
}
"""The ``app`` of a record -> (the command that writes it, its configuration, fields added later)."""
_NOT_CONFIG = ("app", "version", "runs", "name", "resume", "config", "quiet")
"""Keys of a record that are not configuration fields: the record's own, and the command-line
options that records before version 0.3 held."""


def write_record(run_dir: Path, config: SupervisedConfig | ValueConfig) -> None:
    """``run_dir/args.json``: `config`'s fields (paths as strings, unset optional ones left out),
    ``app`` (which training loop) and ``version`` (`pddlgym_sl.__version__`)."""
    from pddlgym_sl import __version__

    app = "rl_value" if isinstance(config, ValueConfig) else "supervised"
    stored = {k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(config).items()}
    if app == "rl_value":  # agents.evaluate reads ``data`` as a path when present
        stored = {k: v for k, v in stored.items() if v is not None}
    atomic_write_json(run_dir / "args.json", {**stored, "app": app, "version": __version__})


def run_args(run_dir: Path) -> tuple[str, SupervisedConfig | ValueConfig]:
    """(command, its checked configuration) recorded in ``run_dir/args.json``; `CheckpointError`
    naming the file and field when it does not hold a run's configuration."""
    from agents.checkpoint import load_json_object
    from agents.run_files import check_args

    path = run_dir / "args.json"
    stored = load_json_object(path)
    app = stored.get("app", "supervised")
    if app not in RECORDS:
        raise CheckpointError(
            f"field 'app' must be one of {', '.join(map(repr, RECORDS))}, not {app!r}", file=path
        )
    command, config_class, added = RECORDS[app]
    values = {k: v for k, v in stored.items() if k not in _NOT_CONFIG}
    return command, check_args(config_class, values, path, command, added, {"model": _model_names})


def _model_names() -> list[str]:
    from agents.registries import MODELS

    return list(MODELS)


def resumed_config(run_dir: Path, app: str, steps: int | None = None) -> tuple[Any, Any]:
    """The configuration a run recorded (`run_args`) and that of continuing it: the same, with
    `steps` when given (a larger value extends the run); `ConfigError` when the directory holds no
    run, or one of another command."""
    if not (run_dir / "args.json").is_file():
        raise ConfigError(f"{run_dir} is not a run directory (no args.json)")
    command, stored = run_args(run_dir)
    if command != RECORDS[app][0]:
        raise ConfigError(f"{run_dir} is a run of {command}, not of {RECORDS[app][0]}")
    return stored, dataclasses.replace(stored, steps=steps or stored.steps)
