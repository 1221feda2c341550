"""The worker side of an evaluation: one process's model, heuristic and search, and one problem's
result record.

`init_worker` sets a process up (the run's model loaded once, the search and its options);
`solve` loads one task (ground or lifted, within the limits when they cover grounding), warms the
kernels up outside the timer on the process's first task, searches it and returns its record (the
plan validated by replay); `solve_lockstep` does the same for several GBFS searches advanced
together (`agents.lockstep`). These run in `pddlgym_sl.parallel`'s worker processes or Ray tasks.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from agents.evaluation.searches import EVAL_SEARCHES, SearchOptions, on_the_engine
from pddlgym_sl.errors import ConfigError, InputLimitError, PDDLError, TimeLimitError
from pddlgym_sl.lifted.mode import load_for_search
from pddlgym_sl.lifted.task import LiftedTask
from pddlgym_sl.search import SearchResult
from pddlgym_sl.search.warm_up import warm_up

__all__ = ["LIMITS", "compile_once", "init_worker", "solve", "solve_lockstep"]

_WORKER: dict[str, Any] = {}


def init_worker(
    run: str | None,
    heuristic: str | None,
    clip: bool,
    device: str,
    threads: int,
    search: str = "gbfs",
    options: SearchOptions | None = None,
    compiled: bool = True,
    search_bound: str = "trained",
) -> None:
    """Set this process up for `solve`: torch's threads, the run's model (loaded once) or the
    symbolic heuristic's name, the search and its options (on Ray without a memory limit, this
    node's share of its memory)."""
    import torch

    torch.set_num_threads(threads)
    _WORKER.update(
        run=run, heuristic=heuristic, clip=clip, device=device, trained=None, schema=None, warm=False
    )
    _WORKER.update(compiled=compiled, search_bound=search_bound)
    if (
        options is not None
        and options.memory_limit is None
        and on_the_engine(search, options.threshold is not None)
    ):
        options = replace(options, memory_limit=_share_of_memory())
    _WORKER.update(search=EVAL_SEARCHES[search], options=options)
    if run is not None:
        from agents.learned_heuristic import TrainedModel

        _WORKER["trained"] = TrainedModel.load(run, device=device)


def _share_of_memory() -> float:
    """A Ray worker's memory limit in MB when none is given: its node's default search memory
    (`pddlgym_sl.memory.default_memory_limit`) divided among the units the node runs at once."""
    from pddlgym_sl.memory import default_memory_limit
    from pddlgym_sl.parallel.ray_backend import units_at_once_on_this_node

    return default_memory_limit() / (units_at_once_on_this_node() or 1) / 2**20


def _heuristic(task, domain_file: str):
    """The worker's heuristic for `task`: the trained run's (a fresh `LearnedHeuristic`) or the
    symbolic one's name."""
    if _WORKER["trained"] is None:
        return _WORKER["heuristic"]
    from agents.learned_heuristic import learned_heuristic
    from pddlgym_sl.envs.encoders.schema import Schema

    if _WORKER["schema"] is None:
        _WORKER["schema"] = Schema.from_domain_file(domain_file)
    trained, schema, clip, device = _WORKER["trained"], _WORKER["schema"], _WORKER["clip"], _WORKER["device"]
    return learned_heuristic(
        trained, task, schema, clip=clip, device=device, compiled=_WORKER["compiled"],
        search_bound=_WORKER["search_bound"],
    )  # fmt: skip


LIMITS = ("time_limit", "memory_limit")
"""The statuses of a task that a limit ended (``ended_in`` says in which phase)."""


