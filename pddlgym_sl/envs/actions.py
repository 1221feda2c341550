"""The action table: every ground action of a task as its schema id and argument objects.

A relational policy scores ground actions from what they are made of, not from their position
in one problem's action list: ``(board c0 l1)`` is schema ``board`` applied to objects ``c0``
and ``l1``, whatever its index. The table says exactly that, in a layout that is the same for
every problem of a domain:

    row ``a`` (ground action ``a``, `CompiledTask.actions` order):
        ``[schema id, object index of argument 1, ..., object index of argument k, -1, ...]``

int64, ``(rows, 1 + schema.max_action_arity)``. The schema id is the position of the action
schema in the domain file (`Schema.actions`); object indices point into ``task.objects``, which
are also the object nodes ``0 .. n_objects - 1`` of an ``ilg`` observation and the object slots
of an ``nlm`` observation. Unused argument columns are -1, and so are the rows past the task's
actions when the table is padded to an environment's ``max_actions``.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from pddlgym_sl.envs.encoders.schema import Schema
from pddlgym_sl.errors import PDDLError
from pddlgym_sl.task import CompiledTask, parse_atom

__all__ = ["action_table", "action_table_space"]


def action_table(schema: Schema, task: CompiledTask, rows: int | None = None) -> np.ndarray:
    """The action table of `task` (see the module docstring), padded with -1 rows to `rows`."""
    n = task.n_actions if rows is None else int(rows)
    if n < task.n_actions:
        raise PDDLError(
            f"the task has {task.n_actions} ground actions, more than the {n} rows of the action table",
            file=task.problem_file,
        )
    table = np.full((n, 1 + schema.max_action_arity), -1, dtype=np.int64)
    objects = {o: i for i, o in enumerate(task.objects)}
    for a, name in enumerate(task.actions):
        head, args = parse_atom(name)
        sid = schema.action_index.get(head)
        if sid is None or len(args) != schema.action_arities[sid]:
            raise PDDLError(
                f"ground action {name} of task {task.name!r} matches no action schema of domain "
                f"{schema.domain_name!r}",
                file=task.problem_file,
            )
        table[a, 0] = sid
        table[a, 1 : 1 + len(args)] = [objects[o] for o in args]
    return table


def action_table_space(schema: Schema, rows: int, n_objects: int) -> spaces.Box:
    """The space of the tables of `rows` rows over problems of at most `n_objects` objects."""
    high = np.full((rows, 1 + schema.max_action_arity), max(n_objects - 1, 0), dtype=np.int64)
    high[:, 0] = max(len(schema.actions) - 1, 0)
    return spaces.Box(low=-1, high=high, dtype=np.int64)
