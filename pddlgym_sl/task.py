"""`CompiledTask`: a grounded task as numpy index arrays, and `State`, a packed fact set.

The task is validated by `pddlgym_sl.pddl` and grounded by Fast Downward's translator
(`pddlgym_sl.translate`). The result is a finite-domain task; a `CompiledTask` keeps two views
of it:

- the *atom* view that environments, encoders, labels and search use: the facts are ground atoms
  (``"(at c0 l1)"``), a state is the set of true facts, and each action has positive and
  negative preconditions and add and delete lists (CSR arrays that the compiled kernels in
  `pddlgym_sl.successors` work on directly);
- the *finite-domain* view (`FDRLayout`) that the heuristics use to reproduce Fast Downward:
  variables whose values are facts or "none of those", operators with Fast Downward's
  precondition and effect order, and the order in which its successor generator lists
  applicable operators.

Facts are numbered by name and actions in Fast Downward's operator order (sorted by name); both
are deterministic and independent of Python's hash seed. Statics are compiled away: a ground
action whose static precondition is false does not exist, and atoms true in every reachable
state are `static_atoms`, not facts.

A `State` is an immutable, hashable ``bytes`` object holding the bit set of true facts as
little-endian ``uint64`` words; a batch of states is a 2-D ``uint64`` array, one row per state.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import numpy as np

from pddlgym_sl import successors as _k
from pddlgym_sl.errors import PDDLError, PlanError
from pddlgym_sl.pddl import Domain, Problem, parse_domain, parse_problem
from pddlgym_sl.translate import FDRTask, translate

_WORD = np.dtype("<u8")

CORE_VERSION = 2
"""Version of the grounding and of the heuristic values. Labels, datasets and manifests record
it; bumped whenever the facts, the actions, their numbering or a heuristic value of a task can
change (1: pyperplan's grounder; 2: Fast Downward's translator, Fast Downward's values)."""


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


class FDRLayout(NamedTuple):
    """The finite-domain view of a `CompiledTask` (arrays for the heuristic kernels).

    Propositions are Fast Downward's: ``var_prop[v] + value`` for each value of variable ``v``
    (its facts in order, and a "none of those" value where the translator made one).

    Attributes:
        var_facts_ptr, var_facts_idx: int32 CSR: the facts of variable ``v`` in value order.
        var_prop: int32 (n_vars + 1): the propositions of variable ``v``, likewise.
        var_none: int32 (n_vars): the proposition of ``v``'s "none of those" value, or -1.
        fact_prop: int32 (n_facts): the proposition of each fact.
        prop_fact: int32 (n_props): the fact of each proposition, or -1 for "none of those".
        goal: int32: the goal propositions in Fast Downward's goal order.
        pre_ptr, pre_idx: int32 CSR: each operator's precondition propositions in Fast Downward's
            order (prevail conditions, then the pre-values of its effects).
        eff_ptr, eff_idx: int32 CSR: each operator's effect propositions in its effect order.
        guard_idx: int32 (len(eff_idx)): the proposition guarding each effect, or -1.
        cost: int64 (n_actions): operator costs.
        succ_order: int32 (n_actions): the operators in the order Fast Downward's successor
            generator lists the applicable ones (by sorted precondition, then operator id).
        var_table, fact_table: the first three fields again, fused for the per-state conversion
            to propositions (`state_tables`).
    """

    var_facts_ptr: np.ndarray
    var_facts_idx: np.ndarray
    var_prop: np.ndarray
    var_none: np.ndarray
    fact_prop: np.ndarray
    prop_fact: np.ndarray
    goal: np.ndarray
    pre_ptr: np.ndarray
    pre_idx: np.ndarray
    eff_ptr: np.ndarray
    eff_idx: np.ndarray
    guard_idx: np.ndarray
    cost: np.ndarray
    succ_order: np.ndarray
    var_table: np.ndarray
    fact_table: np.ndarray

    @property
    def n_vars(self) -> int:
        return len(self.var_none)

    def facts_of_var(self, v: int) -> np.ndarray:
        """The facts of variable `v`, in value order."""
        return self.var_facts_idx[self.var_facts_ptr[v] : self.var_facts_ptr[v + 1]]

    @property
    def n_props(self) -> int:
        return int(self.var_prop[-1])


def parse_atom(name: str) -> tuple[str, tuple[str, ...]]:
    """Split a ground atom or action name ``"(at c0 l1)"`` into ``("at", ("c0", "l1"))``."""
    parts = name.strip("()").split()
    return parts[0], tuple(parts[1:])


@dataclass(frozen=True, eq=False)
class CompiledTask:
    """A grounded unit-cost task in array form (see the module docstring for the two views).

    Attributes:
        name: problem name. domain_name: domain name.
        facts: ground atom of each fact index, e.g. ``"(at c0 l1)"`` (sorted by name).
        actions: ground action of each action index, e.g. ``"(board c0 l1)"`` (sorted by name;
            when the translator splits an action whose negative condition the mutexes do not
            imply into variants, each variant is an action of the same name).
        pre_ptr, pre_idx: CSR facts that must hold for each action (int32).
        neg_ptr, neg_idx: CSR facts that must not hold (negative conditions; empty for STRIPS).
        add_ptr, add_idx / del_ptr, del_idx: CSR facts each action makes true / false.
        n_del: int32 per action: the atoms the action deletes in the PDDL sense (its
            changes away from a fact); the linear model's "ignored deletes" features count these.
        goal: sorted int32 facts that must hold in a goal state; goal_neg: facts that must not.
        init: initial `State`.
        static_atoms: atoms true in every reachable state that are not facts (``connected``,
            constant fluents, ...; type atoms are not listed). Observations need them.
        objects: object names (sorted); object_types: object -> type name.
        predicates: predicate name -> arity, in the domain's declaration order.
        fdr: the finite-domain view (`FDRLayout`) for the heuristics.
        solvable: False when the translator proved the task unsolvable (no facts, no actions,
            and no state is a goal state).
        domain_file, problem_file: source files when loaded from disk.
    """

    name: str
    domain_name: str
    facts: tuple[str, ...]
    actions: tuple[str, ...]
    pre_ptr: np.ndarray
    pre_idx: np.ndarray
    neg_ptr: np.ndarray
    neg_idx: np.ndarray
    add_ptr: np.ndarray
    add_idx: np.ndarray
    del_ptr: np.ndarray
    del_idx: np.ndarray
    n_del: np.ndarray
    goal: np.ndarray
    goal_neg: np.ndarray
    init: State
    static_atoms: tuple[str, ...]
    objects: tuple[str, ...]
    object_types: dict[str, str]
    predicates: dict[str, int]
    fdr: FDRLayout = field(repr=False)
    solvable: bool = True
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
        """Index of a ground action given as ``"(board c0 l1)"`` or ``"board c0 l1"`` (the first
        of several variants of the same name)."""
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
        return self.solvable and bool(_k.satisfies(state.words, self.goal, self.goal_neg))

    # ----------------------------------------------------------------- transitions
    @property
    def _pre(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.pre_ptr, self.pre_idx, self.neg_ptr, self.neg_idx

    def applicable(self, state: State) -> np.ndarray:
        """Ascending int32 indices of the actions applicable in `state`."""
        return _k.applicable_actions(state.words, *self._pre)

    def action_mask(self, state: State) -> np.ndarray:
        """int8 vector over all actions, 1 where applicable."""
        return _k.action_mask(state.words, *self._pre)

    def is_applicable(self, state: State, action: int) -> bool:
        return bool(_k.is_applicable(state.words, int(action), *self._pre))

    def action_in(self, state: State, action: int | str) -> int:
        """The index of `action`: an index as it is, a name the variant of that name applicable
        in `state` (the first variant if none is)."""
        if isinstance(action, (int, np.integer)):
            return int(action)
        a = self.action_index(action)
        return next((b for b in self._variants(a) if self.is_applicable(state, b)), a)

    def successor(self, state: State, action: int | str) -> State:
        """Result of applying `action` in `state`; `PlanError` if it is not applicable. An action
        given by name is the applicable variant of that name, if any."""
        a = self.action_in(state, action)
        if not 0 <= a < self.n_actions:
            raise PlanError(f"action index {a} out of range 0..{self.n_actions - 1}")
        if not self.is_applicable(state, a):
            raise PlanError(f"action {self.actions[a]} is not applicable")
        return State(
            _k.apply_action(state.words, a, self.add_ptr, self.add_idx, self.del_ptr, self.del_idx).tobytes()
        )

    def _variants(self, a: int) -> range:
        """Indices of the actions named like action `a` (consecutive: actions are sorted by name)."""
        end = a + 1
        while end < self.n_actions and self.actions[end] == self.actions[a]:
            end += 1
        return range(a, end)

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
            self.neg_ptr,
            self.neg_idx,
            self.add_ptr,
            self.add_idx,
            self.del_ptr,
            self.del_idx,
            self.goal,
            self.goal_neg,
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
            missing += [f"(not {self.facts[g]})" for g in self.goal_neg if int(g) in state]
            raise PlanError(
                f"plan of {len(plan)} steps ends in a non-goal state (unsatisfied: {', '.join(missing[:5])})",
                file=self.problem_file,
            )
        return states

    # ----------------------------------------------------------------- derived arrays
    @cached_property
    def action_costs(self) -> np.ndarray:
        """Action costs (float64): all 1 (action costs are not supported)."""
        return self.fdr.cost.astype(np.float64)

    @cached_property
    def fact_atoms(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each fact as (predicate, arguments)."""
        return tuple(parse_atom(f) for f in self.facts)

    def __repr__(self) -> str:
        return (
            f"CompiledTask({self.domain_name}/{self.name}: {self.n_facts} facts, {self.n_actions} actions, "
            f"{len(self.goal) + len(self.goal_neg)} goals)"
        )


def _normalise(name: str) -> str:
    name = " ".join(name.strip().lower().split())
    if not name.startswith("("):
        name = f"({name})"
    return name.replace("( ", "(").replace(" )", ")")


def compile_task(
    domain: Domain,
    problem: Problem,
    domain_file: str | Path | None = None,
    problem_file: str | Path | None = None,
) -> CompiledTask:
    """Ground `problem` with Fast Downward's translator and compile it into a `CompiledTask`."""
    fdr = translate(domain, problem)
    facts, fact_ids, layout, actions, strips = _compile_fdr(fdr)
    values = [(v, int(layout.prop_fact[layout.var_prop[v] + x])) for v, x in enumerate(fdr.init)]
    init_idx = [f for _, f in values if f >= 0]
    goal_values = [(v, int(layout.prop_fact[layout.var_prop[v] + x])) for v, x in fdr.goal]
    goal = sorted(f for _, f in goal_values if f >= 0)
    goal_neg = sorted(f for v, g in goal_values if g < 0 for f in layout.facts_of_var(v))
    static = set(problem.init) - set(facts) - fdr.irrelevant_atoms
    task = CompiledTask(
        name=problem.name,
        domain_name=domain.name,
        facts=facts,
        actions=actions,
        **strips,
        goal=np.array(goal, dtype=np.int32),
        goal_neg=np.array(goal_neg, dtype=np.int32),
        init=State(b""),
        static_atoms=tuple(sorted(static)),
        objects=tuple(sorted(problem.objects)),
        object_types=dict(sorted(problem.objects.items())),
        predicates={name: len(args) for name, args in domain.predicates.items()},
        fdr=layout,
        solvable=fdr.solvable,
        domain_file=str(domain_file) if domain_file is not None else None,
        problem_file=str(problem_file) if problem_file is not None else problem.source,
        _fact_ids=fact_ids,
        _action_ids={a: i for i, a in reversed(list(enumerate(actions)))},
    )
    object.__setattr__(task, "init", task.state_from_indices(np.array(init_idx, dtype=np.int64)))
    return task


NO_PROP = 0xFFFFFFFF
"""`FDRLayout.var_table`'s mark for a variable without a "none of those" value."""


def state_tables(
    var_facts_ptr: np.ndarray, var_facts_idx: np.ndarray, var_none: np.ndarray, fact_prop: np.ndarray
) -> dict[str, np.ndarray]:
    """`FDRLayout.var_table` (uint32 (n_vars, 3): first and end row of the variable's facts in
    `fact_table`, and its "none of those" proposition or `NO_PROP`) and `fact_table` (uint32
    (n, 2): each variable's facts in value order with their propositions).

    The heuristics convert every evaluated state into propositions; one unsigned table per loop
    level halves the time that took with the separate signed arrays."""
    var_table = np.empty((len(var_none), 3), dtype=np.uint32)
    var_table[:, 0] = var_facts_ptr[:-1]
    var_table[:, 1] = var_facts_ptr[1:]
    # int64 first: NumPy 2.5 refuses to mix an int32 array with NO_PROP (out of int32 range)
    var_table[:, 2] = np.where(var_none >= 0, var_none.astype(np.int64), NO_PROP)
    fact_table = np.empty((len(var_facts_idx), 2), dtype=np.uint32)
    fact_table[:, 0] = var_facts_idx
    fact_table[:, 1] = fact_prop[var_facts_idx]
    return {"var_table": var_table, "fact_table": fact_table}


def _compile_fdr(fdr: FDRTask) -> tuple:
    """Number the facts and build both views' operator arrays (see `CompiledTask`)."""
    facts = tuple(sorted(a for values in fdr.values for a in values if a is not None))
    fact_ids = {f: i for i, f in enumerate(facts)}
    var_facts: list[list[int]] = []
    var_prop = [0]
    var_none = []
    prop_fact = []
    for values in fdr.values:
        var_none.append(next((var_prop[-1] + k for k, a in enumerate(values) if a is None), -1))
        prop_fact.extend(-1 if a is None else fact_ids[a] for a in values)
        var_facts.append([fact_ids[a] for a in values if a is not None])
        var_prop.append(var_prop[-1] + len(values))
    fact_prop = np.empty(len(facts), dtype=np.int32)
    for prop, f in enumerate(prop_fact):
        if f >= 0:
            fact_prop[f] = prop
    var_facts_ptr, var_facts_idx = _csr(var_facts)
    layout_base = dict(
        var_facts_ptr=var_facts_ptr,
        var_facts_idx=var_facts_idx,
        var_prop=np.array(var_prop, dtype=np.int32),
        var_none=np.array(var_none, dtype=np.int32),
        fact_prop=fact_prop,
        prop_fact=np.array(prop_fact, dtype=np.int32),
    )
    layout_base |= state_tables(var_facts_ptr, var_facts_idx, layout_base["var_none"], fact_prop)

    def facts_of(var: int, value: int) -> list[int]:
        """The facts a (var, value) condition requires true ([] for "none of those")."""
        f = prop_fact[var_prop[var] + value]
        return [] if f < 0 else [f]

    def all_facts(var: int) -> list[int]:
        return var_facts[var]

    pre, neg, add, dele, n_del = [], [], [], [], []
    f_pre, f_eff, f_guard = [], [], []
    for op in fdr.operators:
        p, n = [], []
        for var, value in op.preconditions:
            fs = facts_of(var, value)
            p.extend(fs)
            if not fs:
                n.extend(all_facts(var))
        a, d, deletes = [], [], 0
        for (var, old, new), guard in zip(op.pre_post, op.guards, strict=True):
            new_facts = facts_of(var, new)
            a.extend(new_facts)
            if old >= 0 or guard >= 0:
                old_facts = facts_of(var, old if old >= 0 else guard)
                d.extend(old_facts)
                deletes += len(old_facts)
            else:  # the old value is unknown: every other fact of the variable becomes false
                d.extend(f for f in all_facts(var) if f not in new_facts)
                deletes += 0 if new_facts else 1
        pre.append(sorted(set(p)))
        neg.append(sorted(set(n)))
        add.append(sorted(set(a)))
        dele.append(sorted(set(d) - set(a)))
        n_del.append(deletes)
        f_pre.append([var_prop[v] + x for v, x in op.preconditions])
        f_eff.append([var_prop[v] + new for v, _, new in op.pre_post])
        f_guard.append(
            [-1 if g < 0 else var_prop[v] + g for (v, _, _), g in zip(op.pre_post, op.guards, strict=True)]
        )
    strips = {}
    for key, lists in (("pre", pre), ("neg", neg), ("add", add), ("del", dele)):
        strips[f"{key}_ptr"], strips[f"{key}_idx"] = _csr(lists)
    strips["n_del"] = np.array(n_del, dtype=np.int32)
    pre_ptr, pre_idx = _csr(f_pre)
    eff_ptr, eff_idx = _csr(f_eff)
    # Fast Downward's successor generator lists applicable operators in the order of their sorted
    # (variable, value) preconditions, ties by operator id (a stable sort).
    keys = [sorted((v, x) for v, x in op.preconditions) for op in fdr.operators]
    succ_order = sorted(range(len(keys)), key=keys.__getitem__)
    layout = FDRLayout(
        **layout_base,
        goal=np.array([var_prop[v] + x for v, x in fdr.goal], dtype=np.int32),
        pre_ptr=pre_ptr,
        pre_idx=pre_idx,
        eff_ptr=eff_ptr,
        eff_idx=eff_idx,
        guard_idx=np.array([g for gs in f_guard for g in gs], dtype=np.int32),
        cost=np.array([op.cost for op in fdr.operators], dtype=np.int64),
        succ_order=np.array(succ_order, dtype=np.int32),
    )
    actions = tuple(op.name for op in fdr.operators)
    return facts, fact_ids, layout, actions, strips


def load_task(domain_file: str | Path, problem_file: str | Path) -> CompiledTask:
    """Parse, validate, ground and compile a domain/problem file pair."""
    domain = parse_domain(domain_file)
    problem = parse_problem(problem_file, domain)
    return compile_task(domain, problem, domain_file=domain_file, problem_file=problem_file)
