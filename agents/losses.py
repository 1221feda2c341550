r"""Training losses: the head's negative log-likelihood (the paper) or a pairwise ranking loss.

``nll``
    ``−log p(h*)`` under the head's N or TN distribution, on batches of labelled plan states; for a
    state of a satisficing plan (`LabelledSplit.exact` False: only ``l ≤ h* ≤ u`` is known), the
    interval-censored ``−log P(l ≤ h* ≤ u)`` (`agents.heads.Head.interval_nll`).
``rank``
    For GBFS only the order of the heuristic values matters, so the newest learned heuristics are
    trained to rank (Chrestien et al., "Optimize Planning Heuristics to Rank, not to Estimate
    Cost-to-Goal", NeurIPS 2023; GOOSE's rank models, Chen, Trevizan and Thiébaux): along an
    optimal plan s_0 .. s_n, each s_{i+1} must score below its parent s_i and below its siblings
    (the other successors of s_i, `pddlgym_sl.data.labels.Siblings`), by a margin of 1 as GOOSE's
    ranking LP and SVM do:

    .. math::
        L = \frac{1}{|P|} \sum_{(b, w) \in P} \max(0,\ 1 - (h(w) - h(b)))

    over the pairs P (better b, worse w) of a batch, where h is the head's search value (N: μ;
    TN: E[x], with its bound and residual), or with ``rank_on="mu"`` the head's μ (a TN then
    searched without its bound, ``agents.evaluate --search-bound none``: E[x] of a TN saturates at
    its bound wherever μ falls well below it, and ranking E[x] leaves the order of such μ free).
    The loss is 0 when every pair is ordered with a gap of at least 1 and positive as soon as one
    pair is swapped. A batch draws plan states s_{i+1}
    (``anchors``, from size buckets as for the NLL), each with its parent and up to
    ``siblings_per_anchor`` of its siblings, about ``batch_size`` states in all. Siblings whose
    bound or residual base is infinite (dead ends: search never expands them) are left out.
``rank-nll``
    Both: ``rank + w · nll``, the pairwise hinge of ``rank`` on the batch's pairs plus ``w`` (the
    ``nll_weight``) times the mean NLL (or interval NLL) of the batch's plan states, so that the
    order that GBFS reads is trained as ``rank`` trains it while μ and σ stay a distribution of h*
    whose bound the TN knows. The best checkpoint has the lowest validation value of the sum.

A loss implements `Loss`: which rows a step trains on (`Loss.sampler`), the loss of a batch, the
validation metrics, and which of them selects the best checkpoint. `LOSSES` is the registry
behind ``python -m agents.supervised --loss``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
from torch import Tensor

from agents.errors import AgentError
from agents.heads import Head
from agents.inputs import TrainingInputs
from agents.metrics import bound_inputs, evaluate_split
from agents.micro_batches import evaluation_chunks
from agents.registries import LOSSES
from agents.sampler import BucketSampler
from pddlgym_sl.data.dataset import LabelledSplit

__all__ = [
    "LOSSES",
    "RANK_MARGIN",
    "RANK_ON",
    "Loss",
    "NLLLoss",
    "RankLoss",
    "RankNLLLoss",
    "RankingSplit",
    "labelled_nll",
    "make_loss",
    "pairwise_hinge",
]

RANK_MARGIN = 1.0
RANK_ON = ("value", "mu")
"""What a ranking loss orders: the head's search value, or its μ."""
SIBLINGS_PER_ANCHOR = 8


class Sampler(Protocol):
    def batch(self, step: int) -> np.ndarray:
        """Ascending rows of the batch of training step `step` (a pure function of seed and step)."""
        ...


class Loss(Protocol):
    """A training loss (see the module docstring)."""

    name: str
    select: str
    """the validation metric (lower is better) that selects the best checkpoint"""

    def prepare(self, split: LabelledSplit) -> LabelledSplit:
        """The split training and validation run on (the loss may add rows)."""
        ...

    def sampler(self, split: LabelledSplit, sizes: np.ndarray, batch_size: int, seed: int) -> Sampler: ...

    def __call__(self, head: Head, raw: Tensor, split: LabelledSplit, rows: np.ndarray) -> Tensor:
        """The loss of a batch: ``raw`` model outputs of ``rows`` of the prepared split."""
        ...

    def validate(
        self, model: torch.nn.Module, head: Head, inputs: TrainingInputs, split: LabelledSplit, device
    ) -> dict[str, float]: ...


