"""Ground or lifted: ``--grounding auto|ground|lifted`` of the planning commands.

``ground`` grounds the task (Fast Downward's translator, `pddlgym_sl.task.load_task`); ``lifted``
keeps it lifted (`task.load_lifted_task`); ``auto`` (the default) decides before grounding, from
`pddlgym_sl.ground_size.estimate` (parameter domains after static filtering): a task whose
grounding is estimated to need more than the memory limit goes lifted at once. Of the IPC 2023 LT
sample's tasks (`experiments/results/ipc-ecai25`, 60 s and 4 GB), every one estimated above 4 GB
failed to ground, and all but three that grounded were estimated below 3.8 GB (the estimate is an
upper bound, up to 6x loose). Below the limit the task is grounded, and where the limits cover
grounding (`bounded`: `agents.evaluate --limits-cover-grounding`, `pddlgym_sl.plan --time-limit`)
in a child process bounded by `GROUND_SHARE` of the time limit and by the memory limit
(`pddlgym_sl.bounded_load`): a grounding that runs past either falls back to lifted planning in
the time left, where grounding would have left little or none to search.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pddlgym_sl.bounded_load import load_task_bounded
from pddlgym_sl.errors import ConfigError, GroundingError, InputLimitError, TimeLimitError
from pddlgym_sl.ground_size import estimate, max_ground_bytes
from pddlgym_sl.lifted.task import lifted_task
from pddlgym_sl.limits import format_bytes
from pddlgym_sl.memory import memory_limit_bytes
from pddlgym_sl.pddl import parse_domain, parse_problem
from pddlgym_sl.task import compile_task, load_task

__all__ = ["GROUNDINGS", "GROUND_SHARE", "LoadedTask", "choose_grounding", "load_for_search"]

GROUNDINGS = ("auto", "ground", "lifted")
LIFTED_SEARCHES = ("eager", "lazy")
"""How a task loaded lifted is searched (`pddlgym_sl.lifted.search`): eager GBFS, each successor
evaluated when generated, or lazy GBFS, each state when expanded (for tasks with hundreds of
successors per state)."""
"""The values of ``--grounding``."""

GROUND_SHARE = 0.5
"""The share of the time limit that ``auto`` lets grounding take before planning lifted instead."""


@dataclass(frozen=True)
class LoadedTask:
    """A task ready to search: the `CompiledTask` or `LiftedTask`, which mode it is in
    (``"ground"`` or ``"lifted"``), why (empty when the mode was asked for), and the seconds loading
    took (a grounding abandoned by ``auto`` included)."""

    task: Any
    grounding: str
    reason: str
    load_seconds: float

    @property
    def lifted(self) -> bool:
        return self.grounding == "lifted"


def choose_grounding(domain: Any, problem: Any, memory_limit: float | None = None) -> tuple[str, str]:
    """``("lifted", why)`` when grounding is estimated to need more than the memory limit (MB;
    None: the default search limit) or the grounding limit, else ``("ground", "")``."""
    est = estimate(domain, problem)
    limit = min(memory_limit_bytes(memory_limit), max_ground_bytes())
    if est.total_bytes > limit:
        return "lifted", (
            f"grounding estimated at {format_bytes(est.total_bytes)} (largest schemas: "
            f"{', '.join(est.largest(2))}), more than the {format_bytes(limit)} limit"
        )
    return "ground", ""


def load_for_search(
    domain_file: str | Path,
    problem_file: str | Path,
    grounding: str = "auto",
    time_limit: float | None = None,
    memory_limit: float | None = None,
    bounded: bool = False,
) -> LoadedTask:
    """Load a task for planning in the mode `grounding` asks for (the module docstring).

    ``ground`` grounds in this process, or with `bounded` in a child under `time_limit` and
    `memory_limit` (`load_task_bounded`: its errors are raised). ``auto`` grounds the tasks it
    estimates groundable the same way, with `bounded` under `GROUND_SHARE` of `time_limit`, and
    plans lifted when grounding runs out of time or memory (in this process: when the
    translator's memory cap stops it, `pddlgym_sl.memory.address_space_cap`).
    """
    if grounding not in GROUNDINGS:
        raise ConfigError(f"grounding must be one of {', '.join(GROUNDINGS)}, not {grounding!r}")
    start = time.perf_counter()

    def loaded(task: Any, mode: str, reason: str = "") -> LoadedTask:
        return LoadedTask(task, mode, reason, time.perf_counter() - start)

    if grounding == "ground" and not bounded:
        return loaded(load_task(domain_file, problem_file), "ground")
    if grounding == "ground":
        return loaded(load_task_bounded(domain_file, problem_file, time_limit, memory_limit), "ground")
    domain = parse_domain(domain_file)
    problem = parse_problem(problem_file, domain)
    if grounding == "lifted":
        return loaded(lifted_task(domain, problem, domain_file, problem_file), "lifted")
    mode, reason = choose_grounding(domain, problem, memory_limit)
    if mode == "ground":
        share = None if time_limit is None else GROUND_SHARE * time_limit
        try:
            if bounded:
                return loaded(load_task_bounded(domain_file, problem_file, share, memory_limit), "ground")
            return loaded(compile_task(domain, problem, domain_file, problem_file), "ground")
        except TimeLimitError:
            reason = f"grounding took more than {share:g} s ({GROUND_SHARE:g} of the time limit)"
        except InputLimitError as exc:
            reason = f"grounding ran out of memory ({exc.cause})"
        except GroundingError as exc:  # the grounding process died (killed for its memory)
            if "died" not in exc.cause:
                raise
            reason = exc.cause
        if time_limit is not None and time.perf_counter() - start >= time_limit:
            raise TimeLimitError(f"{reason}, and left no time to plan lifted", file=problem_file)
    return loaded(lifted_task(domain, problem, domain_file, problem_file), "lifted", reason)
