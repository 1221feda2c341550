"""GBFS evaluation of learned (or symbolic) heuristics: ``python -m agents.evaluate``.

    python -m agents.evaluate --run runs/<id> [--split plan] [--limit 10000] [--jobs N] [--clip]
    python -m agents.evaluate --heuristic hff --domain ferry [--split plan]
    python -m agents.evaluate --run runs/<id> --search anytime   # restarting GBFS, u = C − g(s)
    python -m agents.evaluate --run runs/<id> --tasks ../shared/ipc23-lt/ferry/testing-easy --time-limit 300
    python -m agents.evaluate --run runs/<id> --search dual --prune adaptive --threshold 40

Confidence-aware search (Heller et al., SoCS 2022; `pddlgym_sl.search.confidence`): ``--search
gbfs|dual`` (single queue, or dual queue with hFF), ``--prune mean|adaptive --threshold X`` (the
run's training-data threshold below which X% of its training states fall, `agents.confidence`;
states below it are pruned, in dual-queue search from the learned queue only), ``--prioritize``
(dual: the threshold decides the queue turns instead of pruning). Their results go to
``<run>/eval/<split>[-clip]-<search>-<config>/`` with the paper's configuration names (``Base``,
``M5``, ``A40``, ``P20``, ...; ``PM20`` prioritizes with the mean threshold).

The paper's planning protocol (Table 2): eager GBFS with a budget of ``--limit`` node evaluations
(10,000) on the problems of a split (``plan``: 100 test-size problems); a problem counts as
solved when a plan is found within the budget, and an unsolved problem counts the whole budget
in the average evaluations. The learned heuristic evaluates all successors of an expansion in
one forward pass (N: μ, N+clip: max(μ, l), TN: E[x]); every plan is validated by replay.
``--search`` picks another search of `pddlgym_sl.search.SEARCHES` under the same budget: ``anytime``
goes on after the first plan, restarting GBFS with the incumbent's cost C as an upper bound (the
TN value gets u = C − g(s), nodes with g + LM-cut ≥ C are pruned); its per-problem results also
list every improved plan with its cost and evaluation count (``improvements``).

Problems: ``<data>/<domain>/<split>/problems`` of the run's dataset when that directory exists,
otherwise the split of the paper's Table 3 (generated once into the problem cache); or, with
``--tasks DIR``, every task file in DIR (a directory of given tasks, such as the IPC 2023 Learning
Track's test tasks), with ``--domain-file`` or the ``domain.pddl`` in DIR or its parent; the
directory's name then stands for the split. ``--time-limit`` bounds each search's wall-clock time
(grounding not included; both are recorded). The first problem of each process also records
``compile_seconds``: a small warm-up search compiles the kernels before its search is timed. A
task that cannot be loaded is a recorded failure.
Results go to ``<run>/eval/<split>[-clip][-<search>]/`` (no suffix for gbfs; baselines:
``runs/baselines/<domain>__<heuristic>/eval/<split>[-<search>]/``):
one JSON per problem (written atomically; finished problems are skipped on a re-run) and
``summary.json``. ``--run R --accuracy`` plans nothing: it prints the run's accuracy on its
dataset's test split (Table 1: MSE, MSE+clip, NLL, beside hFF and LM-cut) and writes it to
``<run>/eval/accuracy.json``.

Parallel (`pddlgym_sl.parallel`, one problem per unit): ``--jobs N`` local worker processes, or
``--backend ray [--address ADDR]`` Ray tasks on a cluster (the ``[cluster]`` extra; every node
must see the run and the problems at the same paths). Ctrl-C or SIGTERM stops every worker at
once and says how many problems are kept; the same command evaluates the rest.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
from tqdm import tqdm

import domains
from agents.devices import resolve_device
from agents.registries import SEARCH_BOUNDS
from pddlgym_sl.arguments import check_ranges
from pddlgym_sl.cli import Command, tyro_parse
from pddlgym_sl.data.generate import given_domain_file
from pddlgym_sl.envs.problems import problem_dir_files, problem_files, resolve_problems, spread
from pddlgym_sl.errors import ConfigError, InputLimitError, PDDLError, TimeLimitError
from pddlgym_sl.io import atomic_write_json, remove_orphaned_temporaries
from pddlgym_sl.lifted.mode import GROUNDINGS, load_for_search
from pddlgym_sl.lifted.task import LiftedTask
from pddlgym_sl.parallel import BACKENDS, Backend, Unit, run_units
from pddlgym_sl.parallel.interrupt import note_kept
from pddlgym_sl.search import SEARCHES, SearchResult, Threshold, confidence_gbfs, dual_gbfs, gbfs
from pddlgym_sl.search.thresholds import THRESHOLDS
from pddlgym_sl.search.warm_up import warm_up

# torch and the torch-using modules (`agents.checkpoint`, `agents.confidence`, the learned heuristic)
# are imported where they are used, so that ``--help`` and argument errors come back in a second.


@dataclass(frozen=True)
class SearchOptions:
    """How a problem is searched: the evaluation budget and, for the confidence-aware searches, the
    learned heuristic's threshold (None: none) and whether it prioritizes instead of pruning;
    whether the time and memory limits cover loading and grounding the task too."""

    limit: int
    threshold: Threshold | None = None
    prioritize: bool = False
    time_limit: float | None = None
    memory_limit: float | None = None
    covers_grounding: bool = False
    grounding: str = "ground"


def _single_queue(task, heuristic, options: SearchOptions) -> SearchResult:
    """The engine's GBFS, or with a threshold the single-queue GBFS that prunes unconfident states."""
    if options.threshold is None:
        return gbfs(
            task,
            heuristic,
            max_evaluations=options.limit,
            time_limit=options.time_limit,
            memory_limit=options.memory_limit,
        )
    return confidence_gbfs(
        task, heuristic, options.threshold, max_evaluations=options.limit, time_limit=options.time_limit
    )