def labelled_nll(head: Head, raw: Tensor, split: LabelledSplit, rows: np.ndarray) -> Tensor:
    """Per row of `rows`: the head's NLL of h*, or where the split knows only an interval
    ``[l, u]`` (a satisficing plan's state, `LabelledSplit.exact`), its interval NLL."""
    target, lower, base, upper = bound_inputs(split, head, rows, raw.device)
    nll = head.nll(raw, target, lower, base, upper)
    exact = split.exact_rows(rows)
    if exact is None:
        return nll
    interval = head.interval_nll(raw, lower, target, base, upper)  # target: u, the plan's cost-to-go
    return torch.where(torch.as_tensor(exact, device=raw.device), nll, interval)


class NLLLoss:
    """The head's negative log-likelihood (the paper's loss); the best checkpoint has the lowest
    validation MSE."""

    name, select = "nll", "mse"

    def __init__(self, head: Head) -> None:
        self.head = head

    def prepare(self, split: LabelledSplit) -> LabelledSplit:
        return split

    def sampler(self, split: LabelledSplit, sizes: np.ndarray, batch_size: int, seed: int) -> Sampler:
        return BucketSampler(sizes, batch_size, seed)

    def __call__(self, head: Head, raw: Tensor, split: LabelledSplit, rows: np.ndarray) -> Tensor:
        return labelled_nll(head, raw, split, rows).mean()

    def validate(self, model, head, inputs, split, device) -> dict[str, float]:
        return evaluate_split(model, head, inputs, split, device)


def pairwise_hinge(h: Tensor, better: Tensor, worse: Tensor, margin: float = RANK_MARGIN) -> Tensor:
    """Mean of ``max(0, margin − (h[worse] − h[better]))`` over the pairs (0 without pairs)."""
    if len(better) == 0:
        return h.sum() * 0.0
    return torch.relu(margin - (h[worse] - h[better])).mean()


