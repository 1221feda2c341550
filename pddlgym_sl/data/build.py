"""Build a labelled split: solve every slot (in parallel: `pddlgym_sl.parallel`), then write the manifest.

Layout of a split directory ``<root>/<domain>/<split>/``::

    problems/<file>.pddl     the solved problems (the attempt that succeeded)
    labels/<slot>.npz        labelled plan states (format: `pddlgym_sl.data.labels`)
    records/<slot>.json      one record per finished slot, solved or failed
    manifest.json            solver, limits, generator parameters and every record (and "upper":
                             how the optional upper bounds were made, `pddlgym_sl.data.upper`)
    labels.npz               all labels of the split in one file, for fast loading
    domain.pddl              a copy of the domain file (the split is self-contained)

Every run also gives label files of an older format (`pddlgym_sl.data.labels.LABEL_FORMAT`:
format 1 had no siblings) what the current format adds, from their stored plans.

Resumable: slots with a record are skipped, so re-running after a crash, Ctrl-C or ``kill -9``
finishes the split without redoing or duplicating work; every file is written atomically. A slot
is a unit of `pddlgym_sl.parallel.run_units`: solved in this process (``jobs`` 1), in local worker
processes, or on a Ray cluster (``backend="ray"``), which writes the same files. A split made by
another core version (`pddlgym_sl.task.CORE_VERSION`) is never resumed into: `build_split` refuses
it unless asked to rebuild it from scratch.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

import domains
from domains import ProblemSpec
from pddlgym_sl import __version__
from pddlgym_sl.data.dataset import CONSOLIDATED, consolidate
from pddlgym_sl.data.labels import LABEL_FORMAT, LABEL_KINDS, add_siblings, check_core, heuristic_values
from pddlgym_sl.data.solve import SEED_STRIDE, SolveConfig, slot_name, solve_slot
from pddlgym_sl.data.upper import add_upper
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.fd import fast_downward_version
from pddlgym_sl.io import atomic_write_bytes, atomic_write_json, exclusive_lock, remove_orphaned_temporaries
from pddlgym_sl.parallel import Backend, Unit, run_units
from pddlgym_sl.parallel.interrupt import note_kept
from pddlgym_sl.task import CORE_VERSION, load_task

MANIFEST_FORMAT = "pddlgym-sl-labels/1"
_SPLIT_CONTENTS = ("problems", "labels", "records", "scratch", "manifest.json", CONSOLIDATED)


def read_records(split_dir: Path) -> dict[str, dict[str, Any]]:
    """Finished slots of a split directory: slot name -> record."""
    records = {}
    for path in sorted((split_dir / "records").glob("*.json")):
        records[path.stem] = json.loads(path.read_text())
    return records


def _stale_core(split_dir: Path) -> int | None:
    """The core version of a split directory made by another core, or None when it is current
    (or empty). Records and manifests without a version come from core version 1."""
    manifest = split_dir / "manifest.json"
    versions = {r.get("core", 1) for r in read_records(split_dir).values()}
    if manifest.is_file():
        versions.add(json.loads(manifest.read_text()).get("core_version", 1))
    stale = versions - {CORE_VERSION}
    return min(stale) if stale else None


def build_split(
    domain: str,
    domain_file: Path,
    split: str,
    slots: Sequence[ProblemSpec | Path],
    split_dir: Path,
    config: SolveConfig,
    jobs: int = 1,
    progress: bool = True,
    rebuild: bool = False,
    upper: bool = False,
    stop_after: int | None = None,
    backend: str = "local",
    address: str | None = None,
) -> dict[str, Any]:
    """Solve and label every slot not yet finished in `split_dir`; write and return the manifest.

    A `split_dir` made by another core version raises `StaleLabelsError`; with `rebuild`, its
    contents are deleted first and the split is built from scratch. With `upper`, every labelled
    state also gets its upper bound u (`pddlgym_sl.data.upper`; resumable, computed once). With
    `stop_after`, slots (taken in order, as sizes grow) stop being attempted after that many
    consecutive failures, counting the failures of earlier runs, so a resumed run stops where an
    uninterrupted one does. `backend` (``local`` or ``ray``, with `address`) and `jobs` say where
    the slots are solved (`pddlgym_sl.parallel`); with ``ray`` every node must see `split_dir`
    at the same path, as the workers write the slots' files there."""
    if stop_after is not None and (stop_after < 1 or jobs > 1 or backend != "local"):
        raise ConfigError(
            "stop_after must be at least 1, and it needs jobs=1 and the local backend "
            "(slots are tried in order)"
        )
    split_dir.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(split_dir / ".lock", f"the split {split_dir}"):  # one builder per split
        stale = _stale_core(split_dir)
        if stale is not None:
            if not rebuild:
                check_core(stale, split_dir)
            for name in _SPLIT_CONTENTS:
                path = split_dir / name
                if path.is_dir():
                    shutil.rmtree(path)
                elif path.exists():
                    path.unlink()
        remove_orphaned_temporaries(split_dir)  # what workers killed mid-write left
        atomic_write_bytes(split_dir / "domain.pddl", Path(domain_file).read_bytes())  # self-contained split
        started = time.time()
        done = read_records(split_dir)
        pending = [s for s in slots if slot_name(s) not in done]
        bar = tqdm(
            total=len(slots),
            initial=len(slots) - len(pending),
            desc=f"{domain}/{split}",
            unit="problem",
            disable=not progress,
            dynamic_ncols=True,
        )
        counts = {"solved": sum(r["status"] == "solved" for r in done.values())}
        counts["failed"] = len(done) - counts["solved"]
        records = dict(done)

        def keep_going() -> bool:
            if stop_after is not None and _failure_run(slots, records) >= stop_after:
                bar.set_description(f"{domain}/{split} (stopped after {stop_after} failures in a row)")
                return False
            return True

        def finished(unit: Unit, record: dict[str, Any]) -> None:
            records[record["slot"]] = record
            counts[record["status"]] += 1
            bar.update(1)
            bar.set_postfix(counts)

        where = Backend(backend, jobs, address)
        units = [Unit(slot_name(s), (s, domain_file, split_dir, config)) for s in pending]
        try:
            if where.kind == "ray" or where.jobs > 1:
                _compile_kernels()
            run_units(_solve, units, where, on_result=finished, keep_going=keep_going)
        except KeyboardInterrupt as exc:
            n = len(read_records(split_dir))
            note_kept(
                exc, f"{n} of {len(slots)} problems of {domain}/{split} are finished, kept in {split_dir}"
            )
            raise
        finally:
            bar.close()
        _add_missing_siblings(split_dir, progress)
        seconds = time.time() - started if pending else None  # a run with nothing to do is not recorded
        manifest = write_manifest(domain, domain_file, split, slots, split_dir, config, seconds)
        if manifest["summary"]["solved"]:
            consolidate(split_dir)
            if upper:
                manifest["upper"] = add_upper(split_dir, progress=progress)
        return manifest