def _dual_queue(task, heuristic, options: SearchOptions) -> SearchResult:
    """Dual-queue GBFS with hFF (pruning on the learned queue, or the prioritizing queue)."""
    return dual_gbfs(
        task,
        heuristic,
        options.threshold,
        options.prioritize,
        max_evaluations=options.limit,
        time_limit=options.time_limit,
    )


def _plain(name: str):
    """A search of `pddlgym_sl.search.SEARCHES` under the budget (no confidence threshold)."""

    def search(task, heuristic, options: SearchOptions) -> SearchResult:
        return SEARCHES[name](
            task,
            heuristic,
            max_evaluations=options.limit,
            time_limit=options.time_limit,
            memory_limit=options.memory_limit,
        )

    return search


CONFIDENCE_AWARE = ("gbfs", "dual")
"""The searches that take a confidence threshold (``--prune``)."""
EVAL_SEARCHES = {
    "gbfs": _single_queue,
    "dual": _dual_queue,
    **{name: _plain(name) for name in SEARCHES if name != "gbfs"},
}
"""``--search``: name -> ``(task, heuristic, SearchOptions) -> SearchResult``."""
DEFAULT_SEARCH = "gbfs"
SEARCH_NAMES = tuple(EVAL_SEARCHES)
PRUNE_CHOICES = ("none", *THRESHOLDS)  # = agents.confidence.THRESHOLD_KINDS
_PRUNE_LETTERS = {"mean": "M", "adaptive": "A"}  # the paper's configuration names (Table 2)
_PRIORITIZE_LETTERS = {"mean": "PM", "adaptive": "P"}


