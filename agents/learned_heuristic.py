"""A trained model as a search heuristic: one forward pass per batch of states of one task.

`LearnedHeuristic` implements the batch interface of `pddlgym_sl.search` (``batch(states)``):
the lower bound and residual base come from `pddlgym_sl.heuristics` (the engine that labelled
the training data), the model input from the same encoders the trainer used, and the value is
the head's point estimate — N: μ, N+clip: max(μ, l), TN: E[x], cat: argmax. A state whose admissible
bound is infinite is a proven dead end and gets ``inf``. ``batch(states, upper)`` also takes an upper
bound u per state (anytime search passes ``C − g(s)``, `pddlgym_sl.search.anytime`): TN's value is
then ``min(E[x], u)`` of TN(μ, σ, l − 0.1, u + 0.1) (`agents.heads`), so it never exceeds u. Without
u (plain GBFS, which knows no plan from a new state) the head's default is used: ``1e5`` for
``upper`` "none" and "plan", ``+∞`` for "inf". `values_and_confidences` adds the head's confidence,
for the confidence-aware searches.

With more than one torch thread, the bound and the residual base are computed on a second thread
while the forward pass runs (the heuristics' kernels release the GIL), and the model's compiled
kernels stay on the calling thread (`agents.models.nlm.fast.threads.inline_kernels`): on the few
states of one search expansion this hides the heuristics' time (LM-cut takes about a quarter of the
network's on 30 objects), where splitting the forward pass over both cores gains less than the
handover costs. The forward pass then also covers dead ends, whose value is ``inf`` all the same.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from agents.checkpoint import CheckpointError, load_model_config, read_weights
from agents.devices import resolve_device
from agents.heads import Head
from agents.models import make_model, model_spec
from agents.models.nlm.fast.threads import inline_kernels
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
        device: where the forward pass runs.
    """

    def __init__(
        self,
        trained: TrainedModel,
        task: CompiledTask,
        schema: Schema | None = None,
        clip: bool = False,
        device: torch.device | str = "cpu",
    ) -> None:
        self.trained, self.task, self.clip = trained, task, clip
        self.device = resolve_device(device)
        head = trained.head
        self.lower = make_heuristic(head.lower_key, task)
        self.residual = make_heuristic(head.residual_key, task) if head.residual_key else None
        self.inputs = model_spec(trained.name).search_inputs(task, self.device, schema)

    def _engine(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The admissible bound and the residual base (None without a residual) of ``states``."""
        base = self.residual.batch(states) if self.residual is not None else None
        return self.lower.batch(states), base

    def batch(self, states: np.ndarray, upper: np.ndarray | None = None) -> np.ndarray:
        """Heuristic values of a (n, n_words) uint64 batch of this task's states, given an upper
        bound per state in `upper` ((n,) floats, inf for none) or none at all (the module docstring)."""
        return self._predict(states, confidences=False, upper=upper)[0]

    def values_and_confidences(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Heuristic values and confidences (`agents.heads.Head.confidence`; 0 for a dead end) of a
        batch: what the confidence-aware searches of `pddlgym_sl.search` take."""
        return self._predict(states, confidences=True)

    @torch.inference_mode()  # cheaper than no_grad: no version counters or autograd metadata
    def _predict(
        self, states: np.ndarray, confidences: bool, upper: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        states = np.ascontiguousarray(states)
        overlap = torch.get_num_threads() > 1  # the engine beside the forward pass (module docstring)
        if overlap:
            pending = _engine_pool().submit(self._engine, states)
            with inline_kernels():  # one core each: the model's kernels stay on this thread
                raw = self.trained.model(self.inputs(states))
            lower, base = pending.result()
        else:
            lower, base = self._engine(states)
        live = np.isfinite(lower) if base is None else np.isfinite(lower) & np.isfinite(base)
        if overlap:
            raw = raw[torch.from_numpy(live).to(raw.device)]
        elif live.any():
            raw = self.trained.model(self.inputs(states[live]))
        values = np.full(len(states), np.inf)
        conf = np.zeros(len(states))
        if live.any():
            # the bounds are float32 values on the model side (as in training)
            lower_l = lower[live].astype(np.float32)
            base_l = base[live].astype(np.float32) if base is not None else None
            upper_l = None if upper is None else np.asarray(upper, dtype=np.float64)[live]
            head = self.trained.head
            values[live] = head.heuristic_values(raw, lower_l, base_l, self.clip, upper_l)
            if confidences:
                conf[live] = head.confidence_values(raw, lower_l, base_l, values[live], clip=self.clip)
        return values, conf

    def __call__(self, state) -> float:
        return float(self.batch(state.words[None, :])[0])


def learned_heuristic(
    trained: TrainedModel,
    task: CompiledTask,
    schema: Schema | None = None,
    clip: bool = False,
    device: torch.device | str = "cpu",
    compiled: bool = True,
) -> Any:
    """The search heuristic of a trained model on `task`: with `compiled`, a ``--model wl`` run
    with an N or TN head becomes `agents.models.wl.compiled.CompiledWLHeuristic` (numba, the
    same values, evaluated inside the search engine's loop where it offers that; `device` is
    not used then); every other run, or ``compiled=False``, a `LearnedHeuristic`."""
    if compiled and trained.name == "wl" and trained.head.dist in ("n", "tn"):
        from agents.models.wl.compiled import CompiledWLHeuristic

        return CompiledWLHeuristic(trained, task, schema, clip=clip)
    return LearnedHeuristic(trained, task, schema, clip=clip, device=device)
