"""``flat``: a binary vector over the facts of ONE fixed problem, for MLP policies (e.g. SB3's).

Layout of the int8 vector (`spaces.MultiBinary`)::

    [ fact f true in the state, f = 0 .. n_facts - 1           ]   always
    [ static atom s, s = 0 .. n_static - 1 (always 1)           ]   static=True (default)
    [ fact f in the goal, f = 0 .. n_facts - 1                  ]   goal=True (default False)

Facts are in ``task.facts`` order, static atoms in `AtomTable` order (``task.static_atoms``, then
type atoms). For a fixed problem the static and goal parts are constant: they are kept by default
(static) so that every observation carries the static atoms, and optional (goal) because a fixed
goal carries no information. The vector's length depends on the problem: with ``size`` it is
zero-padded to that length (an environment over several problems pads to its largest). Its
positions mean different atoms in different problems, so a policy reading it plays one problem.
A task with neither facts nor static atoms (an empty goal with an empty ``:init``) gets one
zero entry: Gymnasium has no empty `spaces.MultiBinary`.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from gymnasium import spaces
from numba import njit

from pddlgym_sl.envs.encoders.schema import Schema, batch_bits
from pddlgym_sl.errors import ConfigError, PDDLError
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.successors import holds
from pddlgym_sl.task import CompiledTask, State

__all__ = ["FlatEncoder"]


class FlatEncoder:
    """Encodes states of one task as a fixed-length 0/1 vector (see the module docstring).

    Args:
        schema: the domain's vocabulary (for the static atoms).
        task: the compiled problem.
        static: include the static atoms (constant ones) after the facts.
        goal: append the goal membership of every fact.
        size: zero-pad the vector to this length (default: no padding, but at least 1);
            `PDDLError` if the task's vector is longer, `ConfigError` if it is not positive.
    """

    graph: ClassVar[bool] = False
    width: ClassVar[str] = "facts"
    """One entry per fact of ONE problem: problems share only a length (``size``, from `padding`
    over the compiled problems); entry i means another fact in another problem."""
    size_options: ClassVar[tuple[str, ...]] = ("size",)

    def __init__(
        self,
        schema: Schema,
        task: CompiledTask,
        static: bool = True,
        goal: bool = False,
        size: int | None = None,
    ) -> None:
        self.schema, self.task = schema, task
        self.n_facts = task.n_facts
        n_static = schema.atom_table(task).n_static if static else 0
        tail = [np.ones(n_static, dtype=np.int8)]
        if goal:
            g = np.zeros(self.n_facts, dtype=np.int8)
            g[task.goal] = 1
            tail.append(g)
        length = self.n_facts + sum(len(t) for t in tail)
        whole = isinstance(size, int | np.integer) and not isinstance(size, bool)
        if size is not None and (not whole or size < 1):
            raise ConfigError(f"flat's size must be a positive int, got {size!r}")
        if size is not None and size < length:
            raise PDDLError(
                f"the flat vector of task {task.name!r} has {length} entries, more than size={size}",
                file=task.problem_file,
            )
        self.size = max(1, length) if size is None else int(size)
        tail.append(np.zeros(self.size - length, dtype=np.int8))
        self._tail = np.concatenate(tail)
        self.space = spaces.MultiBinary(self.size)

    @classmethod
    def padding(
        cls, schema: Schema, task: CompiledTask, static: bool = True, goal: bool = False
    ) -> dict[str, int]:
        """The smallest ``size`` that fits the vectors of `task`."""
        return {"size": cls(schema, task, static=static, goal=goal).size}

    def encode(self, state: State | np.ndarray) -> np.ndarray:
        """The (size,) int8 vector of one state (a `State` or its uint64 words)."""
        return _encode(state.words if isinstance(state, State) else state, self.n_facts, self._tail)

    def encode_batch(self, states: np.ndarray) -> np.ndarray:
        """The (B, size) int8 matrix of a (B, n_words) uint64 batch."""
        bits = batch_bits(states, self.n_facts).view(np.int8)
        tail = np.broadcast_to(self._tail, (bits.shape[0], len(self._tail)))
        return np.concatenate([bits, tail], axis=1)


@njit(cache=CACHE)
def _encode(words, n_facts, tail):
    out = np.empty(n_facts + tail.shape[0], dtype=np.int8)
    for f in range(n_facts):
        out[f] = 1 if holds(words, f) else 0
    out[n_facts:] = tail
    return out
