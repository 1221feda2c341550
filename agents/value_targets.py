"""Targets of value learning without optimal labels (``python -m agents.rl_value``), as pure functions.

A state ``s`` of the replay buffer gets three numbers, none of which needs an optimal planner:

* the bootstrapped target ``y(s) = 1 + min_{s'} V̄(s')`` over the successors ``s'`` of ``s`` under the
  target network ``V̄`` (unit action costs), ``0`` when ``s`` is a goal and ``inf`` when ``s`` is a
  proven dead end: no applicable action, or an infinite admissible bound (`bootstrap_targets`;
  successors' values with the same rules: `successor_values`);
* the lower bound ``l``: the admissible heuristic of ``s`` (LM-cut by default), as the environment
  reports it in ``info["bounds"]``;
* the upper bound ``u``: the best cost-to-go observed from ``s`` on any trajectory that reached the
  goal, ``inf`` until one does (`UpperBounds`; a trajectory that reaches the goal at step ``T``
  passes ``s`` at step ``t``, so a plan of ``T − t`` actions from ``s`` exists and ``h*(s) ≤ T − t``,
  whatever loops the trajectory made).

``h*(s) ∈ [l, u]`` holds for every state, so clipping ``y`` into ``[l, u]`` only removes error of the
target network (`clip_targets`). The three heads (`TARGET_MODES`):

* ``n``: N(μ, σ) with the raw ``y`` (with ``σ`` fixed the NLL is the squared error: the Gehring et al.
  (ICAPS 2022) residual value learning over hFF);
* ``n+clip``: the same with ``y`` clipped to ``[l, u]`` (the ablation);
* ``tn``: TN(μ, σ, l − 0.1, u + 0.1) with ``y`` clipped to ``[l, u]``: its NLL is finite only inside
  the support, and ``u = inf`` is exact (`agents.distributions` handles the infinite bound); or, with
  ``truncate_upper=False``, ``u`` only clips the target and the NLL is TN(μ, σ, l − 0.1, ∞)'s.

States whose target is infinite (dead ends) carry no gradient: `value_loss` averages over the finite
targets only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import torch
from torch import Tensor

from agents.heads import Head

__all__ = [
    "TARGET_MODES",
    "UpperBounds",
    "bootstrap_targets",
    "clip_targets",
    "state_key",
    "successor_values",
    "target_mode",
    "value_loss",
]

TARGET_MODES = {"n": False, "n+clip": True, "tn": True}
"""Target mode -> whether its targets are clipped to ``[l, u]``."""

StateKey = tuple[int, bytes]


def target_mode(dist: str, clip: bool) -> str:
    """The mode of a ``--dist`` / ``--clip`` pair (``tn`` always clips: its NLL needs it)."""
    return "n+clip" if dist == "n" and clip else dist


def state_key(problem: int, words: np.ndarray) -> StateKey:
    """A hashable key of a packed state of one problem (problems may share a word layout)."""
    return int(problem), np.ascontiguousarray(words, dtype=np.uint64).tobytes()


def successor_values(values: np.ndarray, is_goal: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """The value of each successor: ``0`` at a goal, ``inf`` at a proven dead end (infinite admissible
    bound), else the network's value ``values``."""
    out = np.where(np.isinf(np.asarray(lower, dtype=np.float64)), np.inf, values).astype(np.float64)
    out[np.asarray(is_goal, dtype=bool)] = 0.0
    return out


