"""`CompiledTask`: a grounded STRIPS task as numpy index arrays, and `State`, a packed fact set.

The task is parsed and grounded by pyperplan (statics are compiled away: a ground action whose
static precondition is false does not exist, and static atoms are not state facts), then
renumbered deterministically (facts and actions sorted by name, so indices never depend on
Python's hash seed) and stored as CSR arrays that the compiled kernels in
`pddlgym_sl.successors` and `pddlgym_sl.heuristics` work on directly.

A `State` is an immutable, hashable ``bytes`` object holding the bit set of true facts as
little-endian ``uint64`` words; a batch of states is a 2-D ``uint64`` array, one row per state.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
from pyperplan.grounding import ground
from pyperplan.pddl.pddl import Domain, Problem

from pddlgym_sl import successors as _k
from pddlgym_sl.errors import GroundingError, PDDLError, PlanError
from pddlgym_sl.pddl import parse_domain, parse_problem

_WORD = np.dtype("<u8")


class State(bytes):
    """The set of true facts of a task, packed as little-endian uint64 words (immutable, hashable).

    Build states with `CompiledTask.state`; read them with `CompiledTask.true_facts` or
    `State.fact_indices`. Two states of the same task are equal iff they hold the same facts.
    """

    __slots__ = ()

    @property
    def words(self) -> np.ndarray:
        """Read-only uint64 view of the bit set (what the compiled kernels take)."""
        return np.frombuffer(self, dtype=_WORD)

    def fact_indices(self) -> np.ndarray:
        """Sorted int32 indices of the true facts."""
        bits = np.unpackbits(np.frombuffer(self, dtype=np.uint8), bitorder="little")
        return np.flatnonzero(bits).astype(np.int32)

    def __contains__(self, fact: object) -> bool:  # type: ignore[override]
        if not isinstance(fact, (int, np.integer)):
            raise TypeError("State membership takes a fact index (int); use CompiledTask.fact_index(name)")
        f = int(fact)
        byte = f >> 3
        return 0 <= byte < len(self) and bool((self[byte] >> (f & 7)) & 1)

    def __repr__(self) -> str:
        return f"State({self.fact_indices().tolist()})"

    __str__ = __repr__


def _csr(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(lists) + 1, dtype=np.int32)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    idx = np.fromiter((f for x in lists for f in x), dtype=np.int32, count=int(ptr[-1]))
    return ptr, idx


def parse_atom(name: str) -> tuple[str, tuple[str, ...]]:
    """Split a ground atom or action name ``"(at c0 l1)"`` into ``("at", ("c0", "l1"))``."""
    parts = name.strip("()").split()
    return parts[0], tuple(parts[1:])


@dataclass(frozen=True, eq=False)
class CompiledTask:
    """A grounded unit-cost STRIPS task in array form.

    Attributes:
        name: problem name. domain_name: domain name.
        facts: ground atom of each fact index, e.g. ``"(at c0 l1)"`` (sorted).
        actions: ground action of each action index, e.g. ``"(board c0 l1)"`` (sorted).
        pre_ptr, pre_idx / add_ptr, add_idx / del_ptr, del_idx: CSR fact lists per action (int32).
        goal: sorted int32 fact indices of the goal.
        init: initial `State`.
        static_atoms: atoms true in every reachable state that are not facts (type predicates,
            ``connected``, ``not-eq``, ...). Observations need them; search does not.
        objects: object names (sorted); object_types: object -> type name.
        predicates: predicate name -> arity, in the domain's declaration order.
        domain_file, problem_file: source files when loaded from disk.
    """

    name: str
    domain_name: str
    facts: tuple[str, ...]
    actions: tuple[str, ...]
    pre_ptr: np.ndarray
    pre_idx: np.ndarray
    add_ptr: np.ndarray
    add_idx: np.ndarray
    del_ptr: np.ndarray
    del_idx: np.ndarray
    goal: np.ndarray
    init: State
    static_atoms: tuple[str, ...]
    objects: tuple[str, ...]
    object_types: dict[str, str]
    predicates: dict[str, int]
    domain_file: str | None = None
    problem_file: str | None = None
    _fact_ids: dict[str, int] = field(default_factory=dict, repr=False)
    _action_ids: dict[str, int] = field(default_factory=dict, repr=False)

    # ----------------------------------------------------------------- sizes
    @property
    def n_facts(self) -> int:
        return len(self.facts)

    @property
    def n_actions(self) -> int:
        return len(self.actions)

    @property
    def n_words(self) -> int:
        """uint64 words per packed state."""
        return max(1, (len(self.facts) + 63) // 64)

    # ----------------------------------------------------------------- names
    def fact_index(self, atom: str) -> int:
        """Index of a ground atom given as ``"(at c0 l1)"``; `PDDLError` if it is not a fact."""
        try:
            return self._fact_ids[_normalise(atom)]
        except KeyError:
            raise PDDLError(f"{atom!r} is not a fact of task {self.name!r}") from None

    def action_index(self, action: str) -> int:
        """Index of a ground action given as ``"(board c0 l1)"`` or ``"board c0 l1"``."""
        try:
            return self._action_ids[_normalise(action)]
        except KeyError:
            raise PDDLError(f"{action!r} is not a ground action of task {self.name!r}") from None

    # ----------------------------------------------------------------- states
    def state(self, facts: Iterable[str | int]) -> State:
        """The `State` in which exactly `facts` (atom names or indices) hold."""
        idx = [f if isinstance(f, (int, np.integer)) else self.fact_index(f) for f in facts]
        return self.state_from_indices(np.asarray(idx, dtype=np.int64))

    def state_from_indices(self, indices: np.ndarray) -> State:
        bits = np.zeros(self.n_words * 64, dtype=np.uint8)
        if len(indices):
            if indices.min() < 0 or indices.max() >= self.n_facts:
                raise PDDLError(f"fact index out of range 0..{self.n_facts - 1}")
            bits[indices] = 1
        return State(np.packbits(bits, bitorder="little").tobytes())

    def state_from_words(self, words: np.ndarray) -> State:
        return State(np.ascontiguousarray(words, dtype=_WORD).tobytes())

    def true_facts(self, state: State) -> list[str]:
        """Names of the facts that hold in `state`."""
        return [self.facts[i] for i in state.fact_indices()]

    def states_to_array(self, states: Sequence[State]) -> np.ndarray:
        """Stack states into a 2-D uint64 batch (one row per state)."""
        if not states:
            return np.zeros((0, self.n_words), dtype=_WORD)
        return np.frombuffer(b"".join(states), dtype=_WORD).reshape(len(states), self.n_words)

    def is_goal(self, state: State) -> bool:
        return bool(_k.satisfies(state.words, self.goal))

    # ----------------------------------------------------------------- transitions
    def applicable(self, state: State) -> np.ndarray:
        """Ascending int32 indices of the actions applicable in `state`."""
        return _k.applicable_actions(state.words, self.pre_ptr, self.pre_idx)

    def action_mask(self, state: State) -> np.ndarray:
        """int8 vector over all actions, 1 where applicable."""
        return _k.action_mask(state.words, self.pre_ptr, self.pre_idx)

    def is_applicable(self, state: State, action: int) -> bool:
        return bool(_k.is_applicable(state.words, int(action), self.pre_ptr, self.pre_idx))

    def successor(self, state: State, action: int | str) -> State:
        """Result of applying `action` in `state`; `PlanError` if it is not applicable."""
        a = action if isinstance(action, (int, np.integer)) else self.action_index(action)
        if not 0 <= a < self.n_actions:
            raise PlanError(f"action index {a} out of range 0..{self.n_actions - 1}")
        if not self.is_applicable(state, a):
            raise PlanError(f"action {self.actions[a]} is not applicable")
        return State(
            _k.apply_action(
                state.words, int(a), self.add_ptr, self.add_idx, self.del_ptr, self.del_idx
            ).tobytes()
        )

    def successors(self, state: State) -> list[tuple[int, State]]:
        """(action index, successor) for every applicable action, in action-index order."""
        acts, succ, _ = self.expand(state.words)
        raw = succ.tobytes()
        nb = self.n_words * 8
        return [(int(a), State(raw[i * nb : (i + 1) * nb])) for i, a in enumerate(acts)]

    def expand(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Hot-path expansion of packed `words`: (actions, successor words [k, n_words], is_goal)."""
        return _k.expand(
            words,
            self.pre_ptr,
            self.pre_idx,
            self.add_ptr,
            self.add_idx,
            self.del_ptr,
            self.del_idx,
            self.goal,
        )

    def validate_plan(self, plan: Sequence[int | str], start: State | None = None) -> list[State]:
        """Replay `plan` from `start` (default: init); return the visited states.

        Raises `PlanError` naming the step when an action is unknown or inapplicable, or when
        the final state does not satisfy the goal.
        """
        state = self.init if start is None else start
        states = [state]
        for step, action in enumerate(plan, start=1):
            try:
                state = self.successor(state, action)
            except PDDLError as exc:
                raise PlanError(f"plan step {step}: {exc.cause}", file=self.problem_file) from None
            states.append(state)
        if not self.is_goal(state):
            missing = [self.facts[g] for g in self.goal if int(g) not in state]
            raise PlanError(
                f"plan of {len(plan)} steps ends in a non-goal state (unsatisfied: {', '.join(missing[:5])})",
                file=self.problem_file,
            )
        return states

    # ----------------------------------------------------------------- derived arrays
    @cached_property
    def action_costs(self) -> np.ndarray:
        """Unit costs (float64), kept as an array so kernels can take general costs later."""
        return np.ones(self.n_actions, dtype=np.float64)

    @cached_property
    def fact_atoms(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each fact as (predicate, arguments)."""
        return tuple(parse_atom(f) for f in self.facts)

    def __repr__(self) -> str:
        return (
            f"CompiledTask({self.domain_name}/{self.name}: {self.n_facts} facts, {self.n_actions} actions, "
            f"{len(self.goal)} goals)"
        )


def _normalise(name: str) -> str:
    name = " ".join(name.strip().lower().split())
    if not name.startswith("("):
        name = f"({name})"
    return name.replace("( ", "(").replace(" )", ")")


def _atom_name(pred) -> str:
    args = [a for a, _ in pred.signature]
    return f"({pred.name}{' ' if args else ''}{' '.join(args)})"


def compile_task(
    domain: Domain,
    problem: Problem,
    domain_file: str | Path | None = None,
    problem_file: str | Path | None = None,
) -> CompiledTask:
    """Ground `problem` with pyperplan and compile it into a `CompiledTask`."""
    source = str(problem_file) if problem_file is not None else None
    full_init = {_atom_name(p) for p in problem.initial_state}
    try:
        # Keep every ground action (no relevance pruning): environments expose the whole
        # action set, and pruning irrelevant actions changes no heuristic value anyway.
        grounded = ground(problem, remove_statics_from_initial_state=True, remove_irrelevant_operators=False)
    except PDDLError:
        raise
    except Exception as exc:  # pyperplan raises bare exceptions on inputs it cannot ground
        raise GroundingError(f"cannot ground problem ({type(exc).__name__}: {exc})", file=source) from None

    facts = tuple(sorted(grounded.facts))
    fact_ids = {f: i for i, f in enumerate(facts)}
    ops = sorted(grounded.operators, key=lambda op: op.name)
    pre_ptr, pre_idx = _csr([sorted(fact_ids[f] for f in op.preconditions) for op in ops])
    add_ptr, add_idx = _csr([sorted(fact_ids[f] for f in op.add_effects) for op in ops])
    del_ptr, del_idx = _csr([sorted(fact_ids[f] for f in op.del_effects) for op in ops])
    goal = np.array(sorted(fact_ids[f] for f in grounded.goals), dtype=np.int32)
    actions = tuple(op.name for op in ops)

    objects = dict(problem.objects)
    objects.update(problem.domain.constants)
    object_types = {o: t.name for o, t in sorted(objects.items())}
    predicates = {name: len(p.signature) for name, p in problem.domain.predicates.items()}

    task = CompiledTask(
        name=problem.name,
        domain_name=problem.domain.name,
        facts=facts,
        actions=actions,
        pre_ptr=pre_ptr,
        pre_idx=pre_idx,
        add_ptr=add_ptr,
        add_idx=add_idx,
        del_ptr=del_ptr,
        del_idx=del_idx,
        goal=goal,
        init=State(b""),
        static_atoms=tuple(sorted(full_init - set(facts))),
        objects=tuple(object_types),
        object_types=object_types,
        predicates=predicates,
        domain_file=str(domain_file) if domain_file is not None else None,
        problem_file=source,
        _fact_ids=fact_ids,
        _action_ids={a: i for i, a in enumerate(actions)},
    )
    init_idx = np.array(sorted(fact_ids[f] for f in grounded.initial_state), dtype=np.int64)
    object.__setattr__(task, "init", task.state_from_indices(init_idx))
    return task


def load_task(domain_file: str | Path, problem_file: str | Path) -> CompiledTask:
    """Parse, ground and compile a domain/problem file pair."""
    domain = parse_domain(domain_file)
    problem = parse_problem(problem_file, domain)
    return compile_task(domain, problem, domain_file=domain_file, problem_file=problem_file)
