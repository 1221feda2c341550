"""Out-of-distribution (OOD) training with noise states (Heller et al., SoCS 2022, after Hein et al. 2019).

A network trained on plan states only is often confident on states unlike them. OOD training mixes
*noise states* into every training batch and teaches low confidence on them
(`agents.heads.Head.uniform_cross_entropy`: cross-entropy to the uniform cost distribution for the
categorical head, the same for a Gaussian with μ held fixed for N / TN, i.e. a larger σ):

- ``uniform``: every fact of the problem true with probability ½;
- ``weighted``: every fact true with its frequency among the problem's training states, so the
  noise keeps what is (nearly) always true and varies what varies, nearer to search states.

Noise states are states of the training problems (the fact vector of the problem; for the
relational models, encoded by the model's own input builder like any state of that problem). The
run's pool (`NoisePool`) holds ``ceil(r)`` noise states per training state, ``r = Y / (1 − Y)``
(at most `POOL_LIMIT` in all, shared out in proportion), drawn once with the run's seed; a training
step adds ``round(B · r)`` noise states to its ``B`` training states, each from the pool of the
problem of a random state of the batch, so noise is the fraction ``Y`` of the batch and comes
from the batch's problems. The loss is the mean over the whole batch (training states: the head's
NLL; noise states: the OOD loss), as the paper mixes them. The draw of step t depends only on
(seed, t), so a resumed run draws the same noise.

Most random fact vectors are relaxed dead ends (in gripper every ball must be somewhere: weighted
noise of a 40-ball task is never anything else). They are used like any noise state, as in the
paper, unless the run reads a heuristic of the state that is then infinite: the head's residual
(μ = raw + hFF) or the stored features (`agents.models.spec.ModelSpec.reads_features`, linear
regression); then such states are drawn again (at most `MAX_DRAWS` rounds, after which a pool can
stay short). The admissible bound of a noise state is stored as computed (possibly ∞): the OOD
loss does not read it.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import torch
from torch import Tensor

from agents.errors import AgentError
from agents.heads import Head
from agents.inputs import TrainingInputs
from agents.models.spec import ModelSpec
from agents.registries import NOISES
from pddlgym_sl.data.dataset import LabelledSplit
from pddlgym_sl.data.labels import FEATURE_NAMES, LABEL_HEURISTICS
from pddlgym_sl.envs.encoders.schema import batch_bits
from pddlgym_sl.heuristics import make_heuristic

__all__ = [
    "NOISES",
    "NoisePool",
    "fact_frequencies",
    "noise_split",
    "noise_states",
    "pack_bits",
    "pool_counts",
    "uniform_frequencies",
]


def pack_bits(bits: np.ndarray, n_words: int) -> np.ndarray:
    """(n, n_facts) 0/1 matrix -> (n, n_words) uint64 packed states (fact f: bit f & 63 of word f >> 6)."""
    packed = np.packbits(np.asarray(bits, dtype=np.uint8), axis=1, bitorder="little")
    out = np.zeros((len(bits), n_words * 8), dtype=np.uint8)
    out[:, : packed.shape[1]] = packed
    return out.view(np.uint64)


def fact_frequencies(split: LabelledSplit, problem: int) -> np.ndarray:
    """How often each fact of `problem` holds among its states in `split` (float64, n_facts)."""
    task = split.task(problem)
    return batch_bits(split.states[problem], task.n_facts).mean(axis=0)


def uniform_frequencies(split: LabelledSplit, problem: int) -> float:
    """Every fact true with probability one half (uniform noise)."""
    return 0.5


def noise_states(
    kind: str, split: LabelledSplit, problem: int, n: int, rng: np.random.Generator
) -> np.ndarray:
    """`n` packed noise states of `problem` (`kind`: a key of `NOISES`)."""
    if kind not in NOISES:
        raise AgentError(f"unknown noise {kind!r}; choose one of {', '.join(NOISES)}")
    task = split.task(problem)
    bits = rng.random((n, task.n_facts)) < NOISES[kind](split, problem)
    return pack_bits(bits, task.n_words)


POOL_LIMIT = 50_000
"""Most noise states in a run's pool (a problem's share is proportional to its training states)."""
MAX_DRAWS = 20
"""Rounds of drawing, each as many states as wanted, before a problem's pool stays short."""


