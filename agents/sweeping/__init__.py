"""The paper's grid as jobs, as a library: `SweepConfig` (the flags of ``python -m agents.sweep``),
`grid_cells` (the cells of the grid a config selects), `plan` (the train, evaluation and baseline
commands still to run, as units of `pddlgym_sl.parallel`), `Scheduler` (runs them, local
subprocesses or Ray tasks, in dependency order). ``python -m agents.sweep`` (`agents.apps.sweep`)
is its command line.
"""

from agents.sweeping.config import SweepConfig
from agents.sweeping.grid import Cell, grid_cells
from agents.sweeping.jobs import Job, plan
from agents.sweeping.scheduler import Scheduler

__all__ = ["Cell", "Job", "Scheduler", "SweepConfig", "grid_cells", "plan"]
