"""Ground a validated domain and problem with Fast Downward's translator into a finite-domain task.

Why Fast Downward's translator (the PyPI package ``fast-downward.translate``, run in process)
rather than a grounder of our own: the finite-domain (FDR) task it builds is what Fast
Downward's search and heuristics see. Its mutex groups decide which negative conditions are
implied (``(not (at-ferry ?to))`` is implied by ``(at-ferry ?from)``) and its causal-graph
variable order decides how Fast Downward's heuristics and successor generator break ties, so
grounding through it is the only way to reproduce Fast Downward's hFF and LM-cut values and
its search, node for node. Its Datalog grounder is also 100-600x faster than pyperplan's, which
the core used before. We call its public steps (parse, normalise, ``pddl_to_sas``, variable
order) and read the resulting task; no translator code is copied.

The result is an `FDRTask`: variables whose values are ground atoms (``"(at c0 l1)"``) or
``None`` for "none of those" / "not the atom", the initial values, the goal, and the operators
as Fast Downward writes them to ``output.sas`` (same order, same fields). Like Fast Downward,
the translator drops what cannot matter: relaxed-unreachable atoms and actions, atoms that never
change (they become static), and variables that cannot influence the goal (their atoms are
listed in `FDRTask.irrelevant_atoms`).

An empty goal (``(:goal (and))``, ``(:goal ())``) is answered here, before the translator: its
parser simplifies the empty conjunction to "true", and its normaliser then makes the goal a
derived atom with an axiom (``new-axiom@0``), which we do not compile (a search would never reach
it). The task is solved by the empty plan, so it is the translator's own answer to a goal that is
empty after grounding ("Empty goal"): a solvable task without variables, operators or goal.
"""

from __future__ import annotations

import contextlib
import gc
import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pddlgym_sl.errors import GroundingError, InputLimitError, PDDLError, UnsupportedRequirementError
from pddlgym_sl.ground_size import MAX_GROUND_BYTES_VAR, check_ground_size, max_ground_bytes
from pddlgym_sl.limits import format_bytes
from pddlgym_sl.memory import address_space_cap
from pddlgym_sl.pddl.schema import Domain, Problem
from pddlgym_sl.translator_patches import linear_steps

__all__ = ["FDRTask", "Operator", "translate"]

_ATOM = re.compile(r"Atom ([^(]+)\((.*)\)$")


@dataclass(frozen=True)
class Operator:
    """One finite-domain operator, as Fast Downward reads it.

    Attributes:
        name: the ground action, e.g. ``"(board c0 l1)"``.
        prevail: (variable, value) conditions on variables the operator does not change.
        pre_post: (variable, pre, post) effects; ``pre`` is the required old value or -1.
        guards: per effect, the value its own variable must have for it to fire, or -1. The
            translator guards an effect only when an action deletes an atom it does not require
            (``v := none`` fires if ``v`` held that atom); other effect conditions (conditional
            effects) are rejected.
        cost: the action cost.
    """

    name: str
    prevail: tuple[tuple[int, int], ...]
    pre_post: tuple[tuple[int, int, int], ...]
    guards: tuple[int, ...]
    cost: int

    @property
    def preconditions(self) -> tuple[tuple[int, int], ...]:
        """The precondition in Fast Downward's order: prevail conditions, then effect pre-values."""
        return self.prevail + tuple((v, pre) for v, pre, _ in self.pre_post if pre != -1)


@dataclass(frozen=True)
class FDRTask:
    """A finite-domain planning task (see the module docstring).

    Attributes:
        values: per variable, its values: an atom name, or None for "none of those atoms".
        init: the initial value of each variable.
        goal: (variable, value) pairs.
        operators: in Fast Downward's operator order.
        irrelevant_atoms: atoms of the variables dropped because they cannot influence the goal.
        solvable: False when the translator proved the task unsolvable (then there are no
            variables, operators or goal); a task with an empty goal (as written, or once the
            translator has simplified it) is solvable and trivial: no variables, operators or goal.
    """

    values: tuple[tuple[str | None, ...], ...]
    init: tuple[int, ...]
    goal: tuple[tuple[int, int], ...]
    operators: tuple[Operator, ...]
    irrelevant_atoms: frozenset[str]
    solvable: bool = True


