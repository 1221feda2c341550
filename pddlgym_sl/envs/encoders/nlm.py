"""``nlm``: per-arity boolean predicate tensors of state and goal, the input of Neural Logic Machines.

For every arity ``k`` that some predicate of the domain's `Schema` has, one int8 tensor

    ``"arity{k}"``: shape ``(N,) * k + (2 * P_k,)``

where ``P_k`` is the number of predicates of arity ``k`` (in schema order) and ``N`` the number of
object slots. Object ``i`` is ``task.objects[i]``. The channels of the ``j``-th predicate of that
arity are interleaved: channel ``2 * j`` is "true in the state" (static atoms included: they are
true in every state) and channel ``2 * j + 1`` is "in the goal". ``"object_mask"`` (N,) int8 marks
the real objects: an environment pads ``N`` to the largest problem it may draw; the slots beyond
the task's objects are all zero. Arities without predicates get no key (visitall has no
``"arity0"``).

`NLMEncoder.encode_batch` encodes many states of one task at once (leading batch axis, no padding
unless ``n_objects`` was given), which is what the training code uses; it pads per batch itself.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from gymnasium import spaces
from numba import njit

from pddlgym_sl.envs.encoders.schema import Schema, batch_bits
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.successors import holds
from pddlgym_sl.task import CompiledTask, State

__all__ = ["NLMEncoder", "encode_batch", "nlm_space", "schema_channels"]


def schema_channels(schema: Schema) -> dict[int, int]:
    """Arity -> channels of that arity's tensor: per predicate, true in the state and in the goal."""
    return {k: 2 * len(preds) for k, preds in schema.by_arity.items()}


def nlm_space(schema: Schema, n_objects: int) -> spaces.Dict:
    """The observation space of ``nlm`` with `n_objects` object slots."""
    out: dict[str, spaces.Space] = {}
    for k, c in schema_channels(schema).items():
        out[f"arity{k}"] = spaces.Box(0, 1, shape=(n_objects,) * k + (c,), dtype=np.int8)
    out["object_mask"] = spaces.Box(0, 1, shape=(n_objects,), dtype=np.int8)
    return spaces.Dict(out)


class NLMEncoder:
    """Encodes states of one task as per-arity predicate tensors (see the module docstring).

    Args:
        schema: the domain's vocabulary.
        task: the compiled problem.
        n_objects: object slots ``N``; default the task's object count (no padding). Must be at
            least ``len(task.objects)``.

    Attributes:
        space: the `spaces.Dict` of the tensors.
        keys: the ``"arity{k}"`` keys, ascending.
    """

    graph: ClassVar[bool] = False
    width: ClassVar[str] = "objects"
    """One slot per object: problems with up to ``n_objects`` objects share one space (an environment
    counts the objects of its problem files, without compiling them)."""
    size_options: ClassVar[tuple[str, ...]] = ("n_objects",)

    def __init__(self, schema: Schema, task: CompiledTask, n_objects: int | None = None) -> None:
        n_real = len(task.objects)
        n = n_real if n_objects is None else int(n_objects)
        if n < n_real:
            from pddlgym_sl.errors import ConfigError

            raise ConfigError(f"n_objects={n} is smaller than the {n_real} objects of task {task.name!r}")
        self.schema, self.task, self.n_objects = schema, task, n
        self.n_facts = task.n_facts
        self.space = nlm_space(schema, n)
        self.keys = tuple(f"arity{k}" for k in schema.by_arity)
        self._shapes = {f"arity{k}": (n,) * k + (c,) for k, c in schema_channels(schema).items()}
        self._mask = np.zeros(n, dtype=np.int8)
        self._mask[:n_real] = 1

        table = schema.atom_table(task)
        arity = np.asarray(schema.arities, dtype=np.int64)
        pos = schema.position_in_arity
        per_arity = np.array([len(schema.by_arity.get(k, ())) for k in range(schema.max_arity + 1)])

        def flat_index(pred: np.ndarray, args: np.ndarray) -> np.ndarray:
            """Offset of the state channel of each atom inside its arity's flattened tensor."""
            cell = np.zeros(len(pred), dtype=np.int64)
            for j in range(args.shape[1]):
                use = arity[pred] > j
                cell = np.where(use, cell * n + args[:, j], cell)
            return cell * (2 * per_arity[arity[pred]]) + 2 * pos[pred]

        s_flat = flat_index(table.static_pred, table.static_args)
        f_flat = flat_index(table.fact_pred, table.fact_args)
        s_arity = arity[table.static_pred]
        f_arity = arity[table.fact_pred]
        goal = np.zeros(self.n_facts, dtype=bool)
        goal[task.goal] = True

        # Per arity: the constant part (static atoms' state channel, goal channel) and, per fact of
        # that arity, its fact index and state-channel offset.
        self._base: dict[str, np.ndarray] = {}
        self._facts: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for k in schema.by_arity:
            key = f"arity{k}"
            base = np.zeros(int(np.prod(self._shapes[key])), dtype=np.int8)
            base[s_flat[s_arity == k]] = 1
            base[f_flat[(f_arity == k) & goal] + 1] = 1
            self._base[key] = base
            ids = np.flatnonzero(f_arity == k)
            self._facts[key] = (ids, f_flat[ids])

    @classmethod
    def padding(cls, schema: Schema, task: CompiledTask) -> dict[str, int]:
        """The smallest ``n_objects`` that fits `task`."""
        return {"n_objects": len(task.objects)}

    def encode(self, state: State | np.ndarray) -> dict[str, np.ndarray]:
        """The tensors of one state (a `State` or its uint64 words)."""
        words = state.words if isinstance(state, State) else state
        out: dict[str, np.ndarray] = {}
        for key in self.keys:
            ids, flat = self._facts[key]
            out[key] = _encode(words, self._base[key], ids, flat).reshape(self._shapes[key])
        out["object_mask"] = self._mask.copy()
        return out

    def encode_batch(self, states: np.ndarray) -> dict[str, np.ndarray]:
        """Tensors of a (B, n_words) uint64 batch of this task's states, each with a leading B axis."""
        bits = batch_bits(states, self.n_facts).view(bool)
        b = bits.shape[0]
        out: dict[str, np.ndarray] = {}
        for key in self.keys:
            ids, flat = self._facts[key]
            t = np.repeat(self._base[key][None, :], b, axis=0)
            rows, cols = np.nonzero(bits[:, ids])
            t[rows, flat[cols]] = 1
            out[key] = t.reshape((b, *self._shapes[key]))
        out["object_mask"] = np.repeat(self._mask[None, :], b, axis=0)
        return out


@njit(cache=CACHE)
def _encode(words, base, ids, flat):
    out = base.copy()
    for i in range(ids.shape[0]):
        if holds(words, ids[i]):
            out[flat[i]] = 1
    return out


def encode_batch(schema: Schema, task: CompiledTask, states: np.ndarray) -> dict[str, np.ndarray]:
    """Unpadded tensors (N = the task's objects) of a batch of states of ONE task, for training."""
    return NLMEncoder(schema, task).encode_batch(states)
