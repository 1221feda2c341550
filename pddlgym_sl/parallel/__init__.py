"""Running units of work, resumably, on local processes or a Ray cluster, and stopping them cleanly.

- `units`: `run_units`, the one loop of every parallel command (labels, evaluation, sweeps), with
  its backends (`Backend`: ``local`` processes or threads, ``ray``);
- `children`: the processes we start die with us (process groups, parent-death signal, watchdog;
  ``guard.py`` for programs we do not write, such as Fast Downward), one thread each (`CHILD_ENV`);
- `interrupt`: SIGINT and SIGTERM end a command with one line saying what is kept;
- `ray_backend`: the Ray tasks (imported only for ``--backend ray``; the ``[cluster]`` extra).
"""

from pddlgym_sl.parallel.children import CHILD_ENV, child_env, run_command, stop_commands
from pddlgym_sl.parallel.interrupt import Terminated, interrupted, stop_on_signals
from pddlgym_sl.parallel.units import BACKENDS, Backend, Outcome, Unit, WorkerError, run_units

__all__ = [
    "BACKENDS",
    "CHILD_ENV",
    "Backend",
    "Outcome",
    "Terminated",
    "Unit",
    "WorkerError",
    "child_env",
    "interrupted",
    "run_command",
    "run_units",
    "stop_commands",
    "stop_on_signals",
]