def _fd():
    """Import the translator modules, with its global options set to the defaults except that
    variable reordering and filtering are left to `translate` (which needs to see what the
    filter removes). Imported lazily: the translator is only needed to compile tasks."""
    from fast_downward.translate import options

    if options.options is None:
        options.set_options(
            ["domain.pddl", "problem.pddl", "--skip-variable-reordering", "--keep-unimportant-variables"]
        )
    from fast_downward.translate import main, normalize, variable_order
    from fast_downward.translate.pddl_parser import parsing_functions

    return parsing_functions, normalize, main, variable_order


def _atom_of(value_name: str) -> str | None:
    """``"Atom at(c0, l1)"`` -> ``"(at c0 l1)"``; negated atoms and "<none of those>" -> None."""
    match = _ATOM.match(value_name)
    if match is None:
        return None
    args = [a.strip() for a in match.group(2).split(",") if a.strip()]
    return "(" + " ".join([match.group(1), *args]) + ")"


def _either_predicate(types: Sequence[str]) -> str:
    return "either@" + "@".join(types)


def _trees_for_translator(domain: Domain, problem: Problem) -> tuple[list, list]:
    """The canonical trees, with ``(either ...)`` action parameters (which the translator's parser
    rejects) replaced by ``object`` parameters restricted by a static predicate listing the
    objects of those types."""
    either_sets: dict[str, tuple[str, ...]] = {}
    dom_tree: list = []
    for section in domain.tree:
        if isinstance(section, list) and section and section[0] == ":action":
            params = list(section[3])
            extra: list = []
            i = 0
            while i < len(params):
                if params[i] == "-" and isinstance(params[i + 1], list):
                    types = tuple(sorted(set(params[i + 1][1:])))
                    pred = _either_predicate(types)
                    either_sets[pred] = types
                    j = i - 1
                    while j >= 0 and params[j] != "-" and not isinstance(params[j], list):
                        extra.append([pred, params[j]])
                        j -= 1
                    params[i + 1] = "object"
                i += 1
            if extra:
                section = [*section[:3], params, section[4], [*section[5], *extra], *section[6:]]
        dom_tree.append(section)
    if not either_sets:
        return domain.tree, problem.tree
    for k, section in enumerate(dom_tree):
        if isinstance(section, list) and section and section[0] == ":predicates":
            dom_tree[k] = [*section, *([pred, "?x"] for pred in either_sets)]
    atoms = [
        [pred, obj]
        for pred, types in either_sets.items()
        for obj, t in problem.objects.items()
        if any(domain.is_subtype(t, u) for u in types)
    ]
    prob_tree = [
        [*section, *atoms] if isinstance(section, list) and section and section[0] == ":init" else section
        for section in problem.tree
    ]
    return dom_tree, prob_tree


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while the translator runs.

    The translator builds millions of small objects that stay alive until it returns; each full
    collection walks all of them, so with the collector on, the collections alone grew faster
    than the task (ferry with 20,000 / 40,000 cars: 7 / 23 s of 16 / 49 s). Reference counting
    still frees what the translator drops; cycles wait until the collector is back on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _empty_goal(problem: Problem) -> bool:
    """Whether the canonical goal ``(:goal (and ...))`` has no literal."""
    for section in problem.tree:
        if isinstance(section, list) and section and section[0] == ":goal":
            return section[1] == ["and"]
    return False