def noise_split(
    split: LabelledSplit,
    kind: str,
    counts: np.ndarray,
    seed: int,
    head: Head,
    reads_features: bool,
    finite_bound: bool = False,
) -> LabelledSplit:
    """A `LabelledSplit` of ``counts[p]`` noise states of each problem ``p`` of `split`, with the
    heuristic values of a labelled split (every `LABEL_HEURISTICS` name, as a model may read any of
    them; h* is not known: -1) and, when `reads_features`, the linear model's features; states whose
    residual or features would be infinite are drawn again (see the module docstring), and with
    `finite_bound` also those whose admissible bound (the head's lower key) is infinite: dead ends
    that search prunes before any model sees them, and where a TN head's value is undefined."""
    rng = np.random.default_rng([seed, 0x00D])
    keys = LABEL_HEURISTICS
    states, values, features = [], [], []
    for p in range(len(split.problems)):
        task = split.task(p)
        heuristics = {k: make_heuristic(k, task) for k in keys}
        ff = make_heuristic("hff", task)
        found: list[np.ndarray] = []
        found_values: list[dict[str, np.ndarray]] = []
        found_features: list[np.ndarray] = []
        have, want = 0, int(counts[p])
        for _ in range(MAX_DRAWS if want else 0):
            batch = noise_states(kind, split, p, want, rng)
            v = {k: h.batch(batch) for k, h in heuristics.items()}
            f = ff.features_batch(batch) if reads_features else np.zeros((len(batch), len(FEATURE_NAMES)))
            keep = np.isfinite(f).all(axis=1)
            if head.residual_key:
                keep &= np.isfinite(v[head.residual_key])
            if finite_bound:
                keep &= np.isfinite(v[head.lower_key])
            found.append(batch[keep])
            found_values.append({k: a[keep] for k, a in v.items()})
            found_features.append(f[keep])
            have += int(keep.sum())
            if have >= want:
                break
        if not found:
            found, found_values = [np.zeros((0, task.n_words), np.uint64)], [{k: np.zeros(0) for k in keys}]
            found_features = [np.zeros((0, len(FEATURE_NAMES)))]
        states.append(np.concatenate(found)[:want])
        values.append({k: np.concatenate([v[k] for v in found_values])[:want] for k in keys})
        features.append(np.concatenate(found_features)[:want])
    sizes = [len(s) for s in states]
    if sum(sizes) == 0:
        needs = [k for k in (head.residual_key, head.lower_key if finite_bound else None) if k]
        raise AgentError(f"no {kind} noise state has finite {', '.join([*needs, 'features'])}: no noise data")
    return replace(
        split,
        states=states,
        problem_of=np.repeat(np.arange(len(states), dtype=np.int32), sizes),
        h_star=np.full(sum(sizes), -1.0),
        values={k: np.concatenate([v[k] for v in values]) for k in keys},
        features=np.concatenate(features),
        upper=None,
        upper_method=None,
        siblings=None,
        compiled=split.compiled,  # the same problems: share the compiled tasks
    )


def pool_counts(split: LabelledSplit, per_state: int, limit: int = POOL_LIMIT) -> np.ndarray:
    """Noise states per problem: `per_state` per training state, scaled down to `limit` in all."""
    sizes = np.array([len(s) for s in split.states], dtype=np.int64)
    counts = per_state * sizes
    if counts.sum() > limit:
        counts = np.maximum(np.floor(counts * limit / counts.sum()), np.minimum(sizes, 1)).astype(np.int64)
    return counts


class NoisePool:
    """The noise states of one training run and their model inputs (see the module docstring).

    Args:
        split: the training split. kind: ``uniform`` or ``weighted``. ratio: ``Y``, the fraction of
        noise in a batch (0 < Y < 1). head: the run's head. spec: the model's `ModelSpec`. seed: the
        run's seed.
    """

    def __init__(
        self, split: LabelledSplit, kind: str, ratio: float, head: Head, spec: ModelSpec, seed: int
    ) -> None:
        if not 0 < ratio < 1:
            raise AgentError(f"--ood-ratio is the fraction of noise in a batch, in (0, 1), not {ratio!r}")
        if not head.learns_confidence:
            raise AgentError("out-of-distribution training needs a learned sigma (--sigma learn)")
        self.per_state = ratio / (1 - ratio)
        counts = pool_counts(split, math.ceil(self.per_state - 1e-9))
        self.pool = noise_split(split, kind, counts, seed, head, spec.reads_features)
        self.inputs: TrainingInputs = spec.training_inputs(self.pool)
        self.offsets = self.pool.offsets
        self.train_problem_of = split.problem_of
        self.head, self.seed = head, seed
        self.max_cost = int(split.h_star.max())

    def rows(self, step: int, batch_rows: np.ndarray) -> np.ndarray:
        """Sorted pool rows of the noise of training step `step`, from the problems of `batch_rows`."""
        rng = np.random.default_rng([self.seed, step, 0x00D])
        n = round(len(batch_rows) * self.per_state)
        problems = self.train_problem_of[batch_rows[rng.integers(0, len(batch_rows), size=n)]]
        start, end = self.offsets[problems], self.offsets[problems + 1]
        have = end > start  # a problem whose noise states were all refused has none
        rows = start[have] + (rng.random(int(have.sum())) * (end - start)[have]).astype(np.int64)
        return np.sort(rows)

    def loss(self, model: torch.nn.Module, nll: Tensor, step: int, batch_rows: np.ndarray) -> Tensor:
        """The mean over training and noise states of the batch: `nll` (per training state) and the
        head's OOD loss on the step's noise states."""
        rows = self.rows(step, batch_rows)
        if len(rows) == 0:
            return nll.mean()
        raw = model(self.inputs.batch(rows, nll.device))
        key = self.head.residual_key  # the noise states have no upper bounds: only the base is read
        base = (
            None
            if key is None
            else torch.as_tensor(self.pool.values[key][rows], dtype=torch.float32, device=nll.device)
        )
        ood = self.head.uniform_cross_entropy(raw, base, self.max_cost)
        return (nll.sum() + ood.sum()) / (len(nll) + len(ood))