def _add_missing_siblings(split_dir: Path, progress: bool) -> int:
    """Upgrade the split's label files of format 1 (plan states only) with their siblings, from
    their stored plans (no solving); return how many were upgraded."""
    old = []
    for path in sorted((split_dir / "labels").glob("*.npz")):
        with np.load(path, allow_pickle=False) as z:
            if "sibling_states" not in z.files:
                old.append((path, str(z["problem"])))
    for path, problem in tqdm(old, desc="siblings", unit="problem", disable=not progress or not old):
        add_siblings(path, load_task(split_dir / "domain.pddl", split_dir / "problems" / problem))
    return len(old)


def _failure_run(slots: Sequence[ProblemSpec | Path], records: dict[str, dict[str, Any]]) -> int:
    """Consecutive failures at the end of the finished prefix of `slots`."""
    run = 0
    for slot in slots:
        record = records.get(slot_name(slot))
        if record is None:
            break
        run = run + 1 if record["status"] == "failed" else 0
    return run


def _solve(
    slot: ProblemSpec | Path, domain_file: Path, split_dir: Path, config: SolveConfig
) -> dict[str, Any]:
    """`solve_slot`, with any unexpected exception (a bug in a library on an odd task) recorded as a
    failure of that slot instead of ending the split."""
    try:
        return solve_slot(slot, domain_file, split_dir, config)
    except Exception as exc:  # one odd task must never end the split
        record = {
            "slot": slot_name(slot),
            "status": "failed",
            "failures": [
                {"seed": None, "problem": str(slot), "reason": f"crash: {type(exc).__name__}: {exc}"}
            ],
            "retries": 1,
            "core": CORE_VERSION,
        }
        atomic_write_json(split_dir / "records" / f"{slot_name(slot)}.json", record)
        return record


