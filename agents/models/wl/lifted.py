"""A trained WL model as a heuristic on lifted states (`pddlgym_sl.lifted`), inside the lifted
search's compiled loop.

A WL model reads a state's atoms and the goal only (the ILG of `compiled.graph`), so it applies to
lifted states unchanged: the graph of a `pddlgym_sl.lifted.LiftedTask` is built over its reachable
fluent atoms (the same attribute names as a `CompiledTask`'s: `compiled.graph.task_graph` takes
either), and the incremental WL counts, the linear map and the head are the compiled heuristic's own
(`compiled.kernels.update`, `compiled.heuristic.wl_value`), given each lifted state as a fact bit
set. An ILG node is an atom that is true (or a goal), so a reachable atom that the translator would
have dropped never shows in a graph unless it is true; the lifted graph differs from the grounded
one only by true atoms the translator found irrelevant to the goal (rovers' images nobody asks
for), which the training graphs lacked.

The head's admissible bound and residual base are heuristics of the grounded task, which a lifted
task does not have: the model is evaluated as ``--search-bound none`` evaluates it on a grounded
task (`compiled.heuristic`): the value is μ, the bound unused (N without clip reads it only to spot
dead ends, which are left to the search: its value is the same), and a model with a residual is
refused.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from agents.errors import AgentError
from agents.models.wl.compiled.export import export_wl
from agents.models.wl.compiled.graph import task_graph
from agents.models.wl.compiled.heuristic import WLEngineArgs, wl_value
from agents.models.wl.compiled.kernels import wl_arrays
from agents.models.wl.compiled.symbolic import symbolic_args
from pddlgym_sl.lifted.heuristics import lifted_value
from pddlgym_sl.lifted.task import LiftedTask
from pddlgym_sl.numba_cache import CACHE

__all__ = ["LiftedWLArgs", "LiftedWLHeuristic"]

_JIT = {"cache": CACHE, "nogil": True}


class LiftedWLArgs(NamedTuple):
    """The compiled WL heuristic's arrays (`compiled.heuristic.WLEngineArgs`) and a fact bit set
    (uint64, n_words) the lifted state is written into for each evaluation."""

    wl: WLEngineArgs
    bits: np.ndarray


@njit(**_JIT)
def _value(args, state, n):
    bits = args.bits
    one = np.uint64(1)
    for i in range(n):
        f = state[i]
        bits[f >> 6] |= one << np.uint64(f & 63)
    v = wl_value(args.wl, bits, 0.0, False, True)
    for i in range(n):
        bits[state[i] >> 6] = 0
    return v


@overload(lifted_value, jit_options=_JIT)
def _lifted_value(args, state, n):
    if getattr(args, "instance_class", None) is LiftedWLArgs:
        return lambda args, state, n: _value(args, state, n)
    return None


class LiftedWLHeuristic:
    """A trained ``--model wl`` run (N or TN head, no residual) on one lifted task.

    Args:
        trained: the restored model and head (`agents.learned_heuristic.TrainedModel`).
        task: the lifted task.
    """

    def __init__(self, trained: Any, task: LiftedTask) -> None:
        if trained.name != "wl":
            raise AgentError(f"a lifted search evaluates --model wl runs, not {trained.name!r}")
        export = export_wl(trained.model, trained.head)
        if export.residual:
            raise AgentError(
                f"the run's head adds the residual {export.residual!r}, a heuristic of the grounded task: "
                "a lifted search cannot compute it"
            )
        self.task, self.export = task, export
        graph = task_graph(task, list(export.predicates), task.domain_file)  # type: ignore[arg-type]
        model = (export.c0, export.weight, export.wz0, export.mean, export.inv_std)
        bits = np.zeros(task.n_words, dtype=np.uint64)
        init = bits.copy()
        for f in task.init.tolist():
            init[f >> 6] |= np.uint64(1) << np.uint64(f & 63)
        arrays = wl_arrays(export.table, graph, task.n_words, model, reference=init)
        # the head's flags in `WLEngineArgs`' order: no clip, solvable, the value does not read the
        # bound, the eager mode, no screening (the value is μ: ``--search-bound none``)
        head = np.concatenate([export.head, [0.0, float(task.solvable), 1.0, 0.0, 0.0]])
        none = symbolic_args(None)
        self._args = LiftedWLArgs(WLEngineArgs(*arrays, head, lower=none, residual=none, screen=none), bits)

    def values(self, states: list[np.ndarray]) -> np.ndarray:
        """The values of lifted states (each its sorted fact ids), in order (for tests; the search
        evaluates inside its loop)."""
        out = np.empty(len(states), dtype=np.float64)
        for i, state in enumerate(states):
            state = np.ascontiguousarray(state, dtype=np.uint32)
            out[i] = _value(self._args, state, len(state))
        return out

    def engine_args(self) -> LiftedWLArgs:
        """The arguments the lifted search evaluates states with (`pddlgym_sl.lifted.heuristics`)."""
        return self._args

    def __repr__(self) -> str:
        return f"LiftedWLHeuristic({self.task.name!r}, {self.export.n_features} features)"
