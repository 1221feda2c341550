"""An evaluation's records on disk: whether a problem's record is finished under a config, the
summary of a set of records (Table 2's coverage and mean evaluations), and the wall time of the
runs that did a resumed evaluation's work."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.choices import process_memory_limit
from agents.evaluation.config import EvaluationConfig

__all__ = ["earlier_wall_seconds", "evaluation_records", "is_finished", "summarize"]


def is_finished(path: Path, config: EvaluationConfig) -> bool:
    """A problem is done when its result exists and was obtained under the same budget (a search
    that ran out of memory is searched again under another memory limit; on Ray without
    ``--memory-limit``, whose workers' limits the driver does not know, always)."""
    if not path.is_file():
        return False
    result = json.loads(path.read_text())
    if result.get("status") == "memory_limit" and result.get("memory_limit") != process_memory_limit(config):
        return False
    if result.get("ended_in") == "grounding" and "grounding" not in result and config.grounding != "ground":
        return False  # stopped in its grounding before --grounding existed: lifted planning may search it
    covered = result.get("limits_cover_grounding", False) == config.limits_cover_grounding
    same_bound = config.run is None or result.get("search_bound", "trained") == config.search_bound
    if result.get("grounding") == "lifted" and result.get("lifted_search", "eager") != config.lifted_search:
        return False
    same_budget = result.get("limit") == config.limit and result.get("time_limit") == config.time_limit
    return covered and same_bound and same_budget


def evaluation_records(out: Path) -> list[dict[str, Any]] | None:
    """The per-problem records of the evaluation written to `out` (by problem file name) once it has
    finished (its ``summary.json`` exists), else None."""
    if not (out / "summary.json").is_file():
        return None
    return [json.loads(p.read_text()) for p in sorted((out / "problems").glob("*.json"))]


def summarize(results: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    """Coverage and average evaluations (an unsolved problem counts `limit`), as in Table 2; and the
    solved problems' own mean, which is what a time-limited protocol without a cap can compare."""
    solved = [r for r in results if r["solved"]]
    return {
        "problems": len(results),
        "solved": len(solved),
        "coverage": len(solved) / len(results) if results else 0.0,
        "mean_evaluations": float(np.mean([r["evaluations"] if r["solved"] else limit for r in results]))
        if results
        else 0.0,
        "mean_evaluations_solved": float(np.mean([r["evaluations"] for r in solved])) if solved else None,
        "mean_plan_length": float(np.mean([r["plan_length"] for r in solved])) if solved else None,
        "mean_seconds": float(np.mean([r["seconds"] for r in results])) if results else 0.0,
        "limit": limit,
    }


def earlier_wall_seconds(path: Path) -> float:
    """The wall-clock seconds an earlier run of a resumed evaluation recorded (0 when it wrote no
    summary): a resumed evaluation's ``wall_seconds`` sums the runs that did its work, so that
    resuming a finished one does not reset it."""
    try:
        value = json.loads(path.read_text()).get("wall_seconds", 0.0)
    except (OSError, ValueError, AttributeError):
        return 0.0
    return float(value) if isinstance(value, (int, float)) else 0.0
