"""Keep an experiment's finished units in a folder that git tracks, and put them back on a new checkout.

A long experiment (`experiments/paper_tables.py`: tens of core-hours) outlives any one machine
only through what is committed: ``data/`` and ``runs/`` are git-ignored, so a fresh checkout
starts them empty. This module copies what is *finished* into a tracked store and restores it
before the experiment resumes, so that no finished label, training run or evaluated problem is
computed twice:

- **labels** (a split ``<data>/<domain>/<split>/``): every slot with a record, its label file and
  its problem, and the split's domain file and manifest; `pddlgym_sl.data.build` skips a slot
  that has a record;
- **runs** (``<out>/...``): every ``*.json`` of a run whose training finished (``metrics.json``)
  with its best weights (``best.safetensors``), its evaluations' per-problem results and
  summaries, and evaluations outside a training run (baselines, `experiments/ipc23_lt.py`'s hFF);
  `agents.sweep` skips a run with ``metrics.json``
  and `agents.evaluate` a problem with its result. TensorBoard events, resume checkpoints,
  logs and pid files stay behind (large, or only meaningful on the machine that wrote them).

Only files written atomically by our commands are copied, so copying while they run is safe.
A file is copied when the target lacks it or holds other bytes; nothing is ever deleted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from pddlgym_sl.io import atomic_write_bytes

RUN_FILES = ("*.json", "*.md", "*.csv", "best.safetensors")
"""What is kept of a finished run and its evaluations (relative names, matched anywhere below it)."""
SKIPPED_DIRS = frozenset({"logs", "scratch", "snapshots"})


def _copy_if_new(src: Path, dst: Path) -> bool:
    """Copy `src` to `dst` atomically (`pddlgym_sl.io.atomic_write_bytes`: its temporary names the
    writer, so two drivers may share a store) unless `dst` has the same bytes."""
    data = src.read_bytes()
    if dst.is_file() and dst.stat().st_size == len(data) and dst.read_bytes() == data:
        return False
    atomic_write_bytes(dst, data)
    return True


def label_files(data: Path) -> Iterator[Path]:
    """The finished files of every labelled split under `data` (``<domain>/<split>/records``)."""
    for records in sorted(data.glob("*/*/records")):
        split = records.parent
        for name in ("domain.pddl", "manifest.json"):
            if (split / name).is_file():
                yield split / name
        for record_file in sorted(records.glob("*.json")):
            try:
                record = json.loads(record_file.read_text())
            except (OSError, ValueError):
                continue  # not finished writing: a later save takes it
            yield record_file
            label = split / "labels" / f"{record_file.stem}.npz"
            if label.is_file():
                yield label
            problem = record.get("problem")
            if isinstance(problem, str) and (split / "problems" / problem).is_file():
                yield split / "problems" / problem


def _kept(directory: Path) -> Iterator[Path]:
    for pattern in RUN_FILES:
        for path in directory.rglob(pattern):
            relative = path.relative_to(directory).parts
            if path.is_file() and not SKIPPED_DIRS.intersection(relative):
                yield path


def run_files(out: Path) -> Iterator[Path]:
    """The finished files under a sweep's `out`: runs with ``metrics.json``, the report, and
    folders that are no training run (no ``args.json``: baselines, a heuristic's evaluations),
    whose per-problem results are final once written."""
    if not out.is_dir():
        return
    for child in sorted(out.iterdir()):
        if not child.is_dir() or child.name in SKIPPED_DIRS:
            continue
        if (child / "metrics.json").is_file() or not (child / "args.json").is_file():
            yield from sorted(_kept(child))


def save(store: Path, *, data: Path | None = None, out: Path | None = None) -> int:
    """Copy the finished labels under `data` and runs under `out` into ``store/{data,runs}``;
    returns how many files were new or changed."""
    copied = 0
    for root, name, files in ((data, "data", label_files), (out, "runs", run_files)):
        if root is None or not root.is_dir():
            continue
        for path in files(root):
            copied += _copy_if_new(path, store / name / path.relative_to(root))
    return copied


def restore(store: Path, *, data: Path | None = None, out: Path | None = None) -> int:
    """Copy what `store` holds and `data`/`out` lack back into them; returns how many files.
    A file already there is left as it is (it may be newer than the store's)."""
    copied = 0
    for root, name in ((data, "data"), (out, "runs")):
        source = store / name
        if root is None or not source.is_dir():
            continue
        for path in sorted(p for p in source.rglob("*") if p.is_file()):
            target = root / path.relative_to(source)
            if not target.exists():
                copied += _copy_if_new(path, target)
    return copied
