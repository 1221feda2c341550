"""Load a labelled split (written by `pddlgym_sl.data.build`) into flat arrays for training.

Per-problem label files are convenient for resuming but slow to read in bulk, so a finished split
also gets one consolidated, uncompressed ``labels.npz`` (`consolidate`): all numeric labels
concatenated (one row per state; ``problem_of`` maps a row to its problem) and all packed states
in one flat uint64 array. Loading 100,000 states from it is a handful of array reads; the
compiled task of a problem is only built when asked for (`LabelledSplit.task`). When every label
file has its plan's siblings (label format 2), the consolidated file holds them too
(`SplitSiblings`, for ranking losses).

A split labelled by satisficing plans (`pddlgym_sl.data.labels`: ``label_kind`` satisficing) holds
upper bounds of h* in ``h_star``; `LabelledSplit.exact` says which rows hold h* itself, and
`concat_splits` puts such a split beside an optimally labelled one for training.
"""

from __future__ import annotations

import hashlib
import random
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pddlgym_sl.data.labels import FEATURE_NAMES, LABEL_HEURISTICS, ProblemLabels, check_core, load_labels
from pddlgym_sl.errors import ConfigError, IncompleteSplitWarning, PDDLError
from pddlgym_sl.io import atomic_save_npz
from pddlgym_sl.task import CORE_VERSION, CompiledTask, load_task

CONSOLIDATED = "labels.npz"


def facts_digest(facts: tuple[str, ...]) -> str:
    """Fingerprint of a task's fact numbering (labels store states as bits over these facts)."""
    return hashlib.sha1("\n".join(facts).encode()).hexdigest()


@dataclass
class SplitSiblings:
    """The siblings of a split's plan states (`pddlgym_sl.data.labels.Siblings`, all problems).

    Attributes:
        states: per problem, its (m_i, n_words) packed sibling states.
        problem_of: (M,) int32 problem index of each sibling (problems in the split's order).
        parent_row: (M,) int64 row of the split holding the plan state s_i whose successor it is.
        values: heuristic name -> (M,) float64. features: (M, 4) float64.
    """

    states: list[np.ndarray]
    problem_of: np.ndarray
    parent_row: np.ndarray
    values: dict[str, np.ndarray]
    features: np.ndarray

    def __len__(self) -> int:
        return len(self.problem_of)


@dataclass
class LabelledSplit:
    """The labelled states of one split.

    Attributes:
        split_dir: the split directory. domain_file: its copy of the domain.
        problems: problem file of each problem. states: per problem, its (n_i, n_words_i) packed states.
        facts_digest: per problem, `facts_digest` of the task the labels were made with.
        problem_of: (N,) int32 problem index of each state. h_star: (N,) float64.
        values: heuristic name -> (N,) float64 (`LABEL_HEURISTICS`). features: (N, 4) float64.
        upper: (N,) float64 cost of a satisficing plan from each state (inf: none found), or None
            when not every problem has one (`python -m pddlgym_sl.data.upper` adds it).
        upper_method: how ``upper`` was computed (`pddlgym_sl.data.upper.upper_method`), or None.
        siblings: the plan states' siblings, or None when some label file has none (format 1).
        exact: (N,) bool, True where ``h_star`` is h* (an optimal plan's state), False where it is
            a satisficing plan's cost-to-go, an upper bound u of h*; None: every row exact.
        compiled: problem index -> its compiled task, filled by `task` on first use; a caller that
            has the tasks compiled already (an environment's) may pass them, and splits over the
            same problems may share the dict.
    """

    split_dir: Path
    domain_file: Path
    problems: list[Path]
    states: list[np.ndarray]
    facts_digest: list[str]
    problem_of: np.ndarray
    h_star: np.ndarray
    values: dict[str, np.ndarray]
    features: np.ndarray
    upper: np.ndarray | None = None
    upper_method: str | None = None
    siblings: SplitSiblings | None = None
    exact: np.ndarray | None = None
    compiled: dict[int, CompiledTask] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.h_star)

    def exact_rows(self, rows: np.ndarray) -> np.ndarray | None:
        """Which of `rows` hold h* (bool), or None when all of them do."""
        if self.exact is None:
            return None
        exact = self.exact[rows]
        return None if exact.all() else exact

    @property
    def offsets(self) -> np.ndarray:
        """(n_problems + 1,) start row of each problem's states."""
        return np.concatenate([[0], np.cumsum([len(s) for s in self.states])]).astype(np.int64)

    def task(self, i: int) -> CompiledTask:
        """The compiled task of problem `i` (cached), checked to number its facts as the labels do."""
        if i not in self.compiled:
            task = load_task(self.domain_file, self.problems[i])
            if facts_digest(task.facts) != self.facts_digest[i]:
                raise PDDLError("labels were made with a different fact numbering", file=self.problems[i])
            self.compiled[i] = task
        return self.compiled[i]

    def subset(self, problem_indices: list[int]) -> LabelledSplit:
        """A split restricted to some problems (in the given order)."""
        rows = np.concatenate([np.flatnonzero(self.problem_of == i) for i in problem_indices])
        remap = np.zeros(len(self.problems), dtype=np.int32)
        remap[problem_indices] = np.arange(len(problem_indices), dtype=np.int32)
        siblings = None
        if self.siblings is not None:
            sib = self.siblings
            kept = np.concatenate([np.flatnonzero(sib.problem_of == i) for i in problem_indices])
            new_row = np.full(len(self), -1, dtype=np.int64)
            new_row[rows] = np.arange(len(rows))
            siblings = SplitSiblings(
                states=[sib.states[i] for i in problem_indices],
                problem_of=remap[sib.problem_of[kept]],
                parent_row=new_row[sib.parent_row[kept]],
                values={k: v[kept] for k, v in sib.values.items()},
                features=sib.features[kept],
            )
        return LabelledSplit(
            split_dir=self.split_dir,
            domain_file=self.domain_file,
            problems=[self.problems[i] for i in problem_indices],
            states=[self.states[i] for i in problem_indices],
            facts_digest=[self.facts_digest[i] for i in problem_indices],
            problem_of=remap[self.problem_of[rows]],
            h_star=self.h_star[rows],
            values={k: v[rows] for k, v in self.values.items()},
            features=self.features[rows],
            upper=None if self.upper is None else self.upper[rows],
            upper_method=self.upper_method,
            siblings=siblings,
            exact=None if self.exact is None else self.exact[rows],
        )


