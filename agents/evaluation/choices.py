"""What an `EvaluationConfig` implies beyond its fields: whether its searches go together (checked
with a one-line `ConfigError`), each search process's memory limit, how many searches advance in
lockstep, and where the results go."""

from __future__ import annotations

from pathlib import Path

from agents.evaluation.config import EvaluationConfig
from agents.evaluation.searches import CONFIDENCE_AWARE, config_label, on_the_engine
from pddlgym_sl.errors import ConfigError

__all__ = [
    "LOCKSTEP_DEFAULT",
    "check_search_args",
    "lockstep_width",
    "process_memory_limit",
    "result_directory",
]

LOCKSTEP_DEFAULT = 8
"""``--lockstep`` where it applies and is not given: searches advanced together."""


def check_search_args(config: EvaluationConfig) -> None:
    """`ConfigError` when the search options do not go together (a confidence-aware search without
    a run, ``--prune`` without ``--threshold``, a lifted task with another search than GBFS, ...)."""
    confidence_aware = not on_the_engine(config.search, config.prune != "none") or config.prioritize
    if confidence_aware and config.run is None:
        raise ConfigError("--search dual, --prune and --prioritize need a learned heuristic (--run)")
    if config.prune != "none" and config.search not in CONFIDENCE_AWARE:
        raise ConfigError(f"--prune works with --search gbfs or dual, not {config.search}")
    if (config.prune == "none") != (config.threshold is None):
        raise ConfigError("--prune mean|adaptive and --threshold X go together")
    if config.prioritize and (config.search != "dual" or config.prune == "none"):
        raise ConfigError("--prioritize needs --search dual and the threshold of --prune mean|adaptive")
    if config.grounding == "lifted" and (config.search != "gbfs" or config.prune != "none"):
        raise ConfigError("--grounding lifted searches with plain GBFS (--search gbfs, no --prune)")
    if config.memory_limit is not None and confidence_aware:
        raise ConfigError("--memory-limit bounds the engine's searches: not --search dual or --prune")


def process_memory_limit(config: EvaluationConfig) -> float | None:
    """Each search process's memory limit in MB: ``--memory-limit``, or locally the worker
    processes' share of the default (`pddlgym_sl.memory.default_memory_limit`); None on Ray, whose
    workers take their share of their own node's. Results record the limit their search had."""
    if config.memory_limit is not None:
        return config.memory_limit
    if config.backend == "local" and on_the_engine(config.search, config.prune != "none"):
        from pddlgym_sl.memory import default_memory_limit

        return default_memory_limit() / config.jobs / 2**20
    return None


def lockstep_width(config: EvaluationConfig, model: str | None) -> int:
    """How many searches `evaluate` advances together: ``--lockstep``, or `LOCKSTEP_DEFAULT` for
    plain GBFS with a learned heuristic on the torch path in one local process (the only case it
    supports), else 1. `model` is the run's model name (None without a run): a ``--model wl`` run
    evaluates with its compiled heuristic inside the engine, not in lockstep, unless --no-compiled."""
    applies = config.run is not None and config.search == "gbfs" and config.prune == "none"
    applies = applies and not config.limits_cover_grounding  # each search's own time left
    in_engine = model == "wl" and config.compiled
    if config.lockstep is None:
        default = applies and not in_engine and config.jobs == 1 and config.backend == "local"
        return LOCKSTEP_DEFAULT if default else 1
    if config.lockstep > 1 and not applies:
        raise ConfigError(
            "--lockstep advances GBFS searches with a learned heuristic (--run, --search gbfs, no --prune, "
            "not --limits-cover-grounding)"
        )
    if config.lockstep > 1 and in_engine:
        raise ConfigError(
            "--lockstep: a --model wl run is evaluated inside the search engine; add --no-compiled to "
            "evaluate it with torch in lockstep"
        )
    if config.lockstep > 1 and (config.jobs > 1 or config.backend != "local"):
        raise ConfigError(
            "--lockstep K > 1 runs in one process (it keeps both cores busy itself): use --jobs 1 and "
            "the local backend"
        )
    return config.lockstep


def result_directory(config: EvaluationConfig, domain: str, split: str) -> Path:
    """Where the records go: ``--out``, or ``<run>/eval/<split>[-clip][-bound-<b>][-<search>[-<label>]]``,
    or for a symbolic heuristic ``runs/baselines/<domain>__<heuristic>/eval/<split>[-<search>...]``
    (no search suffix for plain GBFS); ``-lifted-lazy`` last for ``--lifted-search lazy``."""
    label = config_label(config)
    if (config.search, label) == ("gbfs", "Base"):
        suffix = ""
    elif config.search in CONFIDENCE_AWARE:
        suffix = f"-{config.search}-{label}"
    else:
        suffix = f"-{config.search}"
    if config.lifted_search != "eager":
        suffix += f"-lifted-{config.lifted_search}"
    if config.out is not None:
        return config.out
    if config.run is not None:
        bound = "" if config.search_bound == "trained" else f"-bound-{config.search_bound}"
        return config.run / "eval" / (split + ("-clip" if config.clip else "") + bound + suffix)
    return Path("runs") / "baselines" / f"{domain}__{config.heuristic}" / "eval" / (split + suffix)