def _load(
    domain_file: str, problem_file: str, limit: int, time_limit: float | None
) -> tuple[Any, float] | dict[str, Any]:
    """``(task, load seconds)``, or the recorded failure of a task that cannot be loaded (or,
    under ``--limits-cover-grounding``, not within the limits)."""
    options: SearchOptions | None = _WORKER.get("options")
    covers = options is not None and options.covers_grounding
    start = time.perf_counter()
    try:
        grounding, memory_limit = (
            ("ground", None) if options is None else (options.grounding, options.memory_limit)
        )
        bounded = covers and time_limit is not None
        task = load_for_search(domain_file, problem_file, grounding, time_limit, memory_limit, bounded).task
    except PDDLError as exc:  # one task that cannot be loaded must not end the evaluation
        status = f"error: {exc}"
        if isinstance(exc, TimeLimitError):
            status = "time_limit"
        elif isinstance(exc, InputLimitError) and covers:
            status = "memory_limit"
        return {
            "problem": Path(problem_file).name,
            "solved": False,
            "status": status,
            "evaluations": 0,
            "seconds": 0.0,
            "load_seconds": round(time.perf_counter() - start, 4),
            "limit": limit,
            "time_limit": time_limit,
            "memory_limit": None if options is None else options.memory_limit,
            "limits_cover_grounding": covers,
            **({"ended_in": "grounding", "cause": exc.cause} if status in LIMITS else {}),
        }
    return task, time.perf_counter() - start


def _warm_up(task, domain_file: str, options: SearchOptions) -> float:
    """Compile the kernels outside the timer on the worker's first problem; its compile seconds."""
    if _WORKER.get("warm"):
        return 0.0

    def short_search(task, heuristic, max_evaluations):
        return _WORKER["search"](task, heuristic, replace(options, limit=max_evaluations, time_limit=None))

    seconds = warm_up(short_search, task, _heuristic(task, domain_file))
    _WORKER["warm"] = True
    return seconds


def _outcome(
    problem_file: str, task, result: SearchResult, load_seconds: float, compile_seconds: float, limit: int,
    time_limit: float | None,
) -> dict[str, Any]:  # fmt: skip
    """One problem's result record (the plan validated by replay)."""
    if result.solved:
        task.validate_plan(result.plan)  # raises PlanError on an invalid plan
    return {
        "problem": Path(problem_file).name,
        "solved": result.solved,
        "status": result.status,
        "plan_length": result.cost,
        "evaluations": result.evaluations,
        "expansions": result.expansions,
        "generated": result.generated,
        "seconds": round(result.seconds, 4),
        "load_seconds": round(load_seconds, 4),
        "compile_seconds": round(compile_seconds, 4),
        "limit": limit,
        "time_limit": time_limit,
        "memory_limit": _WORKER["options"].memory_limit,
        "limits_cover_grounding": _WORKER["options"].covers_grounding,
        "grounding": "lifted" if isinstance(task, LiftedTask) else "ground",
        **({"search_bound": _WORKER["search_bound"]} if _WORKER.get("trained") is not None else {}),
        **({"ended_in": "search"} if result.status in LIMITS else {}),
        "plan": result.plan,
        **_extra_fields(result),
    }


def solve(domain_file: str, problem_file: str, limit: int, time_limit: float | None = None) -> dict[str, Any]:
    """One problem's result record: the task loaded (ground or lifted) within the limits, searched,
    its plan validated; a task that cannot be loaded is a recorded failure."""
    loaded = _load(domain_file, problem_file, limit, time_limit)
    if isinstance(loaded, dict):
        return loaded
    task, load_seconds = loaded
    if isinstance(task, LiftedTask):
        return _solve_lifted(problem_file, task, load_seconds, limit, time_limit)
    options = _WORKER["options"]
    compile_seconds = _warm_up(task, domain_file, options)
    start = time.perf_counter()
    heuristic = _heuristic(task, domain_file)
    search_limit = time_limit
    if options.covers_grounding and time_limit is not None:  # the search gets the time left
        search_limit = max(time_limit - load_seconds - (time.perf_counter() - start), 1e-3)
    result = _WORKER["search"](task, heuristic, replace(options, limit=limit, time_limit=search_limit))
    # the engine checks the clock between expansions, so one expansion's batch of evaluations may
    # end past the limit: a plan found after it does not count, as in the IPC
    late = time_limit is not None and load_seconds + time.perf_counter() - start > time_limit
    if options.covers_grounding and result.solved and late:
        result = replace(result, solved=False, status="time_limit", plan=[], cost=None, plan_indices=[])
    return _outcome(problem_file, task, result, load_seconds, compile_seconds, limit, time_limit)