@dataclass
class RankingSplit(LabelledSplit):
    """A labelled split with the siblings of its plans as rows of their problems (after the plan
    states; their h* is NaN), and who ranks below whom.

    Attributes (besides `LabelledSplit`'s):
        parent: (N,) int64 row of the plan state s_i that a row is a successor of: for plan state
            s_{i+1} its predecessor on the plan, for a sibling the state it was expanded from;
            -1 for the initial states.
        is_plan: (N,) bool, True for the plan states.
    """

    parent: np.ndarray = None  # type: ignore[assignment]
    is_plan: np.ndarray = None  # type: ignore[assignment]
    _all_pairs: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @classmethod
    def build(cls, split: LabelledSplit, head: Head) -> RankingSplit:
        """Add the siblings of `split` whose bound and residual base (for `head`) are finite."""
        sib = split.siblings
        if sib is None:
            raise AgentError(
                f"--loss rank needs the siblings of the plans, which the labels in {split.split_dir} lack "
                "(label format 1): python -m pddlgym_sl.data.generate with the same arguments adds them"
            )
        keep = np.isfinite(sib.values[head.lower_key])
        if head.residual_key:
            keep &= np.isfinite(sib.values[head.residual_key])
        offsets = split.offsets
        states, problem_of, parent, is_plan, order = [], [], [], [], []
        values = {k: [] for k in split.values}
        features, h_star = [], []
        row = 0
        new_row_of_plan = np.empty(len(split), dtype=np.int64)
        for k in range(len(split.problems)):
            plan_rows = np.arange(offsets[k], offsets[k + 1])
            sib_rows = np.flatnonzero((sib.problem_of == k) & keep)
            n_plan, n_sib = len(plan_rows), len(sib_rows)
            new_row_of_plan[plan_rows] = row + np.arange(n_plan)
            local = np.flatnonzero(sib.problem_of == k)
            states.append(np.concatenate([split.states[k], sib.states[k][np.isin(local, sib_rows)]]))
            problem_of.append(np.full(n_plan + n_sib, k, dtype=np.int32))
            plan_parent = np.concatenate([[-1], row + np.arange(n_plan - 1)])
            parent.append(np.concatenate([plan_parent, np.full(n_sib, -2)]))  # siblings: set below
            is_plan.append(np.concatenate([np.ones(n_plan, bool), np.zeros(n_sib, bool)]))
            order.append((plan_rows, sib_rows))
            for name, v in values.items():
                v.append(np.concatenate([split.values[name][plan_rows], sib.values[name][sib_rows]]))
            features.append(np.concatenate([split.features[plan_rows], sib.features[sib_rows]]))
            h_star.append(np.concatenate([split.h_star[plan_rows], np.full(n_sib, np.nan)]))
            row += n_plan + n_sib
        parent_all = np.concatenate(parent)
        exact_all = np.ones(len(parent_all), dtype=bool)  # siblings: no label, nothing to call inexact
        if split.exact is not None:
            exact_all[new_row_of_plan] = split.exact
        sibling_slots = np.flatnonzero(parent_all == -2)
        kept_siblings = np.concatenate([s for _, s in order])
        parent_all[sibling_slots] = new_row_of_plan[sib.parent_row[kept_siblings]]
        return cls(
            split_dir=split.split_dir,
            domain_file=split.domain_file,
            problems=split.problems,
            states=states,
            facts_digest=split.facts_digest,
            problem_of=np.concatenate(problem_of),
            h_star=np.concatenate(h_star),
            values={name: np.concatenate(v) for name, v in values.items()},
            features=np.concatenate(features),
            exact=exact_all if not exact_all.all() else None,
            parent=parent_all,
            is_plan=np.concatenate(is_plan),
        )

    def pairs(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(better, worse) positions in ascending `rows` of every pair whose states both are in it:
        a plan state and its parent, and a plan state and each sibling sharing its parent."""
        pos = {int(r): i for i, r in enumerate(rows)}
        anchors_of: dict[int, list[int]] = {}
        better, worse = [], []
        for i, r in enumerate(rows):
            p = int(self.parent[r])
            if self.is_plan[r] and p in pos:
                better.append(i)
                worse.append(pos[p])
                anchors_of.setdefault(p, []).append(i)
        for i, r in enumerate(rows):
            if not self.is_plan[r]:
                for a in anchors_of.get(int(self.parent[r]), ()):
                    better.append(a)
                    worse.append(i)
        return np.asarray(better, dtype=np.int64), np.asarray(worse, dtype=np.int64)

    def all_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(better, worse) rows of every pair of the split (computed once)."""
        if self._all_pairs is None:
            self._all_pairs = self.pairs(np.arange(len(self)))
        return self._all_pairs


class RankSampler:
    """Batches of anchors (plan states s_{i+1}, i >= 0) drawn from size buckets, each with its
    parent and up to ``siblings_per_anchor`` of its siblings (drawn without replacement)."""

    def __init__(
        self, split: RankingSplit, sizes: np.ndarray, batch_size: int, seed: int, siblings_per_anchor: int
    ) -> None:
        self.split, self.seed, self.k = split, seed, siblings_per_anchor
        self.anchors = np.flatnonzero(split.is_plan & (split.parent >= 0))
        if len(self.anchors) == 0:
            raise AgentError("--loss rank needs plans with at least one step")
        per_batch = max(1, batch_size // (2 + siblings_per_anchor))
        self.buckets = BucketSampler(sizes[self.anchors], per_batch, seed)
        siblings = np.flatnonzero(~split.is_plan)
        by_parent = siblings[np.argsort(split.parent[siblings], kind="stable")]
        self.sibling_rows = by_parent
        parents = split.parent[by_parent]
        self.start = np.searchsorted(parents, np.arange(len(split)), side="left")
        self.end = np.searchsorted(parents, np.arange(len(split)), side="right")

    def batch(self, step: int) -> np.ndarray:
        anchors = self.anchors[self.buckets.batch(step)]
        rng = np.random.default_rng([self.seed, step, 1])
        rows = [anchors, self.split.parent[anchors]]
        for p in self.split.parent[anchors]:
            candidates = self.sibling_rows[self.start[p] : self.end[p]]
            if len(candidates) > self.k:
                candidates = rng.choice(candidates, size=self.k, replace=False)
            rows.append(candidates)
        return np.unique(np.concatenate(rows))


class RankLoss:
    """The pairwise ranking loss (see the module docstring); the best checkpoint has the lowest
    validation ranking loss over all pairs of the validation split."""

    name, select = "rank", "rank_loss"

    def __init__(
        self, head: Head, siblings_per_anchor: int = SIBLINGS_PER_ANCHOR, rank_on: str = "value"
    ) -> None:
        if rank_on not in RANK_ON:
            raise AgentError(f"rank_on={rank_on!r}: choose one of {', '.join(RANK_ON)}")
        self.head, self.siblings_per_anchor, self.rank_on = head, siblings_per_anchor, rank_on

    def ranked(self, head: Head, raw: Tensor, lower: Tensor, base: Tensor | None) -> Tensor:
        """What the pairs order: the head's search value, or μ (``rank_on``)."""
        if self.rank_on == "mu":
            return head.mu_sigma(raw, base)[0]
        return head.heuristic(raw, lower, base)

    def prepare(self, split: LabelledSplit) -> RankingSplit:
        return RankingSplit.build(split, self.head)

    def sampler(self, split: LabelledSplit, sizes: np.ndarray, batch_size: int, seed: int) -> Sampler:
        assert isinstance(split, RankingSplit)
        return RankSampler(split, sizes, batch_size, seed, self.siblings_per_anchor)

    def __call__(self, head: Head, raw: Tensor, split: LabelledSplit, rows: np.ndarray) -> Tensor:
        assert isinstance(split, RankingSplit)
        _, lower, base, _ = bound_inputs(split, head, rows, raw.device)
        better, worse = split.pairs(rows)
        h = self.ranked(head, raw, lower, base)
        return pairwise_hinge(h, torch.as_tensor(better), torch.as_tensor(worse))

    @torch.no_grad()
    def validate(self, model, head, inputs, split, device, batch_size: int = 1024) -> dict[str, float]:
        """Ranking loss and the share of correctly ordered pairs over every pair of `split`, and
        the MSE on its plan states."""
        assert isinstance(split, RankingSplit)
        was_training = model.training
        model.eval()
        values = []
        for rows in evaluation_chunks(model, inputs.sizes(), np.arange(len(split)), batch_size):
            _, lower, base, _ = bound_inputs(split, head, rows, device)
            values.append(self.ranked(head, model(inputs.batch(rows, device)), lower, base).double().cpu())
        model.train(was_training)
        h = torch.cat(values)
        better, worse = (torch.as_tensor(a) for a in split.all_pairs())
        plan = torch.as_tensor(split.is_plan)
        target = torch.as_tensor(split.h_star)
        return {
            "rank_loss": float(pairwise_hinge(h, better, worse)),
            "pair_accuracy": float((h[better] < h[worse]).double().mean()) if len(better) else 1.0,
            "mse": float((h[plan] - target[plan]).square().mean()),
        }


class RankNLLLoss(RankLoss):
    """The ranking loss plus ``nll_weight`` times the NLL of the batch's plan states (the module
    docstring); the best checkpoint has the lowest validation value of that sum (``loss``)."""

    name, select = "rank-nll", "loss"

    def __init__(
        self,
        head: Head,
        siblings_per_anchor: int = SIBLINGS_PER_ANCHOR,
        nll_weight: float = 1.0,
        rank_on: str = "value",
    ) -> None:
        super().__init__(head, siblings_per_anchor, rank_on)
        self.nll_weight = nll_weight

    def __call__(self, head: Head, raw: Tensor, split: LabelledSplit, rows: np.ndarray) -> Tensor:
        assert isinstance(split, RankingSplit)
        plan = torch.as_tensor(split.is_plan[rows], device=raw.device)
        nll = labelled_nll(head, raw[plan], split, rows[split.is_plan[rows]])
        return super().__call__(head, raw, split, rows) + self.nll_weight * nll.mean()

    @torch.no_grad()
    def validate(self, model, head, inputs, split, device, batch_size: int = 1024) -> dict[str, float]:
        """`RankLoss.validate`'s metrics, the NLL of the plan states, and their weighted sum."""
        assert isinstance(split, RankingSplit)
        metrics = super().validate(model, head, inputs, split, device, batch_size)
        was_training = model.training
        model.eval()
        nll = []
        plan_rows = np.flatnonzero(split.is_plan)
        for rows in evaluation_chunks(model, inputs.sizes(), plan_rows, batch_size):
            nll.append(labelled_nll(head, model(inputs.batch(rows, device)), split, rows).double().cpu())
        model.train(was_training)
        metrics["nll"] = float(torch.cat(nll).mean())
        metrics["loss"] = metrics["rank_loss"] + self.nll_weight * metrics["nll"]
        return metrics


def make_loss(name: str, head: Head, nll_weight: float = 1.0, rank_on: str = "value") -> Loss:
    """The loss ``name`` (a key of `LOSSES`, `agents.registries`) for a model with `head`;
    `nll_weight` weighs the NLL of ``rank-nll``; `rank_on` says what the ranking losses order."""
    loss = LOSSES.lookup(name)
    if name == "rank-nll":
        return loss(head, nll_weight=nll_weight, rank_on=rank_on)
    return loss(head, rank_on=rank_on) if name == "rank" else loss(head)