def bootstrap_targets(
    is_goal: np.ndarray, lower: np.ndarray, succ_values: np.ndarray, offsets: np.ndarray
) -> np.ndarray:
    """``y(s) = 1 + min_{s'} V̄(s')`` for a batch of states.

    Args:
        is_goal: (n,) whether each state is a goal (``y = 0``).
        lower: (n,) admissible bound of each state (``inf``: proven dead end, ``y = inf``).
        succ_values: (m,) successor values (`successor_values`) of all states, state by state.
        offsets: (n + 1,) state ``i``'s successors are ``succ_values[offsets[i]:offsets[i + 1]]``; none:
            no applicable action, a dead end (``y = inf``).
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    n = len(offsets) - 1
    y = np.full(n, np.inf)
    counts = np.diff(offsets)
    has = counts > 0
    if has.any():
        # reduceat over the non-empty segments only (an empty one would read its neighbour's first value)
        y[has] = 1.0 + np.minimum.reduceat(np.asarray(succ_values, dtype=np.float64), offsets[:-1][has])
    y[np.isinf(np.asarray(lower, dtype=np.float64))] = np.inf
    y[np.asarray(is_goal, dtype=bool)] = 0.0
    return y


def clip_targets(y: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``min(max(y, l), u)``: the target moved into ``[l, u]``, where ``h*`` lies (an infinite ``l``
    keeps ``inf``; a goal has ``l = u = 0``)."""
    lower = np.asarray(lower, dtype=np.float64)
    return np.where(np.isinf(lower), np.inf, np.minimum(np.maximum(y, lower), upper))


class UpperBounds:
    """``u(s)``: the best cost-to-go observed from each state on a trajectory that reached the goal.

    Kept per `state_key` across episodes; ``inf`` for a state no goal-reaching trajectory passed.
    """

    def __init__(self) -> None:
        self.best: dict[StateKey, float] = {}

    def __len__(self) -> int:
        return len(self.best)

    def record(self, keys: Sequence[StateKey], reached_goal: bool) -> None:
        """Record one trajectory ``s_0 .. s_T`` (its state keys in order, the last one reached at step
        ``T``): when it reached the goal, ``u(s_t) ≤ T − t``; otherwise nothing is learnt."""
        if not reached_goal:
            return
        end = len(keys) - 1
        for t, key in enumerate(keys):
            cost = float(end - t)
            if cost < self.best.get(key, np.inf):
                self.best[key] = cost

    def lookup(self, keys: Iterable[StateKey]) -> np.ndarray:
        return np.array([self.best.get(k, np.inf) for k in keys], dtype=np.float64)

    # plain data for a checkpoint (loaded with weights_only=True: no bytes, no tuples as keys)
    def to_plain(self) -> list[list]:
        return [[p, words.hex(), cost] for (p, words), cost in self.best.items()]

    @classmethod
    def from_plain(cls, rows: list[list]) -> UpperBounds:
        bounds = cls()
        bounds.best = {(int(p), bytes.fromhex(h)): float(c) for p, h, c in rows}
        return bounds


def value_loss(
    head: Head,
    raw: Tensor,
    target: np.ndarray,
    lower: np.ndarray,
    base: np.ndarray | None,
    upper: np.ndarray,
    mode: str,
    truncate_upper: bool = True,
) -> tuple[Tensor, int]:
    """Mean NLL of the finite targets of a batch under ``head`` (and how many there were).

    ``mode`` (`TARGET_MODES`) says whether ``target`` is clipped to ``[lower, upper]`` first; the TN
    head receives ``upper`` (opened to ``u + 0.1``, ``inf`` kept) unless ``truncate_upper`` is False
    (then ``u`` only clips the target and the TN is TN(μ, σ, l − 0.1, ∞)); N ignores it.
    """
    target = np.asarray(target, dtype=np.float64)
    if TARGET_MODES[mode]:
        target = clip_targets(target, lower, upper)
    finite = np.isfinite(target)
    count = int(finite.sum())
    if count == 0:
        return raw.sum() * 0.0, 0
    keep = torch.from_numpy(finite).to(raw.device)
    as_t = lambda x: torch.as_tensor(np.asarray(x)[finite], dtype=raw.dtype, device=raw.device)  # noqa: E731
    nll = head.nll(
        raw[keep],
        as_t(target),
        as_t(lower),
        None if base is None else as_t(base),
        as_t(upper) if head.dist == "tn" and truncate_upper else None,
    )
    return nll.mean(), count
