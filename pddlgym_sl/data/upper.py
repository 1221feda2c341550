"""Upper bounds u on h*: the cost of a satisficing plan from every labelled state.

    python -m pddlgym_sl.data.upper data/ferry/train data/ferry/val [--max-evaluations N]
    python -m pddlgym_sl.data.generate --domain ferry --split train --upper   # while labelling

The paper (section 3) notes that the cost of any plan from a state s bounds h*(s) from above, so
h* can be modelled as TN(μ, σ, l, u) with both bounds; `agents.supervised --upper plan` trains so.
This module adds the ``upper`` column to the label files of a split that is already labelled
(`pddlgym_sl.data.labels`; no optimal solving again), then rewrites the split's ``labels.npz``
and records what it did under ``"upper"`` in ``manifest.json``.

How u is computed: eager GBFS with hFF (`pddlgym_sl.search.gbfs`, Fast Downward's
``eager_greedy([ff()])`` node for node) on the problem's task with its initial state replaced by
the labelled state, under an evaluation budget (`DEFAULT_MAX_EVALUATIONS`); u = inf when it finds
no plan within it. Why not Fast Downward's lama-first, as the paper's authors did: that is one
subprocess (translation included) per labelled state, some 0.1-0.3 s each, against about 10 ms for
the compiled search in this process; and GBFS + hFF is deterministic and the search that the
learned heuristics are compared with. Its plans are somewhat worse than LAMA's, so u is looser.

What u guarantees: h*(s) ≤ u(s) always (u is the cost of a real plan from s); u is *not* at most
the optimal plan's remaining cost -- a satisficing plan can be longer than the optimal one (on the
train splits u > h* on 5% of the ferry states, 14% of gripper's and 54% of visitall's).

Resumable and computed once: a label file is rewritten atomically (keeping every key it holds)
with its column as soon as its states are done, and a file whose column was made by the same
method (`upper_method`, which names the search, the budget and a version) is skipped, so a
re-run after a crash only does the files not finished, and a finished split costs nothing.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tyro
from tqdm import tqdm

from pddlgym_sl.cli import Command, tyro_parse
from pddlgym_sl.data.dataset import consolidate, facts_digest
from pddlgym_sl.data.labels import add_columns, load_labels
from pddlgym_sl.errors import ConfigError, PDDLError
from pddlgym_sl.io import atomic_write_json
from pddlgym_sl.search import gbfs
from pddlgym_sl.task import CompiledTask, load_task

__all__ = ["DEFAULT_MAX_EVALUATIONS", "add_upper", "plan_costs", "upper_method"]

DEFAULT_MAX_EVALUATIONS = 100_000
"""GBFS + hFF budget per labelled state (the training problems need at most a few thousand)."""
UPPER_VERSION = 1
"""Bump when the way u is computed changes: files made by another version are recomputed."""


def upper_method(max_evaluations: int = DEFAULT_MAX_EVALUATIONS) -> str:
    """The ``upper_method`` string stored beside u: search, heuristic, budget and version."""
    return f"gbfs(hff) from the state, at most {max_evaluations} evaluations, v{UPPER_VERSION}"


def plan_costs(
    task: CompiledTask, states: np.ndarray, max_evaluations: int = DEFAULT_MAX_EVALUATIONS
) -> tuple[np.ndarray, int]:
    """(u, evaluations): the cost of the GBFS + hFF plan from each row of the (n, n_words) packed
    `states` (inf where none is found within `max_evaluations`), and the evaluations spent."""
    upper = np.full(len(states), np.inf)
    evaluations = 0
    for i, words in enumerate(states):
        start = dataclasses.replace(task, init=task.state_from_words(words))
        result = gbfs(start, "hff", max_evaluations=max_evaluations)
        evaluations += result.evaluations
        if result.solved:
            upper[i] = result.cost
    return upper, evaluations


def add_upper(
    split_dir: str | Path, max_evaluations: int = DEFAULT_MAX_EVALUATIONS, progress: bool = True
) -> dict[str, Any]:
    """Give every label file of `split_dir` its ``upper`` column (skipping files that have it by
    the same method), rewrite ``labels.npz`` and the manifest's ``"upper"`` entry; return it."""
    split_dir = Path(split_dir)
    files = sorted((split_dir / "labels").glob("*.npz"))
    if not files:
        raise ConfigError(
            f"no label files in {split_dir / 'labels'} (run python -m pddlgym_sl.data.generate)"
        )
    method = upper_method(max_evaluations)
    pending = [(f, labels) for f in files if (labels := load_labels(f)).upper_method != method]
    started = time.perf_counter()
    evaluations = 0
    bar = tqdm(
        total=len(files),
        initial=len(files) - len(pending),
        desc=f"upper bounds {split_dir}",
        unit="problem",
        disable=not progress,
        dynamic_ncols=True,
    )
    try:
        for path, labels in pending:
            problem = split_dir / "problems" / labels.problem
            task = load_task(split_dir / "domain.pddl", problem)
            if facts_digest(task.facts) != facts_digest(labels.facts):
                raise PDDLError("labels were made with a different fact numbering", file=path)
            upper, spent = plan_costs(task, labels.states, max_evaluations)
            evaluations += spent
            add_columns(path, upper=upper, upper_method=np.array(method))
            bar.update(1)
    finally:
        bar.close()
    consolidate(split_dir)
    return _record(split_dir, files, method, evaluations, time.perf_counter() - started)