def _label_files(split_dir: Path) -> list[Path]:
    return sorted((split_dir / "labels").glob("*.npz"))


def consolidate(split_dir: str | Path) -> Path:
    """Write the split's consolidated ``labels.npz`` from its per-problem label files."""
    split_dir = Path(split_dir)
    files = _label_files(split_dir)
    labels = [load_labels(f) for f in files]
    path = split_dir / CONSOLIDATED
    siblings = {}
    if labels and all(lab.siblings is not None for lab in labels):
        sibs = [lab.siblings for lab in labels]
        siblings = {
            "sibling_counts": np.array([len(s) for s in sibs], dtype=np.int64),
            "sibling_states": np.concatenate([s.states.ravel() for s in sibs]),
            "sibling_parent": np.concatenate([s.parent for s in sibs]).astype(np.int32),
            "sibling_features": np.concatenate([s.features for s in sibs]).reshape(-1, len(FEATURE_NAMES)),
            **{f"sibling_{n}": np.concatenate([s.values[n] for s in sibs]) for n in LABEL_HEURISTICS},
        }
    atomic_save_npz(
        path,
        compress=False,
        core=np.array(CORE_VERSION),
        slots=np.array([f.stem for f in files], dtype=str),
        problems=np.array([lab.problem for lab in labels], dtype=str),
        facts_digest=np.array([facts_digest(lab.facts) for lab in labels], dtype=str),
        n_states=np.array([len(lab) for lab in labels], dtype=np.int64),
        n_words=np.array([lab.states.shape[1] for lab in labels], dtype=np.int64),
        states=np.concatenate([lab.states.ravel() for lab in labels]) if labels else np.zeros(0, np.uint64),
        h_star=np.concatenate([lab.h_star for lab in labels]).astype(np.int32),
        optimal=np.array([lab.optimal for lab in labels], dtype=bool),
        features=np.concatenate([lab.features for lab in labels]).reshape(-1, len(FEATURE_NAMES)),
        **{n: np.concatenate([lab.values[n] for lab in labels]) for n in LABEL_HEURISTICS},
        **_upper_column(labels),
        **siblings,
    )
    return path


def _upper_column(labels: list[ProblemLabels]) -> dict[str, np.ndarray]:
    """The split's ``upper`` and ``upper_method`` when every problem has u by the same method."""
    methods = {lab.upper_method for lab in labels}
    if not labels or len(methods) != 1 or None in methods:
        return {}
    return {"upper": np.concatenate([lab.upper for lab in labels]), "upper_method": np.array(methods.pop())}


def _row_offsets(n_states: np.ndarray) -> np.ndarray:
    """Start row of each problem (and the total) from the per-problem state counts."""
    return np.concatenate([[0], np.cumsum(n_states)]).astype(np.int64)


def _siblings(z, n_words: np.ndarray, offsets: np.ndarray) -> SplitSiblings:
    """The siblings of a consolidated file (see `consolidate`)."""
    counts = z["sibling_counts"]
    bounds = np.concatenate([[0], np.cumsum(counts * n_words)])
    flat = z["sibling_states"]
    problem_of = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
    return SplitSiblings(
        states=[flat[bounds[i] : bounds[i + 1]].reshape(counts[i], n_words[i]) for i in range(len(counts))],
        problem_of=problem_of,
        parent_row=offsets[problem_of] + z["sibling_parent"].astype(np.int64),
        values={n: z[f"sibling_{n}"] for n in LABEL_HEURISTICS},
        features=z["sibling_features"],
    )