@dataclass
class Args:
    """Evaluate a trained run (or a symbolic heuristic) with GBFS under an evaluation budget."""

    run: Path | None = None
    """run directory of agents.supervised (model.json + best.safetensors)"""
    heuristic: str | None = None
    """symbolic baseline instead of a run: hff, lmcut, hadd, hmax, goal_count, blind"""
    domain: str | None = None
    """domain of the problems (default: the run's)"""
    split: str = "plan"
    """problem set: plan (the paper's 100 problems), test, val, train"""
    data: Path | None = None
    """dataset root whose <domain>/<split>/problems to use (default: the run's --data)"""
    limit: int = 10_000
    """node-evaluation budget per problem"""
    problems: int | None = None
    """evaluate only N problems, evenly spread over the sorted split (so every size is kept)"""
    tasks: Path | None = None
    """plan on the task files of this directory instead of a split (an IPC domain's testing-easy)"""
    domain_file: Path | None = None
    """domain file of --tasks (default: DIR/domain.pddl or DIR/../domain.pddl)"""
    time_limit: float | None = None
    """wall-clock limit of each search in seconds (default: none)"""
    limits_cover_grounding: bool = False
    """--time-limit and the memory limit cover loading and grounding each task too, as in the IPC:
    the task is loaded in a child process under them (a task not grounded in time ends with status
    time_limit, one whose grounding runs out of memory with memory_limit; ended_in says which
    phase), and its search gets the time left after the heuristic's setup; one search at a time
    (no --lockstep). Compiling the kernels, once per process before its first task (compile_seconds),
    is not counted"""
    memory_limit: float | None = None
    """memory limit of each search's process in MB: a search that would pass it ends with status
    memory_limit (default: 3/4 of the machine's memory, shared by the --jobs processes); not for
    --search dual or --prune (their queues are Python's)"""
    clip: bool = False
    """N+clip: clip mu below by the admissible bound"""
    search_bound: Literal[SEARCH_BOUNDS] = "trained"
    """the bound a learned value reads at search (TN, N+clip): the run's own on every evaluated state
    (trained), lmcut or hmax instead, screened (the trained bound only where mu - hFF < 6 sigma: the
    value is the same to 6e-9 sigma), lazy (the trained bound when a state is expanded, mu until then:
    the same search but among equal values), or none (the value is mu); screened and lazy: --model wl"""
    grounding: Literal[GROUNDINGS] = "auto"
    """ground each task (Fast Downward's translator), keep it lifted (pddlgym_sl.lifted: GBFS only, with a
    --model wl run or goal_count, blind, hmax, hadd, hff), or auto: lifted when grounding is estimated
    beyond the memory limit, or (with --limits-cover-grounding) runs past half the time limit or out of
    memory; each record says which (grounding)"""
    search: Literal[SEARCH_NAMES] = DEFAULT_SEARCH
    """gbfs; dual (dual-queue GBFS with the learned heuristic and hFF, round robin); astar; anytime
    (restarting GBFS with u = C - g(s)); anytime-no-u (its ablation without u); every search stops
    at --limit evaluations (10,000 by default)"""
    jobs: int = 1
    """parallel processes (each runs its own copy of the model on one thread; local backend)"""
    backend: Literal[BACKENDS] = "local"
    """where problems are searched: local processes, or ray (a Ray cluster; the [cluster] extra)"""
    address: str | None = None
    """--backend ray: the cluster's address (auto, or HOST:PORT; default: $RAY_ADDRESS, else a Ray
    instance of this machine)"""
    lockstep: int | None = None
    """GBFS searches advanced together in one process (agents.lockstep): each round one forward pass
    over the new states of all of them, their bounds on both cores; every search is node for node the
    one it would be alone, its seconds count the wall time it was open. Default: 8 for plain GBFS with
    a learned heuristic (torch path), --jobs 1 and the local backend, else 1 (one search at a time)"""
    device: str = "cpu"
    """device of the forward passes: cpu (GBFS evaluates one expansion's successors at a time, batches
    too small to pay a GPU's transfers), auto (cuda when available), cuda, ..."""
    compiled: bool = True
    """a --model wl run (N or TN head) evaluates with its compiled numba heuristic, the same values as
    the torch forward pass (not for the dual / --prune searches, which need confidences);
    --no-compiled forces the torch path"""
    out: Path | None = None
    """result directory (default: <run>/eval/<split>[-clip] or runs/baselines/...)"""
    accuracy: bool = False
    """instead of planning: print (and write to <run>/eval/accuracy.json) the run's accuracy on its
    dataset's test split (Table 1: MSE, MSE+clip, NLL, beside hFF and LM-cut); needs --run"""
    confidence: bool = False
    """first (re)write the run's confidence files (training-data thresholds, Table 1 of Heller et al.)"""
    prune: Literal[PRUNE_CHOICES] = "none"
    """confidence threshold of the learned heuristic (from its training data): mean or adaptive; states
    below it are pruned (dual: from the learned queue only); needs --threshold"""
    prioritize: bool = False
    """dual only: the --prune threshold decides the turns instead of pruning (stay on the learned queue
    after a confident expansion, else one hFF expansion)"""
    threshold: float | None = None
    """X: the threshold puts X% of the training states below it (the paper: 5, 20, 40, 80)"""
    quiet: bool = False
    """no progress bar"""

    def __post_init__(self) -> None:
        check_ranges(self, positive=("limit", "problems", "jobs", "time_limit", "memory_limit", "lockstep"))
        if self.limits_cover_grounding and self.time_limit is None:
            raise ConfigError("--limits-cover-grounding needs --time-limit")
        Backend(self.backend, self.jobs, self.address)  # --address without --backend ray


