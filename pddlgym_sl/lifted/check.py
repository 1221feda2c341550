"""Lifted successor generation checked against the grounded task, state by state.

Fast Downward's translator simplifies what it grounds: atoms that never change are static atoms
rather than facts, relaxed-unreachable actions and atoms are gone, an action whose negative
condition the mutexes do not imply becomes several variants of one name. So the two are compared
on what both must agree on: the *names* of the applicable ground actions, and each successor's
atoms restricted to the grounded task's facts; an action only the lifted side has must leave the
grounded facts as they are (a no-op such as floortile's ``change_color r c c``, or an action on
atoms the translator dropped as irrelevant, such as satellite's images nobody asks for). A grounded
state becomes a lifted one by its true
facts plus the fluent atoms the translator made static.

`reached_states` collects the states a grounded GBFS evaluates (the states the comparison runs
on: `tests/test_lifted.py` on a sample, `benchmarks/lifted_successors.py` on every easy task).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.lifted.expand import Expander
from pddlgym_sl.lifted.task import LiftedTask
from pddlgym_sl.search import gbfs
from pddlgym_sl.task import CompiledTask

__all__ = ["Mismatch", "StateMapper", "compare_state", "reached_states"]


@dataclass(frozen=True)
class Mismatch:
    """What differs in one state: action names only one side finds applicable (the lifted side's
    restricted to those that change a grounded fact: the translator drops the others), and
    actions whose successors differ (restricted to the grounded facts)."""

    state: tuple[str, ...]
    only_lifted: tuple[str, ...]
    only_grounded: tuple[str, ...]
    successors_differ: tuple[str, ...]


class StateMapper:
    """Grounded states of a `CompiledTask` as lifted states of the same task's `LiftedTask`, and
    lifted states restricted to the grounded facts."""

    def __init__(self, grounded: CompiledTask, lifted: LiftedTask) -> None:
        self.grounded, self.lifted = grounded, lifted
        self._fact_to_lifted = np.array([lifted.fact_index(f) for f in grounded.facts], dtype=np.int64)
        fluent = set(lifted.facts)
        self._always = np.array(
            sorted(lifted.fact_index(a) for a in grounded.static_atoms if a in fluent), dtype=np.int64
        )
        self._lifted_to_fact = np.full(lifted.n_facts, -1, dtype=np.int64)
        self._lifted_to_fact[self._fact_to_lifted] = np.arange(grounded.n_facts)

    def to_lifted(self, words: np.ndarray) -> np.ndarray:
        """The lifted state of a grounded state's packed words."""
        facts = self.grounded.state_from_words(words).fact_indices()
        ids = np.concatenate([self._fact_to_lifted[facts], self._always])
        return np.unique(ids).astype(np.uint32)

    def restricted(self, state: np.ndarray) -> frozenset[str]:
        """The grounded facts (names) true in a lifted state."""
        mapped = self._lifted_to_fact[state.astype(np.int64)]
        return frozenset(self.grounded.facts[f] for f in mapped[mapped >= 0])


def reached_states(task: CompiledTask, evaluations: int = 1000, heuristic: str = "hff") -> np.ndarray:
    """The packed states (n, n_words) a grounded GBFS with `heuristic` evaluates within `evaluations`
    (the initial state first, in the order evaluated)."""
    h = make_heuristic(heuristic, task)
    seen: list[np.ndarray] = []

    def record(states: np.ndarray) -> np.ndarray:
        seen.append(np.array(states, copy=True))
        return h.batch(states)

    gbfs(task, record, max_evaluations=evaluations)
    return np.concatenate(seen) if seen else np.zeros((0, task.n_words), dtype=np.uint64)


def compare_state(mapper: StateMapper, expander: Expander, words: np.ndarray) -> Mismatch | None:
    """Compare one grounded state's applicable actions and successors with the lifted ones; None
    when they agree."""
    g, lifted = mapper.grounded, mapper.to_lifted(words)
    state = g.state_from_words(words)
    grounded: dict[str, set[frozenset[str]]] = {}
    for a, succ in g.successors(state):
        grounded.setdefault(g.actions[a], set()).add(frozenset(g.true_facts(succ)))
    rows = expander.actions(lifted)
    names = [mapper.lifted.action_name(row) for row in rows]
    here = mapper.restricted(lifted)
    # an action the translator dropped must change no grounded fact (a no-op, or effects on atoms
    # it found irrelevant or unreachable)
    only_lifted = sorted(
        {
            n
            for n, row in zip(names, rows, strict=True)
            if n not in grounded and mapper.restricted(expander.apply(lifted, row)) != here
        }
    )
    only_grounded = sorted(set(grounded) - set(names))
    differ = [
        name
        for name, row in zip(names, rows, strict=True)
        if name in grounded and mapper.restricted(expander.apply(lifted, row)) not in grounded[name]
    ]
    if only_lifted or only_grounded or differ:
        return Mismatch(
            tuple(g.true_facts(state)), tuple(only_lifted), tuple(only_grounded), tuple(sorted(differ))
        )
    return None
