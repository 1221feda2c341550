"""`evaluate`: search every problem an `EvaluationConfig` names and write its records and summary.

One JSON record per problem under ``<out>/problems/`` (written atomically as each search ends;
finished problems are skipped on a re-run, so an interrupted evaluation resumes where it stopped)
and ``<out>/summary.json``. Problems are searched in this process, in local worker processes
(``jobs``) or as Ray tasks (`pddlgym_sl.parallel`), or several GBFS searches in lockstep.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from agents.evaluation.choices import (
    check_search_args,
    lockstep_width,
    process_memory_limit,
    result_directory,
)
from agents.evaluation.config import EvaluationConfig
from agents.evaluation.problems import select_problems
from agents.evaluation.records import earlier_wall_seconds, is_finished, summarize
from agents.evaluation.searches import SearchOptions, config_label
from agents.evaluation.worker import compile_once, init_worker, solve, solve_lockstep
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.io import atomic_write_json, remove_orphaned_temporaries
from pddlgym_sl.parallel import Backend, Unit, run_units
from pddlgym_sl.parallel.interrupt import note_kept

__all__ = ["evaluate"]


def evaluate(config: EvaluationConfig) -> dict[str, Any]:
    """Run the evaluation described by `config`; return the summary (also written to disk)."""
    import torch

    from agents.confidence import refresh_run_confidence, run_threshold
    from agents.training.records import run_args

    if (config.run is None) == (config.heuristic is None):
        raise ConfigError("give exactly one of --run and --heuristic")
    check_search_args(config)
    record: Any = None
    if config.run is not None:
        if not (config.run / "model.json").exists():
            raise ConfigError(f"{config.run} is not a trained run (no model.json)")
        record = run_args(config.run)[1]
    width = lockstep_width(config, record.model if record is not None else None)
    domain, split, domain_file, files = select_problems(config, record)
    if config.confidence and config.run is not None:
        refresh_run_confidence(config.run, config.device)
    options = SearchOptions(
        config.limit,
        memory_limit=process_memory_limit(config),
        covers_grounding=config.limits_cover_grounding,
        grounding=config.grounding,
        lifted_search=config.lifted_search,
    )
    if config.prune != "none":
        threshold = run_threshold(config.run, config.prune, config.threshold, config.device)
        options = replace(options, threshold=threshold, prioritize=config.prioritize)
    out = result_directory(config, domain, split)
    (out / "problems").mkdir(parents=True, exist_ok=True)
    remove_orphaned_temporaries(out)  # what a run killed mid-write left
    pending = [f for f in files if not is_finished(out / "problems" / f"{f.stem}.json", config)]

    backend = Backend(config.backend, config.jobs, config.address)
    threads = torch.get_num_threads() if (backend.kind, backend.jobs) == ("local", 1) else 1
    init = (
        str(config.run) if config.run else None,
        config.heuristic,
        config.clip,
        config.device,
        threads,
        config.search,
        options,
        config.compiled and config.search != "dual" and config.prune == "none",  # dual / prune: confidences
        config.search_bound,
    )
    bar = tqdm(
        total=len(files),
        initial=len(files) - len(pending),
        desc=f"{config.search} {domain}/{config.split}",
        unit="problem",
        disable=config.quiet,
        dynamic_ncols=True,
    )
    start = time.perf_counter()

    def keep(unit: Unit | None, result: dict[str, Any]) -> None:
        atomic_write_json(out / "problems" / f"{Path(result['problem']).stem}.json", result)
        bar.update(1)

    try:
        if width > 1:  # several searches in this process, one forward pass per round
            init_worker(*init)
            names = [str(f) for f in pending]
            for result in solve_lockstep(str(domain_file), names, config.limit, config.time_limit, width):
                keep(None, result)
        else:  # one problem per unit: in this process (--jobs 1), local worker processes, or Ray tasks
            if pending and (backend.kind != "local" or backend.jobs > 1):
                compile_once(init, str(domain_file), str(pending[0]))
            units = [
                Unit(str(f), (str(domain_file), str(f), config.limit, config.time_limit)) for f in pending
            ]
            run_units(solve, units, backend, on_result=keep, initializer=init_worker, initargs=init)
    except KeyboardInterrupt as exc:
        done = sum(is_finished(out / "problems" / f"{f.stem}.json", config) for f in files)
        note_kept(exc, f"{done} of {len(files)} problems are evaluated, kept in {out / 'problems'}")
        raise
    finally:
        bar.close()
    results = [json.loads((out / "problems" / f"{f.stem}.json").read_text()) for f in files]
    earlier = earlier_wall_seconds(out / "summary.json") if len(pending) < len(files) else 0.0
    summary = {
        "run": str(config.run) if config.run else None,
        "heuristic": config.heuristic or ("learned+clip" if config.clip else "learned"),
        "domain": domain,
        "split": split,
        "clip": config.clip,
        **({"search_bound": config.search_bound} if config.run is not None else {}),
        "search": config.search,
        "config": config_label(config),
        "time_limit": config.time_limit,
        "lockstep": width,
        **summarize(results, config.limit),
        "wall_seconds": round(earlier + time.perf_counter() - start, 2),
    }
    atomic_write_json(out / "summary.json", summary)
    return summary
