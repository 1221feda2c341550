"""Out-of-distribution (OOD) training with noise states (Heller et al., SoCS 2022, after Hein et al. 2019).

A network trained on plan states only is often confident on states unlike them. OOD training mixes
*noise states* into every training batch and teaches low confidence on them
(`agents.heads.Head.uniform_cross_entropy`: cross-entropy to the uniform cost distribution for the
categorical head, the same for a Gaussian with μ held fixed for N / TN, i.e. a larger σ):

- ``uniform``: every fact of the problem true with probability ½;
- ``weighted``: every fact true with its frequency among the problem's training states, so the
  noise keeps what is (nearly) always true and varies what varies, nearer to search states.

Noise states are states of the training problems (the fact vector of the problem; for the
relational models, encoded by the model's own input builder like any state of that problem). Each
problem gets a pool of ``ceil(r)`` noise states per training state, ``r = Y / (1 − Y)``, drawn once
with the run's seed (`NoisePool`); a training step adds ``round(B · r)`` noise states to its ``B``
training states, each from the pool of the problem of a random state of the batch, so noise is the
fraction ``Y`` of the batch and comes from the batch's problems. The loss is the mean over the
whole batch (training states: the head's NLL; noise states: the OOD loss), as the paper mixes them.
The draw of step t depends only on (seed, t), so a resumed run draws the same noise.

Noise states from which the goal is not even relaxed-reachable (hmax = ∞, so every heuristic of
the labels is ∞) are drawn again: search never asks the network about such states (the learned
heuristic answers ∞ from its admissible bound) and the heads need finite bounds. In domains where
most random fact vectors are relaxed dead ends (gripper's weighted noise: about 1 in 100 lives) a
pool can stay short of its size after `MAX_DRAWS` rounds; the remaining live states are used.
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
from agents.metrics import bound_inputs
from pddlgym_sl.data.dataset import LabelledSplit
from pddlgym_sl.data.labels import heuristic_values
from pddlgym_sl.envs.encoders.schema import batch_bits
from pddlgym_sl.heuristics import make_heuristic

__all__ = ["NOISES", "NoisePool", "fact_frequencies", "noise_split", "noise_states", "pack_bits"]


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


def _half(split: LabelledSplit, problem: int) -> float:
    return 0.5


NOISES = {"uniform": _half, "weighted": fact_frequencies}
"""The noise distributions of ``--ood``: each fact's probability of being true in a noise state."""


def noise_states(
    kind: str, split: LabelledSplit, problem: int, n: int, rng: np.random.Generator
) -> np.ndarray:
    """`n` packed noise states of `problem` (`kind`: a key of `NOISES`)."""
    if kind not in NOISES:
        raise AgentError(f"unknown noise {kind!r}; choose one of {', '.join(NOISES)}")
    task = split.task(problem)
    bits = rng.random((n, task.n_facts)) < NOISES[kind](split, problem)
    return pack_bits(bits, task.n_words)


def noise_split(split: LabelledSplit, kind: str, per_state: int, seed: int) -> LabelledSplit:
    """A `LabelledSplit` of noise states: `per_state` per state of each problem of `split` (fewer when
    `MAX_DRAWS` rounds of drawing do not find that many live ones), with every label heuristic
    computed on them (h* is not known: -1)."""
    rng = np.random.default_rng([seed, 0x00D])
    states, values, features = [], [], []
    for p in range(len(split.problems)):
        task = split.task(p)
        want = per_state * len(split.states[p])
        live = _live_noise(kind, split, p, want, rng)
        v, f = heuristic_values(task, live)
        states.append(live)
        values.append(v)
        features.append(f)
    counts = [len(s) for s in states]
    if sum(counts) == 0:
        raise AgentError(f"every {kind} noise state is a relaxed dead end: no OOD training data")
    return replace(
        split,
        states=states,
        problem_of=np.repeat(np.arange(len(states), dtype=np.int32), counts),
        h_star=np.full(sum(counts), -1.0),
        values={k: np.concatenate([v[k] for v in values]) for k in values[0]},
        features=np.concatenate(features),
        _tasks=split._tasks,  # the same problems: share the compiled tasks
    )


MAX_DRAWS = 20
"""Rounds of drawing noise states, each as many as wanted, before a problem's pool stays short."""


def _live_noise(
    kind: str, split: LabelledSplit, problem: int, want: int, rng: np.random.Generator
) -> np.ndarray:
    """Up to `want` noise states of `problem` from which the goal is relaxed-reachable (hmax finite)."""
    hmax = make_heuristic("hmax", split.task(problem))
    found: list[np.ndarray] = []
    have = 0
    for _ in range(MAX_DRAWS if want else 0):
        batch = noise_states(kind, split, problem, want, rng)
        live = batch[np.isfinite(hmax.batch(batch))]
        found.append(live)
        have += len(live)
        if have >= want:
            break
    if not found:
        return np.zeros((0, split.task(problem).n_words), dtype=np.uint64)
    return np.concatenate(found)[:want]


class NoisePool:
    """The noise states of one training run and their model inputs (see the module docstring).

    Args:
        split: the training split. kind: ``uniform`` or ``weighted``. ratio: ``Y``, the fraction of
        noise in a batch (0 < Y < 1). head: the run's head. inputs: the model's `TrainingInputs`
        builder (``spec.training_inputs``). seed: the run's seed.
    """

    def __init__(self, split: LabelledSplit, kind: str, ratio: float, head: Head, inputs, seed: int) -> None:
        if not 0 < ratio < 1:
            raise AgentError(f"--ood-ratio is the fraction of noise in a batch, in (0, 1), not {ratio!r}")
        if not head.learns_confidence:
            raise AgentError("out-of-distribution training needs a learned sigma (--sigma learn)")
        self.per_state = ratio / (1 - ratio)
        self.pool = noise_split(split, kind, math.ceil(self.per_state - 1e-9), seed)
        self.inputs: TrainingInputs = inputs(self.pool)
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
        have = end > start  # problems whose noise were all dead ends have none
        rows = start[have] + (rng.random(int(have.sum())) * (end - start)[have]).astype(np.int64)
        return np.sort(rows)

    def loss(self, model: torch.nn.Module, nll: Tensor, step: int, batch_rows: np.ndarray) -> Tensor:
        """The mean over training and noise states of the batch: `nll` (per training state) and the
        head's OOD loss on the step's noise states."""
        rows = self.rows(step, batch_rows)
        if len(rows) == 0:
            return nll.mean()
        raw = model(self.inputs.batch(rows, nll.device))
        _, _, base = bound_inputs(self.pool, self.head, rows, nll.device)
        ood = self.head.uniform_cross_entropy(raw, base, self.max_cost)
        return (nll.sum() + ood.sum()) / (len(nll) + len(ood))