def _compile_kernels() -> None:
    """Compile (and cache on disk) the labelling kernels once here, so that the worker processes
    load them from numba's cache instead of each compiling them at the same time."""
    with tempfile.TemporaryDirectory() as tmp:
        problem = Path(tmp) / "warm-up.pddl"
        problem.write_text(domains.generate_problem("ferry", seed=1, locations=2, cars=2))
        task = load_task(domains.domain_file("ferry"), problem)
        heuristic_values(task, task.states_to_array([task.init]).copy())


def write_manifest(
    domain: str,
    domain_file: Path,
    split: str,
    slots: Sequence[ProblemSpec | Path],
    split_dir: Path,
    config: SolveConfig,
    run_seconds: float | None,
) -> dict[str, Any]:
    """Assemble ``manifest.json`` from the records of `slots` (atomic write); `run_seconds` is the
    run's entry in ``runs``, None for a run that found every slot finished (it adds none)."""
    records = read_records(split_dir)
    ordered = [records[slot_name(s)] for s in slots if slot_name(s) in records]
    solved = [r for r in ordered if r["status"] == "solved"]
    path = split_dir / "manifest.json"
    previous = json.loads(path.read_text()) if path.is_file() else {}
    runs = previous.get("runs", [])
    if run_seconds is not None:
        runs.append({"finished": time.strftime("%Y-%m-%dT%H:%M:%S"), "seconds": round(run_seconds, 2)})
    manifest = {
        "format": MANIFEST_FORMAT,
        "pddlgym_sl_version": __version__,
        "core_version": CORE_VERSION,
        "label_format": LABEL_FORMAT,
        "label_kind": LABEL_KINDS[0] if config.optimal else LABEL_KINDS[1],
        "domain": domain,
        "domain_file": str(domain_file),
        "split": split,
        "solver": {
            "planner": "fast-downward",
            "version": fast_downward_version(),
            "search": config.search,
            "time_limit_s": config.time_limit,
            "memory_limit_mb": config.memory_limit_mb,
            "retries": config.retries,
            "seed_stride": SEED_STRIDE,
        },
        "summary": {
            "slots": len(slots),
            "finished": len(ordered),
            "solved": len(solved),
            "failed": len(ordered) - len(solved),
            "states": sum(r["n_states"] for r in solved),
            "retries": sum(r.get("retries", 0) for r in ordered),
            "solver_seconds": round(
                sum(a.get("solver_seconds", 0.0) for r in ordered for a in r["failures"])
                + sum(r["solver_seconds"] for r in solved),
                2,
            ),
            "label_seconds": round(sum(r["label_seconds"] for r in solved), 2),
        },
        "runs": runs,
        "problems": ordered,
        **({"upper": previous["upper"]} if "upper" in previous else {}),
    }
    atomic_write_json(split_dir / "manifest.json", manifest)
    return manifest
