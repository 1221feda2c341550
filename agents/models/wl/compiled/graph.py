"""The ILG of one task as arrays: every node that any state's graph can have, built once per task.

What wlplan builds for a state (``graph_generators/ilg.cpp``: ``set_problem`` once per problem,
``to_graph`` per state), given the atoms `agents.models.wl.vocabulary` hands it (the state's true
facts plus the task's static atoms):

- one node per object (the domain's constants first, then the task's other objects), colour 0;
- one node per positive goal atom, linked to its arguments both ways (edge label: the argument's
  position), coloured "false positive goal", or "true positive goal" in a state that holds it;
- one node per negative goal atom, with *no* edges (wlplan links only positive goals), coloured
  "false" / "true negative goal" the same way;
- one node per other atom of the state (a true non-goal fact, or a static atom), coloured
  "non-goal", linked to its arguments both ways.

So here the nodes are numbered objects, static atoms, goal atoms (the *fixed* nodes, in every
state's graph), then one node per non-goal fact, present in a state's graph when the fact is
true; ``fact_node`` maps every fact to its node (a goal fact to its goal node, whose colour the
fact's truth sets). The graph is bipartite (atoms link to objects only), so an atom's neighbours
are its arguments (``args``, in label order) and an object's are the atoms it is an argument of,
listed apart for the static atoms (whose colours at iterations 0 and 1 never change, so the
kernels precompute their part of an object's neighbourhood) and the goal and fact atoms.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from agents.errors import AgentError
from agents.models.wl.compiled.table import FACT_DESCRIPTIONS
from agents.models.wl.vocabulary import wl_domain
from pddlgym_sl.task import CompiledTask

__all__ = ["TaskGraph", "task_graph"]

_T_POS, _F_POS, _T_NEG, _F_NEG, _NON_GOAL = range(FACT_DESCRIPTIONS)


class TaskGraph(NamedTuple):
    """The potential ILG of a task (see the module docstring).

    ``sizes``: int64 [n_nodes, n_objects, first goal node, n_fixed, max object degree]; objects
    are nodes ``0..n_objects-1``, static atoms up to the first goal node, goal atoms up to
    ``n_fixed``, non-goal facts after. ``initial[v]``: node v's initial colour when present
    (wlplan's, before the colour table); a goal node's is its "false" colour, and its "true"
    colour is one less. ``fact_node[f]``: the node of fact f; ``fact_goal[f]``: 1 when that is a
    goal node (always present), 0 when the node is present iff f is true. ``args[v, :arity[v]]``:
    the argument objects of atom node v (``arity`` 0 for objects and negative goals, which have no
    edges). Object o's static atoms: ``stat_atom[stat_ptr[o]:stat_ptr[o + 1]]`` with the edge
    labels ``stat_label``; its goal and fact atoms: ``dyn_atom`` / ``dyn_label`` by ``dyn_ptr``."""

    sizes: np.ndarray
    initial: np.ndarray
    fact_node: np.ndarray
    fact_goal: np.ndarray
    args: np.ndarray
    arity: np.ndarray
    stat_ptr: np.ndarray
    stat_atom: np.ndarray
    stat_label: np.ndarray
    dyn_ptr: np.ndarray
    dyn_atom: np.ndarray
    dyn_label: np.ndarray


def _incidence(atom_nodes: np.ndarray, args: np.ndarray, arity: np.ndarray, n_objects: int):
    """CSR (ptr, atom, label) over objects of the atoms `atom_nodes` whose arguments they are."""
    obj, atom, label = [], [], []
    for r in range(args.shape[1]):
        has = arity > r
        obj.append(args[has, r])
        atom.append(atom_nodes[has])
        label.append(np.full(int(has.sum()), r, dtype=np.int64))
    obj_a = np.concatenate(obj) if obj else np.zeros(0, dtype=np.int64)
    order = np.argsort(obj_a, kind="stable")
    ptr = np.concatenate([[0], np.cumsum(np.bincount(obj_a, minlength=n_objects))]).astype(np.int64)
    atom_a = np.concatenate(atom)[order] if atom else np.zeros(0, dtype=np.int64)
    label_a = np.concatenate(label)[order] if label else np.zeros(0, dtype=np.int64)
    return ptr, atom_a.astype(np.int64), label_a.astype(np.int64)


def task_graph(task: CompiledTask, predicates: list[str], domain_file: str | None = None) -> TaskGraph:
    """The potential ILG of `task` whose atoms' initial colours number predicates by their
    position in `predicates` (the colour table's order, `table.colour_table`)."""
    domain, schema = wl_domain(str(domain_file or task.domain_file))
    atoms = schema.atom_table(task)
    position = {name: i for i, name in enumerate(predicates)}
    missing = [p for p in schema.predicates if p not in position]
    if missing:
        raise AgentError(
            f"WL colour table: the domain of task {task.name!r} has predicates {missing} that the "
            "table does not know (a model of another domain?)"
        )
    pred_of = np.array([position[p] for p in schema.predicates], dtype=np.int64)
    pred_arity = np.asarray(schema.arities, dtype=np.int64)

    # objects: the domain's constants, then the task's objects that are not constants
    constants = list(domain.constant_objects)
    names = constants + [o for o in task.objects if o not in set(constants)]
    node_of_name = {o: i for i, o in enumerate(names)}
    object_node = np.array([node_of_name[o] for o in task.objects], dtype=np.int64)
    n_objects = len(names)

    static_names = set(atoms.static_names)
    clash = [f for f in task.facts if f in static_names]
    if clash:  # cannot happen for compiled tasks (statics are the init atoms that are not facts)
        raise AgentError(f"task {task.name!r}: atoms {clash[:3]} are both static atoms and facts")

    goal = [int(f) for f in task.goal]
    goal_neg = [int(f) for f in task.goal_neg if int(f) not in set(goal)]
    goal_set = set(goal) | set(goal_neg)
    others = [f for f in range(task.n_facts) if f not in goal_set]
    n_static = len(atoms.static_pred)
    first_goal = n_objects + n_static
    n_fixed = first_goal + len(goal) + len(goal_neg)
    n_nodes = n_fixed + len(others)
    width = atoms.fact_args.shape[1]

    initial = np.zeros(n_nodes, dtype=np.int64)
    args = np.full((n_nodes, width), -1, dtype=np.int64)
    arity = np.zeros(n_nodes, dtype=np.int64)
    fact_node = np.empty(task.n_facts, dtype=np.int64)
    fact_goal = np.zeros(task.n_facts, dtype=np.int8)

    def place(nodes, pred, pred_args, description, linked):
        initial[nodes] = 1 + FACT_DESCRIPTIONS * pred_of[pred] + description
        if linked:
            arity[nodes] = pred_arity[pred]
            args[nodes] = np.where(pred_args >= 0, object_node[np.maximum(pred_args, 0)], -1)

    static_nodes = np.arange(n_objects, first_goal)
    goal_nodes = np.arange(first_goal, first_goal + len(goal))
    neg_nodes = np.arange(first_goal + len(goal), n_fixed)
    other_nodes = np.arange(n_fixed, n_nodes)
    place(static_nodes, atoms.static_pred, atoms.static_args, _NON_GOAL, True)
    for facts, nodes, description, is_goal in (
        (goal, goal_nodes, _F_POS, 1),
        (goal_neg, neg_nodes, _F_NEG, 1),
        (others, other_nodes, _NON_GOAL, 0),
    ):
        facts_a = np.asarray(facts, dtype=np.int64)
        place(nodes, atoms.fact_pred[facts_a], atoms.fact_args[facts_a], description, description != _F_NEG)
        fact_node[facts_a] = nodes
        fact_goal[facts_a] = is_goal

    stat = _incidence(static_nodes, args[static_nodes], arity[static_nodes], n_objects)
    dynamic = np.concatenate([goal_nodes, other_nodes])
    dyn = _incidence(dynamic, args[dynamic], arity[dynamic], n_objects)
    degree = np.diff(stat[0]) + np.diff(dyn[0])
    sizes = [n_nodes, n_objects, first_goal, n_fixed, int(degree.max(initial=0))]
    return TaskGraph(np.array(sizes, dtype=np.int64), initial, fact_node, fact_goal, args, arity, *stat, *dyn)