def _solve_lifted(
    problem_file: str, task: LiftedTask, load_seconds: float, limit: int, time_limit: float | None
) -> dict[str, Any]:
    """`solve` for a task loaded lifted (`agents.lifted_search`): lifted GBFS with the run's WL model
    or the symbolic heuristic, its setup counted in the time left and its first compilation not."""
    from agents.lifted_search import lifted_args, search_lifted, warm_up

    options = _WORKER["options"]
    start = time.perf_counter()
    try:
        if _WORKER["search"] is not EVAL_SEARCHES["gbfs"] or options.threshold is not None:
            raise ConfigError(
                "a task loaded lifted is searched with plain GBFS only (--search gbfs, no --prune)"
            )
        args = lifted_args(task, _WORKER["trained"], _WORKER["heuristic"])
    except PDDLError as exc:
        return {"problem": Path(problem_file).name, "solved": False, "status": f"error: {exc}",
                "evaluations": 0, "seconds": 0.0, "load_seconds": round(load_seconds, 4), "limit": limit,
                "time_limit": time_limit, "grounding": "lifted"}  # fmt: skip
    setup = time.perf_counter() - start
    lazy = options.lifted_search == "lazy"
    compile_seconds = 0.0 if _WORKER.get("warm_lifted") else warm_up(task, args, lazy=lazy)
    _WORKER["warm_lifted"] = True
    start = time.perf_counter() - setup
    search_limit = time_limit
    if options.covers_grounding and time_limit is not None:  # the search gets the time left
        search_limit = max(time_limit - load_seconds - setup, 1e-3)
    result = search_lifted(task, args, limit, search_limit, options.memory_limit, lazy=lazy)
    late = time_limit is not None and load_seconds + time.perf_counter() - start > time_limit
    if options.covers_grounding and result.solved and late:
        result = replace(result, solved=False, status="time_limit", plan=[], cost=None, plan_indices=[])
    outcome = _outcome(problem_file, task, result, load_seconds, compile_seconds, limit, time_limit)
    return {**outcome, "lifted_search": options.lifted_search}


def compile_once(init: tuple, domain_file: str, problem_file: str) -> None:
    """Compile this evaluation's kernels (engine, heuristic, model) here, before the worker
    processes start: they then load them from numba's disk cache, instead of each compiling the
    same kernels at once (minutes of CPU per worker on a cold cache)."""
    init_worker(*init)
    loaded = _load(domain_file, problem_file, 1, None)
    if not isinstance(loaded, dict):  # a task that cannot be loaded is the worker's to record
        _warm_up(loaded[0], domain_file, _WORKER["options"])


def solve_lockstep(
    domain_file: str, problem_files: list[str], limit: int, time_limit: float | None, width: int
) -> Iterator[dict[str, Any]]:
    """The results of `solve` for every problem (in the order the searches finish), ``width``
    GBFS searches advanced together (`agents.lockstep`): each task is loaded when a search slot
    is free."""
    from agents.lockstep import LockstepSearch, lockstep

    failed: list[dict[str, Any]] = []
    loads: dict[str, tuple[Any, float, float]] = {}

    def searches() -> Iterator[LockstepSearch]:
        for problem_file in problem_files:
            loaded = _load(domain_file, problem_file, limit, time_limit)
            if isinstance(loaded, dict):
                failed.append(loaded)
                continue
            task, load_seconds = loaded
            if isinstance(task, LiftedTask):  # not in lockstep: the lifted engine searches it alone
                failed.append(_solve_lifted(problem_file, task, load_seconds, limit, time_limit))
                continue
            compile_seconds = _warm_up(task, domain_file, _WORKER["options"])
            loads[problem_file] = (task, load_seconds, compile_seconds)
            yield LockstepSearch(problem_file, task, _heuristic(task, domain_file))

    memory_limit = _WORKER["options"].memory_limit
    for problem_file, result in lockstep(
        searches(), width, max_evaluations=limit, time_limit=time_limit, memory_limit=memory_limit
    ):
        yield from failed
        failed.clear()
        task, load_seconds, compile_seconds = loads.pop(problem_file)
        yield _outcome(str(problem_file), task, result, load_seconds, compile_seconds, limit, time_limit)
    yield from failed


def _extra_fields(result: SearchResult) -> dict[str, Any]:
    """What a search adds to `SearchResult` (anytime: improvements, pruned, iterations)."""
    base = SearchResult.__dataclass_fields__
    return {k: v for k, v in result.to_dict().items() if k not in base}