# ------------------------------------------------------------------ worker side
_WORKER: dict[str, Any] = {}


def _init_worker(
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
    import torch

    torch.set_num_threads(threads)
    _WORKER.update(
        run=run, heuristic=heuristic, clip=clip, device=device, trained=None, schema=None, warm=False
    )
    _WORKER.update(compiled=compiled, search_bound=search_bound)
    if (
        options is not None
        and options.memory_limit is None
        and _on_the_engine(search, options.threshold is not None)
    ):
        options = replace(options, memory_limit=_share_of_memory())
    _WORKER.update(search=EVAL_SEARCHES[search], options=options)
    if run is not None:
        from agents.learned_heuristic import TrainedModel

        _WORKER["trained"] = TrainedModel.load(run, device=device)


def _on_the_engine(search: str, prunes: bool) -> bool:
    """Whether the search runs on the engine, which takes a memory limit: not the confidence-aware
    ones, ``dual`` and a pruning ``gbfs`` (their queues are Python's)."""
    return search != "dual" and not prunes


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


def _solve(
    domain_file: str, problem_file: str, limit: int, time_limit: float | None = None
) -> dict[str, Any]:
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
    """`_solve` for a task loaded lifted (`agents.lifted_search`): lifted GBFS with the run's WL model
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
    compile_seconds = 0.0 if _WORKER.get("warm_lifted") else warm_up(task, args)
    _WORKER["warm_lifted"] = True
    start = time.perf_counter() - setup
    search_limit = time_limit
    if options.covers_grounding and time_limit is not None:  # the search gets the time left
        search_limit = max(time_limit - load_seconds - setup, 1e-3)
    result = search_lifted(task, args, limit, search_limit, options.memory_limit)
    late = time_limit is not None and load_seconds + time.perf_counter() - start > time_limit
    if options.covers_grounding and result.solved and late:
        result = replace(result, solved=False, status="time_limit", plan=[], cost=None, plan_indices=[])
    return _outcome(problem_file, task, result, load_seconds, compile_seconds, limit, time_limit)


def _compile_once(init: tuple, domain_file: str, problem_file: str) -> None:
    """Compile this evaluation's kernels (engine, heuristic, model) here, before the worker
    processes start: they then load them from numba's disk cache, instead of each compiling the
    same kernels at once (minutes of CPU per worker on a cold cache)."""
    _init_worker(*init)
    loaded = _load(domain_file, problem_file, 1, None)
    if not isinstance(loaded, dict):  # a task that cannot be loaded is the worker's to record
        _warm_up(loaded[0], domain_file, _WORKER["options"])


def _solve_lockstep(
    domain_file: str, problem_files: list[str], limit: int, time_limit: float | None, width: int
) -> Iterator[dict[str, Any]]:
    """The results of `_solve` for every problem (in the order the searches finish), ``width``
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


LOCKSTEP_DEFAULT = 8
"""``--lockstep`` where it applies and is not given: searches advanced together."""


def lockstep_width(args: Args, model: str | None) -> int:
    """How many searches `evaluate` advances together: ``--lockstep``, or `LOCKSTEP_DEFAULT` for
    plain GBFS with a learned heuristic on the torch path in one local process (the only case it
    supports), else 1. `model` is the run's model name (None without a run): a ``--model wl`` run
    evaluates with its compiled heuristic inside the engine, not in lockstep, unless --no-compiled."""
    applies = args.run is not None and args.search == "gbfs" and args.prune == "none"
    applies = applies and not args.limits_cover_grounding  # each search's own time left
    in_engine = model == "wl" and args.compiled
    if args.lockstep is None:
        default = applies and not in_engine and args.jobs == 1 and args.backend == "local"
        return LOCKSTEP_DEFAULT if default else 1
    if args.lockstep > 1 and not applies:
        raise ConfigError(
            "--lockstep advances GBFS searches with a learned heuristic (--run, --search gbfs, no --prune, "
            "not --limits-cover-grounding)"
        )
    if args.lockstep > 1 and in_engine:
        raise ConfigError(
            "--lockstep: a --model wl run is evaluated inside the search engine; add --no-compiled to "
            "evaluate it with torch in lockstep"
        )
    if args.lockstep > 1 and (args.jobs > 1 or args.backend != "local"):
        raise ConfigError(
            "--lockstep K > 1 runs in one process (it keeps both cores busy itself): use --jobs 1 and "
            "the local backend"
        )
    return args.lockstep


def _extra_fields(result: SearchResult) -> dict[str, Any]:
    """What a search adds to `SearchResult` (anytime: improvements, pruned, iterations)."""
    base = SearchResult.__dataclass_fields__
    return {k: v for k, v in result.to_dict().items() if k not in base}


# ------------------------------------------------------------------ driver side
def _finished(path: Path, args: Args) -> bool:
    """A problem is done when its result exists and was obtained under the same budget (a search
    that ran out of memory is searched again under another memory limit; on Ray without
    ``--memory-limit``, whose workers' limits the driver does not know, always)."""
    if not path.is_file():
        return False
    result = json.loads(path.read_text())
    if result.get("status") == "memory_limit" and result.get("memory_limit") != _process_memory_limit(args):
        return False
    if result.get("ended_in") == "grounding" and "grounding" not in result and args.grounding != "ground":
        return False  # stopped in its grounding before --grounding existed: lifted planning may search it
    covered = result.get("limits_cover_grounding", False) == args.limits_cover_grounding
    same_bound = args.run is None or result.get("search_bound", "trained") == args.search_bound
    same_budget = result.get("limit") == args.limit and result.get("time_limit") == args.time_limit
    return covered and same_bound and same_budget


def summarize(results: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    """Coverage and average evaluations (an unsolved problem counts `limit`), as in Table 2; and the
    solved problems' own mean, which is what a time-limited protocol without a cap can compare."""
    solved = [r for r in results if r["solved"]]
    return {
        "problems": len(results),
        "solved": len(solved),
        "coverage": len(solved) / len(results) if results else 0.0,
        "mean_evaluations": float(np.mean([r["evaluations"] if r["solved"] else limit for r in results]))
        if results
        else 0.0,
        "mean_evaluations_solved": float(np.mean([r["evaluations"] for r in solved])) if solved else None,
        "mean_plan_length": float(np.mean([r["plan_length"] for r in solved])) if solved else None,
        "mean_seconds": float(np.mean([r["seconds"] for r in results])) if results else 0.0,
        "limit": limit,
    }


def config_label(args: Args) -> str:
    """The paper's name of a search configuration (Table 2): ``Base`` (confidence-unaware), ``M<X>``
    / ``A<X>`` (mean / adaptive threshold pruning X% of the training states), ``P<X>`` / ``PM<X>``
    (prioritizing queue with the adaptive / mean threshold)."""
    if args.prune == "none":
        return "Base"
    letters = _PRIORITIZE_LETTERS if args.prioritize else _PRUNE_LETTERS
    return f"{letters[args.prune]}{args.threshold:g}"


def _check_search_args(args: Args) -> None:
    confidence_aware = not _on_the_engine(args.search, args.prune != "none") or args.prioritize
    if confidence_aware and args.run is None:
        raise ConfigError("--search dual, --prune and --prioritize need a learned heuristic (--run)")
    if args.prune != "none" and args.search not in CONFIDENCE_AWARE:
        raise ConfigError(f"--prune works with --search gbfs or dual, not {args.search}")
    if (args.prune == "none") != (args.threshold is None):
        raise ConfigError("--prune mean|adaptive and --threshold X go together")
    if args.prioritize and (args.search != "dual" or args.prune == "none"):
        raise ConfigError("--prioritize needs --search dual and the threshold of --prune mean|adaptive")
    if args.grounding == "lifted" and (args.search != "gbfs" or args.prune != "none"):
        raise ConfigError("--grounding lifted searches with plain GBFS (--search gbfs, no --prune)")
    if args.memory_limit is not None and confidence_aware:
        raise ConfigError("--memory-limit bounds the engine's searches: not --search dual or --prune")


def _process_memory_limit(args: Args) -> float | None:
    """Each search process's memory limit in MB: ``--memory-limit``, or locally the worker
    processes' share of the default (`pddlgym_sl.memory.default_memory_limit`); None on Ray, whose
    workers take their share of their own node's (`_share_of_memory`). Results record the limit
    their search had."""
    if args.memory_limit is not None:
        return args.memory_limit
    if args.backend == "local" and _on_the_engine(args.search, args.prune != "none"):
        from pddlgym_sl.memory import default_memory_limit

        return default_memory_limit() / args.jobs / 2**20
    return None


def _check_known_split(domain: str, split: str, data: Path | None) -> None:
    """`ConfigError` saying what to pass when neither the dataset nor the bundled domains have the
    split's problems (a run of one's own domain, evaluated on the default ``--split plan``)."""
    if domain in domains.DOMAIN_NAMES or (data is not None and problem_dir_files(data / domain / split)):
        return
    root = data / domain if data is not None else None
    have = sorted(p.name for p in root.iterdir() if problem_dir_files(p)) if root and root.is_dir() else []
    splits = f" (its dataset has: --split {', '.join(have)})" if have else ""
    where = f"{root / split / 'problems'} holds no problems" if root else "no dataset (--data) was given"
    raise ConfigError(
        f"domain {domain!r} is not a built-in one ({', '.join(domains.DOMAIN_NAMES)}) and {where}: "
        f"pass --tasks DIR (a directory of its task files) or --split of its dataset{splits}"
    )


def evaluate(args: Args) -> dict[str, Any]:
    """Run the evaluation described by `args`; return the summary (also written to disk)."""
    import torch

    from agents.confidence import refresh_run_confidence, run_threshold
    from agents.training.records import run_args

    if (args.run is None) == (args.heuristic is None):
        raise ConfigError("give exactly one of --run and --heuristic")
    _check_search_args(args)
    record: Any = None
    if args.run is not None:
        if not (args.run / "model.json").exists():
            raise ConfigError(f"{args.run} is not a trained run (no model.json)")
        record = run_args(args.run)[1]
    width = lockstep_width(args, record.model if record is not None else None)
    domain = args.domain or (record.domain if record is not None else None)
    data = args.data or (record.data if record is not None else None)
    split = args.split
    if args.tasks is not None:
        domain_file = given_domain_file(args.tasks, args.domain_file, None)
        files = spread(
            list(resolve_problems(problems=args.tasks, domain_file=domain_file).files), args.problems
        )
        split = args.tasks.resolve().name
        domain = domain or domain_file.resolve().parent.name
    elif domain is None:
        raise ConfigError("--domain is needed with --heuristic")
    else:
        _check_known_split(domain, split, data)
        files = spread(problem_files(domain, split, data), args.problems)
        domain_file = (data / domain / split / "domain.pddl") if data is not None else None
        if domain_file is None or not domain_file.is_file():
            domain_file = domains.domain_file(domain)
    if args.confidence and args.run is not None:
        refresh_run_confidence(args.run, args.device)
    label = config_label(args)
    options = SearchOptions(
        args.limit, memory_limit=_process_memory_limit(args), covers_grounding=args.limits_cover_grounding,
        grounding=args.grounding,
    )  # fmt: skip
    if args.prune != "none":
        options = replace(options, threshold=run_threshold(args.run, args.prune, args.threshold, args.device))
        options = replace(options, prioritize=args.prioritize)
    if (args.search, label) == ("gbfs", "Base"):
        suffix = ""
    elif args.search in CONFIDENCE_AWARE:
        suffix = f"-{args.search}-{label}"
    else:
        suffix = f"-{args.search}"
    if args.out is not None:
        out = args.out
    elif args.run is not None:
        bound = "" if args.search_bound == "trained" else f"-bound-{args.search_bound}"
        out = args.run / "eval" / (split + ("-clip" if args.clip else "") + bound + suffix)
    else:
        out = Path("runs") / "baselines" / f"{domain}__{args.heuristic}" / "eval" / (split + suffix)
    (out / "problems").mkdir(parents=True, exist_ok=True)
    remove_orphaned_temporaries(out)  # what a run killed mid-write left
    pending = [f for f in files if not _finished(out / "problems" / f"{f.stem}.json", args)]

    backend = Backend(args.backend, args.jobs, args.address)
    threads = torch.get_num_threads() if (backend.kind, backend.jobs) == ("local", 1) else 1
    init = (
        str(args.run) if args.run else None,
        args.heuristic,
        args.clip,
        args.device,
        threads,
        args.search,
        options,
        args.compiled and args.search != "dual" and args.prune == "none",  # dual / prune: confidences
        args.search_bound,
    )
    bar = tqdm(
        total=len(files),
        initial=len(files) - len(pending),
        desc=f"{args.search} {domain}/{args.split}",
        unit="problem",
        disable=args.quiet,
        dynamic_ncols=True,
    )
    start = time.perf_counter()

    def keep(unit: Unit | None, result: dict[str, Any]) -> None:
        atomic_write_json(out / "problems" / f"{Path(result['problem']).stem}.json", result)
        bar.update(1)

    try:
        if width > 1:  # several searches in this process, one forward pass per round
            _init_worker(*init)
            names = [str(f) for f in pending]
            for result in _solve_lockstep(str(domain_file), names, args.limit, args.time_limit, width):
                keep(None, result)
        else:  # one problem per unit: in this process (--jobs 1), local worker processes, or Ray tasks
            if pending and (backend.kind != "local" or backend.jobs > 1):
                _compile_once(init, str(domain_file), str(pending[0]))
            units = [Unit(str(f), (str(domain_file), str(f), args.limit, args.time_limit)) for f in pending]
            run_units(_solve, units, backend, on_result=keep, initializer=_init_worker, initargs=init)
    except KeyboardInterrupt as exc:
        done = sum(_finished(out / "problems" / f"{f.stem}.json", args) for f in files)
        note_kept(exc, f"{done} of {len(files)} problems are evaluated, kept in {out / 'problems'}")
        raise
    finally:
        bar.close()
    results = [json.loads((out / "problems" / f"{f.stem}.json").read_text()) for f in files]
    earlier = _earlier_wall_seconds(out / "summary.json") if len(pending) < len(files) else 0.0
    summary = {
        "run": str(args.run) if args.run else None,
        "heuristic": args.heuristic or ("learned+clip" if args.clip else "learned"),
        "domain": domain,
        "split": split,
        "clip": args.clip,
        **({"search_bound": args.search_bound} if args.run is not None else {}),
        "search": args.search,
        "config": label,
        "time_limit": args.time_limit,
        "lockstep": width,
        **summarize(results, args.limit),
        "wall_seconds": round(earlier + time.perf_counter() - start, 2),
    }
    atomic_write_json(out / "summary.json", summary)
    return summary


def _earlier_wall_seconds(path: Path) -> float:
    """The wall-clock seconds an earlier run of a resumed evaluation recorded (0 when it wrote no
    summary): a resumed evaluation's ``wall_seconds`` sums the runs that did its work, so that
    resuming a finished one does not reset it."""
    try:
        value = json.loads(path.read_text()).get("wall_seconds", 0.0)
    except (OSError, ValueError, AttributeError):
        return 0.0
    return float(value) if isinstance(value, (int, float)) else 0.0


def run_accuracy(args: Args) -> dict[str, float]:
    """``--accuracy``: the run's accuracy on the split it tested on (`accuracy`), written to
    ``<run>/eval/accuracy.json``; `ConfigError` when there is no run or no test split."""
    from agents.training.records import run_args

    if args.run is None or not (args.run / "model.json").exists():
        raise ConfigError("--accuracy needs a trained run: --run DIR (with model.json)")
    record = run_args(args.run)[1]
    data, domain = args.data or record.data, args.domain or record.domain
    split = getattr(record, "test_split", "test")  # the split its training tested on
    if data is None or not (data / domain / split).is_dir():
        where = data / domain / split if data is not None else "its dataset (the run records none)"
        raise ConfigError(
            f"--accuracy needs the test split of the run's data: {where} is missing (--data DIR)"
        )
    metrics = accuracy(args.run, data, domain, args.device, split)
    atomic_write_json(args.run / "eval" / "accuracy.json", metrics)
    return metrics


def accuracy(run: Path, data: Path, domain: str, device: str, split: str = "test") -> dict[str, float]:
    """Accuracy of a run's best checkpoint on a labelled split beside hFF and LM-cut (Table 1)."""
    from agents.learned_heuristic import TrainedModel
    from agents.metrics import baseline_mse, evaluate_split
    from agents.models import model_spec
    from pddlgym_sl.data.dataset import load_split

    trained = TrainedModel.load(run, device=device)
    test = load_split(data / domain / split)
    inputs = model_spec(trained.name).training_inputs(test)
    metrics = evaluate_split(trained.model, trained.head, inputs, test, resolve_device(device))
    return {
        **{f"test_{k}": v for k, v in metrics.items()},
        **{f"test_{k}": v for k, v in baseline_mse(test).items()},
    }


def run(args: Args) -> int:
    """Evaluate, then print the summary line (with --accuracy: the accuracy line, no planning)."""
    resolve_device(args.device)  # a device that is not there is refused before any work
    if args.accuracy:
        metrics = run_accuracy(args)
        print("  ".join(f"{k.removeprefix('test_')} {v:.4g}" for k, v in metrics.items()))
        return 0
    s = evaluate(args)
    on_solved = "–" if s["mean_evaluations_solved"] is None else f"{s['mean_evaluations_solved']:.0f}"
    if args.time_limit is None:  # Table 2's mean: an unsolved problem counts the evaluation limit
        mean = s["mean_evaluations"]
        means = f"mean evaluations {mean:.0f} (limit {s['limit']}; solved problems: {on_solved})"
    else:  # the limit is time: counting unsolved problems at --limit would be meaningless
        means = f"mean evaluations on solved problems {on_solved} (time limit {args.time_limit:g} s)"
    print(
        f"{s['domain']}/{s['split']} {s['heuristic']}: coverage {s['coverage']:.2f} "
        f"({s['solved']}/{s['problems']}), {means}, {s['wall_seconds']:.1f}s"
    )
    return 0


COMMAND = Command(
    "python -m agents.evaluate",
    tyro_parse(Args, __doc__),
    run,
    extra="learn",
    interrupt=lambda args: "evaluated problems are kept",
)


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