def _record(split_dir: Path, files: list[Path], method: str, evaluations: int, seconds: float) -> dict:
    """The manifest's ``"upper"`` entry (statistics over every file; time and evaluations summed
    over the runs that made them), written into ``manifest.json`` when the split has one."""
    labels = [load_labels(f) for f in files]
    upper = np.concatenate([lab.upper for lab in labels])
    h_star = np.concatenate([lab.h_star for lab in labels]).astype(np.float64)
    finite = np.isfinite(upper)
    path = split_dir / "manifest.json"
    manifest = json.loads(path.read_text()) if path.is_file() else None
    previous = (manifest or {}).get("upper", {})
    if previous.get("method") != method:
        previous = {}
    entry = {
        "method": method,
        "problems": len(labels),
        "states": len(upper),
        "no_plan": int((~finite).sum()),
        "suboptimal": int((upper[finite] > h_star[finite]).sum()),
        "mean_excess": float(np.mean(upper[finite] - h_star[finite])) if finite.any() else None,
        "evaluations": previous.get("evaluations", 0) + evaluations,
        "seconds": round(previous.get("seconds", 0.0) + seconds, 2),
    }
    if manifest is not None:
        atomic_write_json(path, {**manifest, "upper": entry})
    return entry


@dataclass
class Args:
    """Add upper bounds u (the cost of a GBFS + hFF plan from each labelled state) to labelled splits."""

    splits: tyro.conf.Positional[list[Path]]
    """split directories (<root>/<domain>/<split>, as written by pddlgym_sl.data.generate)"""
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS
    """GBFS + hFF evaluation budget per state (u = inf when no plan is found within it)"""
    quiet: bool = False
    """no progress bar"""


def run(args: Args) -> int:
    """Add u to every split given; one line each."""
    for split in args.splits:
        entry = add_upper(split, args.max_evaluations, progress=not args.quiet)
        excess = "-" if entry["mean_excess"] is None else f"{entry['mean_excess']:.3f}"
        print(
            f"{split}: u on {entry['states']} states of {entry['problems']} problems "
            f"({entry['no_plan']} without a plan, {entry['suboptimal']} above h*, "
            f"mean u - h* {excess}); {entry['evaluations']} evaluations"
        )
    return 0


COMMAND = Command("python -m pddlgym_sl.data.upper", tyro_parse(Args, __doc__), run)


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