def _exact_rows(z, n_states: np.ndarray) -> np.ndarray | None:
    """Per row, whether it holds h* (None: all do; files consolidated before label kinds: all)."""
    if "optimal" not in z.files or z["optimal"].all():
        return None
    return np.repeat(z["optimal"], n_states)


def concat_splits(first: LabelledSplit, second: LabelledSplit) -> LabelledSplit:
    """One split of `first`'s problems followed by `second`'s (of the same domain): the training
    data of an optimally labelled split and a satisficing one (`LabelledSplit.exact` says which
    rows hold h*). Siblings and upper bounds are kept where both splits have them."""
    if first.domain_file.read_bytes() != second.domain_file.read_bytes():
        raise ConfigError(
            f"{first.split_dir} and {second.split_dir} have different domain files: "
            "they cannot train together"
        )
    n_first = len(first.problems)
    siblings = None
    if first.siblings is not None and second.siblings is not None:
        a, b = first.siblings, second.siblings
        siblings = SplitSiblings(
            states=a.states + b.states,
            problem_of=np.concatenate([a.problem_of, b.problem_of + n_first]).astype(np.int32),
            parent_row=np.concatenate([a.parent_row, b.parent_row + len(first)]),
            values={k: np.concatenate([a.values[k], b.values[k]]) for k in a.values},
            features=np.concatenate([a.features, b.features]),
        )
    both_upper = first.upper is not None and second.upper is not None
    same_method = first.upper_method == second.upper_method
    ones = lambda split: np.ones(len(split), dtype=bool) if split.exact is None else split.exact  # noqa: E731
    exact = np.concatenate([ones(first), ones(second)])
    return LabelledSplit(
        split_dir=first.split_dir,
        domain_file=first.domain_file,
        problems=first.problems + second.problems,
        states=first.states + second.states,
        facts_digest=first.facts_digest + second.facts_digest,
        problem_of=np.concatenate([first.problem_of, second.problem_of + n_first]).astype(np.int32),
        h_star=np.concatenate([first.h_star, second.h_star]),
        values={k: np.concatenate([first.values[k], second.values[k]]) for k in first.values},
        features=np.concatenate([first.features, second.features]),
        upper=np.concatenate([first.upper, second.upper]) if both_upper and same_method else None,
        upper_method=first.upper_method if both_upper and same_method else None,
        siblings=siblings,
        exact=None if exact.all() else exact,
    )


def load_split(split_dir: str | Path, max_problems: int | None = None, seed: int = 0) -> LabelledSplit:
    """Load the solved problems of a split; `max_problems` keeps a seeded sample of them (the paper
    trains on 400 problems subsampled from the training set). Uses the consolidated file, and
    (re)writes it first when it is missing or does not cover every label file. A split without its
    ``manifest.json`` (labelling interrupted) loads with an `IncompleteSplitWarning`."""
    split_dir = Path(split_dir)
    files = _label_files(split_dir)
    if not files:
        raise ConfigError(f"no labelled problems in {split_dir} (run python -m pddlgym_sl.data.generate)")
    if not (split_dir / "manifest.json").is_file():
        warnings.warn(
            f"{split_dir} has no manifest.json: its labelling has not finished, so only the "
            f"{len(files)} problems labelled so far are loaded (run python -m pddlgym_sl.data.generate "
            "with the same arguments again to finish it)",
            IncompleteSplitWarning,
            stacklevel=2,
        )
    path = split_dir / CONSOLIDATED
    z = np.load(path, allow_pickle=False) if path.is_file() else None
    if z is not None:
        check_core(int(z["core"]) if "core" in z.files else 1, path)
    if z is None or z["slots"].tolist() != [f.stem for f in files]:
        z = np.load(consolidate(split_dir), allow_pickle=False)
    with z:
        n_states, n_words = z["n_states"], z["n_words"]
        bounds = np.concatenate([[0], np.cumsum(n_states * n_words)])
        flat = z["states"]
        data = LabelledSplit(
            split_dir=split_dir,
            domain_file=split_dir / "domain.pddl",
            problems=[split_dir / "problems" / p for p in z["problems"].tolist()],
            states=[
                flat[bounds[i] : bounds[i + 1]].reshape(n_states[i], n_words[i]) for i in range(len(n_states))
            ],
            facts_digest=z["facts_digest"].tolist(),
            problem_of=np.repeat(np.arange(len(n_states), dtype=np.int32), n_states),
            h_star=z["h_star"].astype(np.float64),
            values={n: z[n] for n in LABEL_HEURISTICS},
            features=z["features"],
            upper=z["upper"] if "upper" in z.files else None,
            upper_method=str(z["upper_method"]) if "upper" in z.files else None,
            siblings=_siblings(z, n_words, _row_offsets(n_states)) if "sibling_counts" in z.files else None,
            exact=_exact_rows(z, n_states),
        )
    if max_problems is not None and max_problems < len(data.problems):
        data = data.subset(sorted(random.Random(seed).sample(range(len(data.problems)), max_problems)))
    return data