def translate(domain: Domain, problem: Problem) -> FDRTask:
    """Ground `problem` of `domain` into an `FDRTask` with Fast Downward's translator.

    Raises:
        UnsupportedRequirementError: a negative goal on an atom of a multi-valued variable (the
            translator supports negative goals only on atoms that form a variable of their own).
        GroundingError: the translator failed for another reason (a bug on our side: validation
            should have caught the input).
        InputLimitError: grounding the task may take more memory than
            `pddlgym_sl.ground_size.max_ground_bytes` allows (estimated before grounding), or the
            translator ran out of the memory it was given (`pddlgym_sl.memory_limit`: the smaller
            of that limit and the memory available when it started).
    """
    if _empty_goal(problem):
        return FDRTask((), (), (), (), frozenset())  # see the module docstring
    estimated = check_ground_size(domain, problem)  # before the translator can take unbounded memory
    parsing_functions, normalize, main, variable_order = _fd()
    source = problem.source
    dom_tree, prob_tree = _trees_for_translator(domain, problem)
    log = io.StringIO()
    granted: int | None = None
    try:
        with (
            contextlib.redirect_stdout(log),
            linear_steps(),
            _gc_paused(),
            address_space_cap(max_ground_bytes()) as granted,
        ):
            task = parsing_functions.parse_task(dom_tree, prob_tree)
            normalize.normalize(task)
            sas = main.pddl_to_sas(task)
            if sas.axioms:  # only a goal that simplifies to "true" makes one; caught above
                raise GroundingError(
                    f"the translator made {len(sas.axioms)} axiom(s) (derived atoms), which are not compiled",
                    file=source,
                )
            trivial = (
                "Generating solvable task" in log.getvalue() or "Generating unsolvable task" in log.getvalue()
            )
            irrelevant: set[str] = set()
            if not trivial:
                necessary = variable_order.CausalGraph(sas).calculate_important_vars(sas.goal)
                for var, names in enumerate(sas.variables.value_names):
                    if not necessary[var]:
                        irrelevant.update(a for a in map(_atom_of, names) if a is not None)
                variable_order.find_and_apply_variable_order(sas, True, True)
    except PDDLError:
        raise
    except MemoryError:
        given = "" if granted is None else f" (it was given {format_bytes(granted)}: "
        given += "" if granted is None else f"${MAX_GROUND_BYTES_VAR} or the memory available, the smaller)"
        raise InputLimitError(
            f"Fast Downward's translator ran out of memory while grounding{given}; the task was "
            f"estimated at {format_bytes(estimated.total_bytes)} (largest action schemas: "
            f"{', '.join(estimated.largest())})",
            file=source,
        ) from None
    except AssertionError as exc:
        if "Negative goal" in str(exc):
            raise UnsupportedRequirementError(
                "a negative goal is supported only on an atom that no other atom excludes "
                "(Fast Downward's translator turns other negative goals into disjunctions)",
                file=source,
            ) from None
        raise GroundingError(
            f"Fast Downward's translator failed ({type(exc).__name__}: {exc})", file=source
        ) from None
    except Exception as exc:
        raise GroundingError(
            f"Fast Downward's translator failed ({type(exc).__name__}: {exc})", file=source
        ) from None

    if trivial:
        if "Generating unsolvable task" in log.getvalue():
            return FDRTask((), (), (), (), frozenset(), solvable=False)
        return FDRTask((), (), (), (), frozenset())
    values = tuple(tuple(_atom_of(n) for n in names) for names in sas.variables.value_names)
    operators = []
    for op in sas.operators:
        guards = []
        for var, _, _, cond in op.pre_post:
            if not cond:
                guards.append(-1)
            elif len(cond) == 1 and cond[0][0] == var:
                guards.append(int(cond[0][1]))
            else:
                raise UnsupportedRequirementError(
                    f"action {op.name} has a conditional effect after grounding", file=source
                )
        operators.append(
            Operator(
                name="(" + " ".join(op.name.strip("()").split()) + ")",
                prevail=tuple((int(v), int(x)) for v, x in op.prevail),
                pre_post=tuple((int(v), int(pre), int(post)) for v, pre, post, _ in op.pre_post),
                guards=tuple(guards),
                cost=int(op.cost),
            )
        )
    return FDRTask(
        values=values,
        init=tuple(int(v) for v in sas.init.values),
        goal=tuple((int(v), int(x)) for v, x in sas.goal.pairs),
        operators=tuple(operators),
        irrelevant_atoms=frozenset(irrelevant),
    )
