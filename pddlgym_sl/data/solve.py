"""Solve one problem slot with Fast Downward and label its plan (runs in a worker process).

Optimally by default (A* + LM-cut: every plan state gets its h*); or, with a satisficing
configuration (`SolveConfig.satisficing`: Fast Downward's lama-first, the plan then shortened by
`pddlgym_sl.data.shorten`), for tasks too large for A*: every plan state then gets an upper bound
of its h*, the plan's remaining cost (``label_kind`` "satisficing", `pddlgym_sl.data.labels`).

A *slot* is either a generator spec (`domains.ProblemSpec`) or a user's problem file. For a spec,
attempt k uses seed ``spec.seed + SEED_STRIDE * k``: when Fast Downward fails within the limits
(timeout, memory out, unsolvable, crash) or the problem is trivial, the problem is regenerated
with the next seed, up to ``retries`` attempts in all, as the paper did. A file gets one attempt.

Each finished slot leaves, written atomically in this order:
``problems/<file>.pddl`` (only for the solved attempt), ``labels/<slot>.npz`` (when solved) and
``records/<slot>.json`` (always; its presence marks the slot as done, so a killed run resumes by
skipping slots that have a record and redoing the others from scratch, deterministically).
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import domains
from domains import ProblemSpec
from pddlgym_sl.data.labels import check_labels, label_plan, save_labels
from pddlgym_sl.data.shorten import shorten_plan
from pddlgym_sl.errors import PDDLError
from pddlgym_sl.fd import run_fast_downward
from pddlgym_sl.io import atomic_write_json, atomic_write_text
from pddlgym_sl.pddl import read_pddl_file
from pddlgym_sl.task import CORE_VERSION, load_task

SEED_STRIDE = 1000
OPTIMAL_SEARCH = "astar(lmcut())"
SATISFICING_SEARCH = (
    "let(hlm, eval_modify_costs(landmark_sum(lm_factory=lm_reasonable_orders_hps(lm_rhw()),pref=false),"
    "cost_type=one),let(hff, eval_modify_costs(ff(),cost_type=one),"
    "lazy_greedy([hff,hlm],preferred=[hff,hlm],cost_type=one,reopen_closed=false)))"
)
"""Fast Downward's ``lama-first`` (its alias's search configuration, as one ``--search``)."""


@dataclass(frozen=True)
class SolveConfig:
    """Limits and retry policy of the solver, and whether its plans are optimal."""

    time_limit: float = 300.0
    memory_limit_mb: int = 8192
    retries: int = 20
    search: str = OPTIMAL_SEARCH
    optimal: bool = True
    """the search's plans are optimal (labels h*), else satisficing (labels upper bounds of h*)"""

    @classmethod
    def satisficing(cls, **limits) -> SolveConfig:
        """lama-first, plans shortened, states labelled with upper bounds (the module docstring)."""
        return cls(**limits, search=SATISFICING_SEARCH, optimal=False)


def slot_name(slot: ProblemSpec | Path) -> str:
    return slot.stem if isinstance(slot, ProblemSpec) else Path(slot).stem


def _attempts(slot: ProblemSpec | Path, retries: int):
    """Yield (seed or None, file name, PDDL text or the `PDDLError` of reading it) for each
    attempt of a slot; an unreadable file is one failed attempt, never fatal to the split."""
    if isinstance(slot, ProblemSpec):
        for k in range(retries):
            spec = dataclasses.replace(slot, seed=slot.seed + SEED_STRIDE * k)
            yield spec.seed, spec.filename, domains.problem_text(spec)
    else:
        path = Path(slot)
        try:
            yield None, path.name, read_pddl_file(path)
        except PDDLError as exc:
            yield None, path.name, exc


def _failure_reason(run) -> str:
    if run.unsolvable:
        return "unsolvable"
    if run.out_of_memory:
        return "memory_limit"
    if run.timed_out:
        return "time_limit"
    return f"no_plan (exit code {run.returncode})"


def solve_slot(
    slot: ProblemSpec | Path, domain_file: Path, split_dir: Path, config: SolveConfig
) -> dict[str, Any]:
    """Solve and label one slot; write its files; return its record (also written to disk)."""
    name = slot_name(slot)
    record: dict[str, Any] = {"slot": name, "status": "failed", "failures": [], "core": CORE_VERSION}
    if isinstance(slot, ProblemSpec):
        record["params"] = slot.kwargs
        record["seed"] = slot.seed
    problems_dir = split_dir / "problems"
    scratch = split_dir / "scratch"
    # errors name the user's file (or the generated problem's name), not the scratch copy
    source = None if isinstance(slot, ProblemSpec) else str(slot)
    for seed, filename, text in _attempts(slot, config.retries):
        attempt: dict[str, Any] = {"seed": seed, "problem": filename}
        if isinstance(text, PDDLError):
            attempt["reason"] = f"error: {text}"
            record["failures"].append(attempt)
            continue
        scratch_file = scratch / filename
        atomic_write_text(scratch_file, text)
        try:
            task = load_task(domain_file, scratch_file)
            if task.is_goal(task.init):
                attempt["reason"] = "trivial"
                record["failures"].append(attempt)
                continue
            run = run_fast_downward(
                domain_file,
                scratch_file,
                config.search,
                time_limit=config.time_limit,
                memory_limit_mb=config.memory_limit_mb,
            )
            attempt["solver_seconds"] = round(run.wall_time, 3)
            if not run.solved:
                attempt["reason"] = _failure_reason(run)
                record["failures"].append(attempt)
                continue
            start = time.perf_counter()
            plan = run.plan if config.optimal else shorten_plan(task, run.plan)
            labels = label_plan(task, plan, filename, optimal=config.optimal)
            violations = check_labels(labels)
            if labels.h_star[0] != run.cost and (config.optimal or labels.h_star[0] > run.cost):
                violations.append(f"h*(init)={labels.h_star[0]} but Fast Downward's plan cost is {run.cost}")
            if violations:
                raise PDDLError("label check failed: " + "; ".join(violations), file=scratch_file)
            save_labels(split_dir / "labels" / f"{name}.npz", labels)
            label_seconds = time.perf_counter() - start
        except PDDLError as exc:  # solver crash, unreadable problem, invalid plan, failed check
            attempt["reason"] = "error: " + str(exc).replace(str(scratch_file), source or filename)
            record["failures"].append(attempt)
            continue
        finally:
            if scratch_file.exists() and "reason" in attempt:
                scratch_file.unlink()
        problems_dir.mkdir(parents=True, exist_ok=True)
        shutil.move(scratch_file, problems_dir / filename)
        record.update(
            status="solved",
            problem=filename,
            solved_seed=seed,
            retries=len(record["failures"]),
            plan_length=len(labels.plan),
            **({} if config.optimal else {"label_kind": "satisficing", "found_plan_length": run.cost}),
            n_states=len(labels),
            solver_seconds=attempt["solver_seconds"],
            label_seconds=round(label_seconds, 3),
            expansions=run.expansions,
        )
        break
    else:
        record["retries"] = len(record["failures"])
    atomic_write_json(split_dir / "records" / f"{name}.json", record)
    return record
