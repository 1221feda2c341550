"""A trained model as a search heuristic: one forward pass per batch of states, of one task or of several.

`LearnedHeuristic` implements the batch interface of `pddlgym_sl.search` (``batch(states)``):
the lower bound and residual base come from `pddlgym_sl.heuristics` (the engine that labelled
the training data), the model input from the same encoders the trainer used, and the value is
the head's point estimate — N: μ, N+clip: max(μ, l), TN: E[x], cat: argmax. A state whose admissible
bound is infinite is a proven dead end and gets ``inf``; where the value does not read the bound
(N and cat without clip) hmax stands in for LM-cut, whose dead ends are hmax's (`dead_end_bound`).
``batch(states, upper)`` also takes an upper bound u per state (anytime search passes ``C − g(s)``,
`pddlgym_sl.search.anytime`): TN's value is then ``min(E[x], u)`` of TN(μ, σ, l − 0.1, u + 0.1)
(`agents.heads`), so it never exceeds u. Without u (plain GBFS, which knows no plan from a new
state) the head's default is used: ``1e5`` for ``upper`` "none" and "plan", ``+∞`` for "inf".
`values_and_confidences` adds the head's confidence, for the confidence-aware searches.

`evaluate_together` evaluates the batches of several `LearnedHeuristic` of one trained model (the
new states of several searches advanced in lockstep, `agents.lockstep`) with one forward pass per
thread when the model's search inputs can be concatenated (``collate``; problems of different
sizes included), and gives every state the value that ``batch`` gives it alone, bit for bit: the
forward pass computes each state's output from that state alone (the NLM's compiled path, per
batch row), and the bounds and heads are per state. Models without ``collate`` (PyTorch's matrix
products round a row differently in a batch of one to three rows than in a larger one) get one
forward pass per search. ``batch`` is the case of one.

With more than one torch thread, the bounds and residual bases (LM-cut and hFF: on 100 objects
LM-cut alone costs several times the network) are computed on a worker thread while the forward
pass runs (the heuristics' kernels release the GIL; each thread has its own heuristic instances),
and the calling thread joins that work when its forward pass is done: the states are split into
jobs that both threads take in turn. The forward pass is split in two, one part per thread, each
thread then joining the bounds: with the batches of several searches, by search (each thread
keeps its own NLM memo, `agents.models.nlm.fast.threads.memo_shard`); with one search and a model
that computes each row from that row alone (``collate``: the NLM), by halves of its rows (where
the bounds are cheap, hmax on 100 objects, the network's time is then shared;
docs/performance.md). Each part stays on its thread: the model's compiled kernels
(`agents.models.nlm.fast.threads.inline_kernels`), where handing each layer's slices to a pool
would gain less than the handovers cost, and PyTorch's operations (one intra-op thread while
both threads work: an OpenMP team competing with the other thread for two cores spins, and a small
matrix product then took milliseconds instead of microseconds). The forward pass then also
covers dead ends, whose value is ``inf`` all the same.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from agents.checkpoint import CheckpointError, load_model_config, read_weights
from agents.devices import resolve_device
from agents.errors import AgentError
from agents.heads import Head
from agents.models import make_model, model_spec
from agents.models.nlm.fast.threads import inline_kernels, memo_shard
from agents.run_files import build_on_meta, check_model_config, check_weights
from pddlgym_sl.envs.encoders.schema import Schema
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.task import CompiledTask

_ENGINE_POOL: tuple[int, ThreadPoolExecutor] | None = None  # (pid of the creating process, pool)


def _engine_pool() -> ThreadPoolExecutor:
    """One worker thread for the heuristics engine (a forked child gets its own)."""
    global _ENGINE_POOL
    if _ENGINE_POOL is None or _ENGINE_POOL[0] != os.getpid():
        _ENGINE_POOL = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="heuristics"))
    return _ENGINE_POOL[1]


@dataclass
class TrainedModel:
    """A model and its head, restored from a run directory (no pickled code involved)."""

    model: torch.nn.Module
    head: Head
    name: str
    domain: str
    run_dir: Path

    @classmethod
    def load(
        cls, run_dir: str | Path, device: torch.device | str = "cpu", checkpoint: str = "best"
    ) -> TrainedModel:
        run_dir = Path(run_dir)
        config_file = run_dir / "model.json"
        weights_file = run_dir / f"{checkpoint}.safetensors"
        config = load_model_config(config_file)
        name, model_config, head = check_model_config(config, config_file)
        weights = read_weights(weights_file)
        # the model's shapes from the config, on the meta device (no memory), must be the weights'
        check_weights(weights, build_on_meta(name, model_config, config_file), weights_file, config_file)
        try:
            model = make_model(name, **model_config)
            model.load_state_dict(weights)
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:  # AgentError (a ValueError) included
            why = f"cannot rebuild the model from it ({str(exc).strip().splitlines()[0]})"
            raise CheckpointError(why, file=config_file) from None
        model.to(resolve_device(device)).eval()
        return cls(model, head, name, config["domain"], run_dir)


class LearnedHeuristic:
    """Batch heuristic of a `TrainedModel` on one task.

    Args:
        trained: the restored model and head.
        task: the task whose states will be evaluated.
        schema: the domain's vocabulary, shared by the tasks of a domain (the NLM's input builder
            reads it; built from the task's domain file when omitted).
        clip: clip N's μ below by the admissible bound (the paper's "+clip").
        device: where the forward pass runs (default: where the model's parameters are).
        search_bound: the bound the value reads (`agents.registries.SEARCH_BOUNDS`): the head's
            own (``trained``), ``lmcut`` or ``hmax`` instead, or ``none`` (the value is μ, dead
            ends still ``inf``); ``screened`` and ``lazy`` need the compiled WL heuristic.
    """

    def __init__(
        self,
        trained: TrainedModel,
        task: CompiledTask,
        schema: Schema | None = None,
        clip: bool = False,
        device: torch.device | str | None = None,
        search_bound: str = "trained",
    ) -> None:
        check_search_bound(search_bound, trained, clip, compiled=False)
        self.trained, self.task, self.clip, self.search_bound = trained, task, clip, search_bound
        if device is None:
            device = next(trained.model.parameters(), torch.empty(0)).device
        self.device = resolve_device(device)
        head = trained.head
        bound = search_bound if search_bound in ("lmcut", "hmax") else head.lower_key
        reads_bound = head.bound_in_value(clip) and search_bound != "none"
        self.bound_key = bound if reads_bound else dead_end_bound(bound)
        self.lower = make_heuristic(self.bound_key, task)
        self.residual = make_heuristic(head.residual_key, task) if head.residual_key else None
        self.inputs = model_spec(trained.name).search_inputs(task, self.device, schema)
        self._engines: list[tuple[Any, Any]] = [(self.lower, self.residual)]

    def _engine(self, states: np.ndarray, thread: int = 0) -> tuple[np.ndarray, np.ndarray | None]:
        """The admissible bound and the residual base (None without a residual) of ``states``, by
        the heuristic instances of worker ``thread`` (each keeps its own work arrays)."""
        while len(self._engines) <= thread:
            head = self.trained.head
            residual = make_heuristic(head.residual_key, self.task) if head.residual_key else None
            self._engines.append((make_heuristic(self.bound_key, self.task), residual))
        lower, residual = self._engines[thread]
        base = residual.batch(states) if residual is not None else None
        return lower.batch(states), base

    def batch(self, states: np.ndarray, upper: np.ndarray | None = None) -> np.ndarray:
        """Heuristic values of a (n, n_words) uint64 batch of this task's states, given an upper
        bound per state in `upper` ((n,) floats, inf for none) or none at all (the module docstring)."""
        return evaluate_together([self], [states], None if upper is None else [upper])[0][0]

    def values_and_confidences(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Heuristic values and confidences (`agents.heads.Head.confidence`; 0 for a dead end) of a
        batch: what the confidence-aware searches of `pddlgym_sl.search` take."""
        return evaluate_together([self], [states], confidences=True)[0]

    def __call__(self, state) -> float:
        return float(self.batch(state.words[None, :])[0])

    def values(
        self, raw: Tensor, lower: np.ndarray, base: np.ndarray | None, upper: np.ndarray | None
    ) -> np.ndarray:
        """The search values of a batch's live states from the model's raw outputs and their
        bounds: the head's (`agents.heads.Head.heuristic_values`), or μ without the bound (N's in
        float32, TN's in float64, as the compiled WL heuristic computes them)."""
        head = self.trained.head
        if self.search_bound != "none" or head.dist == "n":
            return head.heuristic_values(raw, lower, base, self.clip, upper)
        mu = raw.detach().cpu().double().numpy()[..., 0]
        return mu + base if base is not None else mu


def check_search_bound(search_bound: str, trained: TrainedModel, clip: bool, compiled: bool) -> None:
    """`AgentError` for a ``search_bound`` that is unknown, that the path (`compiled`: the compiled
    WL heuristic) does not compute, or that contradicts ``clip`` (which reads the bound)."""
    from agents.registries import SEARCH_BOUNDS

    if search_bound not in SEARCH_BOUNDS:
        raise AgentError(f"search_bound={search_bound!r}: choose one of {', '.join(SEARCH_BOUNDS)}")
    if search_bound in ("screened", "lazy") and not compiled:
        raise AgentError(
            f"--search-bound {search_bound} is computed by the compiled WL heuristic only "
            f"(a --model wl run with an N or TN head, searched by gbfs or astar), not for {trained.name!r}"
        )
    if search_bound == "none" and clip:
        raise AgentError("--clip reads the bound: it cannot go with --search-bound none")


def dead_end_bound(bound: str) -> str:
    """The heuristic that finds the dead ends of admissible `bound` where its values are not needed
    (N or categorical values without clip, `agents.heads.Head.bound_in_value`): hmax for LM-cut,
    whose infinite set is exactly hmax's (both: the goal is relaxed-unreachable, and LM-cut starts
    from hmax) at a small part of its cost (GBFS with hmax alone evaluates 17,551 states/s on
    100-object ferry, with LM-cut 233: docs/performance.md); any other bound itself (blind: never
    infinite)."""
    return "hmax" if bound == "lmcut" else bound


def _bound_jobs(batches: Sequence[np.ndarray], threads: int) -> list[tuple[int, slice]]:
    """``(batch index, rows)`` jobs of the bounds: at least one per thread (the calling thread joins
    after its forward pass and takes what is left), each batch whole or in parts."""
    jobs = []
    parts = -(-threads // len(batches)) if threads > 1 else 1
    for k, states in enumerate(batches):
        step = max(1, -(-len(states) // parts))
        jobs += [(k, slice(lo, min(lo + step, len(states)))) for lo in range(0, len(states), step)]
    return jobs


def _forward(heuristics: Sequence[LearnedHeuristic], batches: Sequence[np.ndarray]) -> list[Tensor]:
    """The model's raw outputs of each batch: one forward pass over all of them when the search
    inputs can be concatenated (a ``collate`` static method), else one per batch."""
    model = heuristics[0].trained.model
    filled = [k for k, states in enumerate(batches) if len(states)]
    inputs = [heuristics[k].inputs(batches[k]) for k in filled]
    collate = getattr(type(heuristics[0].inputs), "collate", None)
    if len(inputs) <= 1 or collate is None:
        raws = [model(x) for x in inputs]
    else:
        raws = list(torch.split(model(collate(inputs)), [len(batches[k]) for k in filled]))
    out = [torch.empty(0, heuristics[0].trained.head.n_outputs)] * len(batches)  # empty batches: no rows
    for k, raw in zip(filled, raws, strict=True):
        out[k] = raw
    return out


def _forward_groups(
    heuristics: Sequence[LearnedHeuristic], batches: Sequence[np.ndarray]
) -> list[list[tuple[int, slice]]]:
    """The ``(batch, rows)`` parts of each thread's forward pass. Several searches: two groups
    (one per thread) by the parity of their NLM memo slot (a search's memo entries then stay with
    one thread's memo shard) or of their index. One search: its rows in two halves, one per
    thread, where the model computes each row from that row alone (``collate``: the NLM), so that
    the network's time is shared when the bounds cost less (hmax; on 100 objects the forward pass
    costs several milliseconds a state); otherwise all on the first thread. A model on an
    accelerator: all on the first thread, in one pass (two threads' passes would each take the
    device's free memory as theirs, and the device runs them one after the other anyway)."""
    if heuristics[0].device.type != "cpu":
        return [[(k, slice(0, len(states))) for k, states in enumerate(batches)]]
    if len(batches) == 1:  # `evaluate_together` refuses none
        n = len(batches[0])
        if n >= 2 and getattr(type(heuristics[0].inputs), "collate", None) is not None:
            half = (n + 1) // 2
            return [[(0, slice(0, half))], [(0, slice(half, n))]]
        return [[(0, slice(0, n))]]
    groups: list[list[tuple[int, slice]]] = [[], []]
    for k, h in enumerate(heuristics):
        groups[getattr(h.inputs, "slot", k) % 2].append((k, slice(0, len(batches[k]))))
    return [g for g in groups if g] if groups[0] else [[], groups[1]]


@torch.inference_mode()  # cheaper than no_grad: no version counters or autograd metadata
def evaluate_together(
    heuristics: Sequence[LearnedHeuristic],
    batches: Sequence[np.ndarray],
    uppers: Sequence[np.ndarray | None] | None = None,
    confidences: bool = False,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(values, confidences)`` of each ``batches[i]`` (a (n_i, n_words) uint64 batch of
    ``heuristics[i].task``'s states; ``uppers[i]``: its upper bounds or None), with one forward
    pass of the heuristics' common model (module docstring). Confidences are zeros unless
    ``confidences``."""
    if not heuristics or len(heuristics) != len(batches):
        raise AgentError("evaluate_together needs one batch per heuristic, and at least one")
    trained = heuristics[0].trained
    if any(h.trained is not trained for h in heuristics):
        raise AgentError("evaluate_together evaluates the heuristics of one trained model")
    batches = [np.ascontiguousarray(states) for states in batches]
    bounds: list[list] = [[None, None] for _ in batches]
    threads = min(torch.get_num_threads(), 2)
    jobs = _bound_jobs(batches, threads)
    results: list[tuple[np.ndarray, np.ndarray | None] | None] = [None] * len(jobs)
    taken = itertools.count()  # next() is atomic under the GIL: each job is taken once

    def work(thread: int) -> None:
        while (j := next(taken)) < len(jobs):
            k, rows = jobs[j]
            results[j] = heuristics[k]._engine(batches[k][rows], thread)

    if threads > 1:  # the bounds beside the forward passes (module docstring)
        groups = _forward_groups(heuristics, batches)
        pieces: list[list[tuple[int, Tensor]]] = [[] for _ in batches]

        def forward_then_bounds(thread: int) -> None:
            group = groups[thread] if thread < len(groups) else []
            if group:
                # each thread's kernels, and PyTorch's operations, on that thread (inference mode is
                # per thread); its own NLM memo
                with torch.inference_mode(), inline_kernels(), memo_shard(thread):
                    mine = [heuristics[k] for k, _ in group]
                    part = _forward(mine, [batches[k][rows] for k, rows in group])
                for (k, rows), raw in zip(group, part, strict=True):
                    pieces[k].append((rows.start, raw))
            work(thread)

        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            helper = _engine_pool().submit(forward_then_bounds, 1)
            try:
                forward_then_bounds(0)
            finally:
                helper.result()
        finally:
            torch.set_num_threads(before)
        raws = [torch.cat([raw for _, raw in sorted(p, key=lambda x: x[0])]) for p in pieces]
    else:
        work(0)
        raws = None
    for (k, _), (lower, base) in zip(jobs, results, strict=True):  # type: ignore[misc]
        bounds[k][0] = lower if bounds[k][0] is None else np.concatenate([bounds[k][0], lower])
        if base is not None:
            bounds[k][1] = base if bounds[k][1] is None else np.concatenate([bounds[k][1], base])
    for k in range(len(batches)):
        if bounds[k][0] is None:  # an empty batch
            bounds[k][0] = np.empty(0)
            bounds[k][1] = None if heuristics[k].residual is None else np.empty(0)
    lives = [np.isfinite(lower) & (True if base is None else np.isfinite(base)) for lower, base in bounds]
    if raws is None:  # one thread: the forward pass of the live states only
        keep = [k for k, live in enumerate(lives) if live.any()]
        part = _forward([heuristics[k] for k in keep], [batches[k][lives[k]] for k in keep]) if keep else []
        raws = [None] * len(batches)
        for k, raw in zip(keep, part, strict=True):
            raws[k] = raw
    else:
        raws = [raw[torch.from_numpy(live).to(raw.device)] for raw, live in zip(raws, lives, strict=True)]
    head = trained.head
    out = []
    for k, h in enumerate(heuristics):
        (lower, base), live, raw = bounds[k], lives[k], raws[k]
        values = np.full(len(batches[k]), np.inf)
        conf = np.zeros(len(batches[k]))
        if live.any():
            # the bounds are float32 values on the model side (as in training)
            lower_l = lower[live].astype(np.float32)
            base_l = base[live].astype(np.float32) if base is not None else None
            upper = None if uppers is None else uppers[k]
            upper_l = None if upper is None else np.asarray(upper, dtype=np.float64)[live]
            values[live] = h.values(raw, lower_l, base_l, upper_l)
            if confidences:
                conf[live] = head.confidence_values(raw, lower_l, base_l, values[live], clip=h.clip)
        out.append((values, conf))
    return out


def learned_heuristic(
    trained: TrainedModel,
    task: CompiledTask,
    schema: Schema | None = None,
    clip: bool = False,
    device: torch.device | str = "cpu",
    compiled: bool = True,
    search_bound: str = "trained",
) -> Any:
    """The search heuristic of a trained model on `task`: with `compiled`, a ``--model wl`` run
    with an N or TN head becomes `agents.models.wl.compiled.CompiledWLHeuristic` (numba, the
    same values, evaluated inside the search engine's loop; `device` is not used then); every
    other run, or ``compiled=False``, a `LearnedHeuristic`. `search_bound`: which bound the
    value reads, and when (`agents.registries.SEARCH_BOUNDS`)."""
    if compiled and trained.name == "wl" and trained.head.dist in ("n", "tn"):
        from agents.models.wl.compiled import CompiledWLHeuristic

        check_search_bound(search_bound, trained, clip, compiled=True)
        return CompiledWLHeuristic(trained, task, schema, clip=clip, search_bound=search_bound)
    return LearnedHeuristic(trained, task, schema, clip=clip, device=device, search_bound=search_bound)
