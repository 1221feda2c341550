"""`Heuristic`: the interface every state evaluator of a `CompiledTask` implements.

A heuristic is built once per task (precomputing whatever per-task arrays its kernel needs) and
then evaluated on packed states, either one at a time (`__call__`, what an environment step uses)
or on a whole batch in one compiled call (`batch`, what search uses: GBFS evaluates all new
successors of an expansion at once, so the per-call Python overhead is paid once per expansion).
Subclasses implement `_evaluate`, which fills a preallocated output vector from a validated,
writeable C-contiguous ``(n, n_words)`` uint64 array; both public entry points go through it, so
the one-state and batch values cannot disagree.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from pddlgym_sl.errors import ConfigError
from pddlgym_sl.task import CompiledTask, State


class Heuristic:
    """Base class: ``h = make_heuristic("hff", task); h(task.init); h.batch(states)``.

    Attributes:
        name: key of the heuristic in `pddlgym_sl.heuristics.HEURISTICS`.
        admissible: True when the value never exceeds the optimal cost (blind, hmax, lmcut).
        task: the task the heuristic was built for; states of other tasks are rejected by shape
            only, so do not mix tasks with the same number of words.

    An instance owns preallocated work arrays that every evaluation reuses: it is cheap to call
    but not thread-safe (build one instance per thread).
    """

    name: ClassVar[str] = ""
    admissible: ClassVar[bool] = False

    def __init__(self, task: CompiledTask) -> None:
        self.task = task
        self.n_words = task.n_words

    def __call__(self, state: State | np.ndarray) -> float:
        """Value of one state (a `State` or a 1-D uint64 word vector); ``inf`` for a dead end."""
        return float(self.batch(self.as_batch(state))[0])

    def batch(self, states: np.ndarray) -> np.ndarray:
        """Values of a ``(n, n_words)`` uint64 batch of packed states, as an ``(n,)`` float64 vector."""
        states = self.check_batch(states)
        out = np.empty(states.shape[0], dtype=np.float64)
        if not self.task.solvable:  # the translator proved it: every state is a dead end
            out[:] = np.inf
        elif states.shape[0]:
            self._evaluate(states, out)
        return out

    def engine_args(self) -> Any:
        """The NamedTuple with which the search engine evaluates this heuristic inside its compiled
        loop (`pddlgym_sl.heuristics.compiled`), or None when search must call `batch`."""
        return None

    # ----------------------------------------------------------------- for subclasses
    def _evaluate(self, states: np.ndarray, out: np.ndarray) -> None:
        raise NotImplementedError

    def as_batch(self, state: State | np.ndarray) -> np.ndarray:
        """One state as a writeable ``(1, n_words)`` uint64 batch (states are read-only bytes)."""
        if isinstance(state, (bytes, bytearray, memoryview)):
            words = np.frombuffer(state, dtype="<u8")
        else:
            words = np.asarray(state)
            if words.ndim != 1:
                raise ConfigError(f"{self.name}: one state must be a State or a 1-D word vector")
        return np.array(words, dtype=np.uint64).reshape(1, -1)

    def check_batch(self, states: np.ndarray) -> np.ndarray:
        """Validate the batch shape and return it as a writeable C-contiguous uint64 array.

        Read-only input (e.g. from `CompiledTask.states_to_array`, which views the state bytes) is
        copied, so the kernels are compiled for one array type only.
        """
        states = np.asarray(states)
        if states.ndim != 2 or states.shape[1] != self.n_words:
            raise ConfigError(
                f"{self.name}: expected a (n, {self.n_words}) uint64 state batch, got shape {states.shape}"
            )
        if states.dtype != np.uint64 or not states.flags.c_contiguous or not states.flags.writeable:
            states = np.array(states, dtype=np.uint64, order="C")
        return states

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.task.name!r})"
