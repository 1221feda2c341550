"""Load a labelled split (written by `pddlgym_sl.data.build`) into flat arrays for training.

All numeric labels of a split are concatenated (one row per labelled state; `problem_of` maps a
row to its problem), so loading 100,000 states costs a few hundred small ``np.load`` calls and
no task compilation; the compiled task of a problem is built only when asked for (`task(i)`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pddlgym_sl.data.labels import FEATURE_NAMES, LABEL_HEURISTICS, load_labels
from pddlgym_sl.errors import ConfigError, PDDLError
from pddlgym_sl.task import CompiledTask, load_task


@dataclass
class LabelledSplit:
    """The labelled states of one split.

    Attributes:
        split_dir: the split directory. domain_file: its copy of the domain.
        problems: problem file of each problem. states: per problem, its (n_i, n_words) packed states.
        problem_of: (N,) int32 problem index of each state. h_star: (N,) float64.
        values: heuristic name -> (N,) float64 (`LABEL_HEURISTICS`). features: (N, 4) float64.
    """

    split_dir: Path
    domain_file: Path
    problems: list[Path]
    states: list[np.ndarray]
    facts: list[tuple[str, ...]]
    problem_of: np.ndarray
    h_star: np.ndarray
    values: dict[str, np.ndarray]
    features: np.ndarray
    _tasks: dict[int, CompiledTask] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.h_star)

    @property
    def offsets(self) -> np.ndarray:
        """(n_problems + 1,) start row of each problem's states."""
        return np.concatenate([[0], np.cumsum([len(s) for s in self.states])]).astype(np.int64)

    def task(self, i: int) -> CompiledTask:
        """The compiled task of problem `i` (cached), checked to number its facts as the labels do."""
        if i not in self._tasks:
            task = load_task(self.domain_file, self.problems[i])
            if task.facts != self.facts[i]:
                raise PDDLError("labels were made with a different fact numbering", file=self.problems[i])
            self._tasks[i] = task
        return self._tasks[i]


def load_split(split_dir: str | Path, max_problems: int | None = None, seed: int = 0) -> LabelledSplit:
    """Load the solved problems of a split; `max_problems` keeps a seeded sample of them (the paper
    trains on 400 problems subsampled from the training set)."""
    split_dir = Path(split_dir)
    files = sorted((split_dir / "labels").glob("*.npz"))
    if not files:
        raise ConfigError(f"no labelled problems in {split_dir} (run python -m pddlgym_sl.data.generate)")
    if max_problems is not None and max_problems < len(files):
        files = sorted(random.Random(seed).sample(files, max_problems))
    labels = [load_labels(f) for f in files]
    return LabelledSplit(
        split_dir=split_dir,
        domain_file=split_dir / "domain.pddl",
        problems=[split_dir / "problems" / lab.problem for lab in labels],
        states=[lab.states for lab in labels],
        facts=[lab.facts for lab in labels],
        problem_of=np.repeat(np.arange(len(labels), dtype=np.int32), [len(lab) for lab in labels]),
        h_star=np.concatenate([lab.h_star for lab in labels]).astype(np.float64),
        values={n: np.concatenate([lab.values[n] for lab in labels]) for n in LABEL_HEURISTICS},
        features=np.concatenate([lab.features for lab in labels]).reshape(-1, len(FEATURE_NAMES)),
    )
