"""Keep an experiment's finished units in a folder that git tracks, and put them back on a new checkout.

A long experiment (`experiments.paper_tables`: tens of core-hours) outlives any one machine only
through what is committed: ``data/`` and ``runs/`` are git-ignored, so a fresh checkout starts them
empty. This module copies what is *finished* into a tracked store and restores it before the
experiment resumes, so that no finished label, training run or evaluated problem is computed twice:

- **labels** (a split ``<data>/<domain>/<split>/``): every slot with a record, its label file and
  its problem, and the split's domain file and manifest; `pddlgym_sl.data.build` skips a slot
  that has a record;
- **runs** (``<out>/...``): every ``*.json`` of a run whose training finished (``metrics.json``)
  with its best weights (``best.safetensors``), its evaluations' per-problem results and
  summaries, and evaluations outside a training run (baselines, `experiments.ipc23_lt`'s hFF);
  `agents.sweep` skips a run with ``metrics.json`` and `agents.evaluate` a problem with its
  result. TensorBoard events, resume checkpoints, logs and pid files stay behind (large, or only
  meaningful on the machine that wrote them).

The store holds a few files, not one per finished unit (tens of thousands would swamp the
repository): ``<store>/data/<domain>.jsonl`` and ``<store>/runs/<run>.jsonl``, one *pack* per
first folder below ``data`` or ``out``. A pack is JSON Lines, one line per kept file sorted by
path: ``{"path": "<relative to data or out>", "text": "..."}`` for UTF-8 text, ``"base64"``
for the rest (label arrays, weights). A save rewrites a pack atomically
(`pddlgym_sl.io.atomic_write_bytes`) only when one of its files is new or changed, so git sees
inserted lines; a crash leaves the old pack or the new one, never half of one. Files outside
``data/`` and ``runs/`` (a README, a copy of the report) stay plain files.

Only files written atomically by our commands are copied, so saving while they run is safe. A file
is packed when the pack lacks it or holds other bytes; nothing is deleted but by `forget` (a
result to be computed again, e.g. one measured while other jobs shared the machine).

    python -m experiments.results_store experiments/results/paper-v2 --into store-copy   # plain folders
    python -m experiments.results_store OLD_STORE --convert      # a store of plain files into packs
    python -m experiments.results_store STORE --forget runs/ferry-hff/eval/testing-hard   # redo it
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from pddlgym_sl.io import atomic_write_bytes

__all__ = [
    "AREAS",
    "RUN_FILES",
    "convert_to_packs",
    "extract",
    "extracted",
    "label_files",
    "read_area",
    "restore",
    "run_files",
    "save",
]

AREAS = ("data", "runs")
"""The packed parts of a store: labels (``data``) and runs with their evaluations (``runs``)."""
PACK_SUFFIX = ".jsonl"
RUN_FILES = ("*.json", "*.md", "*.csv", "best.safetensors")
"""What is kept of a finished run and its evaluations (relative names, matched anywhere below it)."""
SKIPPED_DIRS = frozenset({"logs", "scratch", "snapshots"})
TEXT_SUFFIXES = frozenset({".json", ".md", ".csv", ".pddl", ".txt"})


# ---------------------------------------------------------------- packs
def _encode(path: str, data: bytes) -> str:
    """One pack line: the file's path and its bytes (as text when it is UTF-8 text, else base64)."""
    if Path(path).suffix in TEXT_SUFFIXES:
        try:
            return json.dumps({"path": path, "text": data.decode("utf-8")}, ensure_ascii=False)
        except UnicodeDecodeError:
            pass
    return json.dumps({"path": path, "base64": base64.b64encode(data).decode("ascii")})


def _decode(line: str) -> tuple[str, bytes]:
    entry = json.loads(line)
    if "text" in entry:
        return entry["path"], entry["text"].encode("utf-8")
    return entry["path"], base64.b64decode(entry["base64"])


def read_pack(pack: Path) -> dict[str, bytes]:
    """A pack's files: relative path -> bytes (empty when the pack does not exist)."""
    if not pack.is_file():
        return {}
    with pack.open(encoding="utf-8") as lines:
        return dict(_decode(line) for line in lines if line.strip())


def _write_pack(pack: Path, files: dict[str, bytes]) -> None:
    text = "".join(_encode(path, files[path]) + "\n" for path in sorted(files))
    atomic_write_bytes(pack, text.encode("utf-8"))


def _packs(store: Path, area: str) -> list[Path]:
    return sorted((store / area).glob(f"*{PACK_SUFFIX}"))


def read_area(store: Path, area: str) -> dict[str, bytes]:
    """Every file the store keeps in `area` (``data`` or ``runs``): relative path -> bytes."""
    files: dict[str, bytes] = {}
    for pack in _packs(store, area):
        files.update(read_pack(pack))
    return files


def _pack_name(relative: str) -> str:
    """The pack a file goes to: its first folder (a domain, a run), or ``_`` for a top-level file."""
    parts = Path(relative).parts
    return (parts[0] if len(parts) > 1 else "_") + PACK_SUFFIX


def _add(store: Path, area: str, files: Iterable[tuple[str, bytes]]) -> int:
    """Put `files` into the area's packs; rewrite only the packs that change. How many were new or
    changed."""
    by_pack: dict[str, list[tuple[str, bytes]]] = {}
    for relative, data in files:
        by_pack.setdefault(_pack_name(relative), []).append((relative, data))
    changed = 0
    for name, entries in by_pack.items():
        pack = store / area / name
        held = read_pack(pack)
        new = {path: data for path, data in entries if held.get(path) != data}
        if new:
            _write_pack(pack, {**held, **new})
            changed += len(new)
    return changed


# ---------------------------------------------------------------- what is finished
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


# ---------------------------------------------------------------- save, restore
def save(store: Path, *, data: Path | None = None, out: Path | None = None) -> int:
    """Pack the finished labels under `data` and runs under `out` into ``store/{data,runs}``;
    returns how many files were new or changed."""
    copied = 0
    for root, area, files in ((data, "data", label_files), (out, "runs", run_files)):
        if root is None or not root.is_dir():
            continue
        copied += _add(store, area, ((p.relative_to(root).as_posix(), p.read_bytes()) for p in files(root)))
    return copied


def restore(store: Path, *, data: Path | None = None, out: Path | None = None) -> int:
    """Write what `store` holds and `data`/`out` lack back into them; returns how many files.
    A file already there is left as it is (it may be newer than the store's)."""
    copied = 0
    for root, area in ((data, "data"), (out, "runs")):
        if root is None:
            continue
        for relative, content in sorted(read_area(store, area).items()):
            target = root / relative
            if not target.exists():
                atomic_write_bytes(target, content)
                copied += 1
    return copied


def forget(store: Path, area: str, prefix: str) -> int:
    """Remove from the store's `area` every file whose path starts with `prefix` (a folder: ``run/eval/
    set``), so that the experiment computes it again once it is also gone from its working folders;
    returns how many files were removed."""
    prefix = prefix.rstrip("/") + "/"
    removed = 0
    for pack in _packs(store, area):
        held = read_pack(pack)
        kept = {path: data for path, data in held.items() if not path.startswith(prefix)}
        if len(kept) < len(held):
            removed += len(held) - len(kept)
            if kept:
                _write_pack(pack, kept)
            else:
                pack.unlink()
    return removed


def extract(store: Path, target: Path, areas: Iterable[str] = AREAS) -> Path:
    """Write the store's `areas` as plain folders under `target` (``target/data``, ``target/runs``),
    replacing what was there: what a table reads. Returns `target`."""
    for area in areas:
        shutil.rmtree(target / area, ignore_errors=True)
    restore(store, **{"data" if a == "data" else "out": target / a for a in areas})
    return target


@contextlib.contextmanager
def extracted(store: Path, areas: Iterable[str] = AREAS) -> Iterator[Path]:
    """The store's `areas` as plain folders in a temporary directory (``<dir>/data``, ``<dir>/runs``),
    removed on exit: what a table of the tracked store reads."""
    with tempfile.TemporaryDirectory() as tmp:
        yield extract(store, Path(tmp), areas)


def convert_to_packs(store: Path) -> int:
    """Turn a store of plain files (``store/data/<domain>/...``, ``store/runs/<run>/...``, the layout
    before packs) into packs, deleting the files it packed; returns how many files it packed."""
    packed = 0
    for area in AREAS:
        root = store / area
        if not root.is_dir():
            continue
        plain = sorted(p for p in root.rglob("*") if p.is_file() and p.parent != root)
        packed += _add(store, area, ((p.relative_to(root).as_posix(), p.read_bytes()) for p in plain))
        for path in plain:
            path.unlink()
        for folder in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
            folder.rmdir()
    return packed


def build_parser() -> argparse.ArgumentParser:
    """The command line (what ``--help`` shows; the docs' commands are checked against it)."""
    parser = argparse.ArgumentParser(description="Extract a results store's packs, or convert a plain store.")
    parser.add_argument("store", type=Path)
    parser.add_argument("--into", type=Path, help="write the store's data/ and runs/ as plain folders here")
    parser.add_argument("--convert", action="store_true", help="turn the store's plain files into packs")
    parser.add_argument(
        "--forget", metavar="AREA/FOLDER", help="remove a folder's files (runs/<run>/eval/<set>)"
    )
    return parser


def main() -> None:
    parser = build_parser()
    args = parser.parse_args()
    if sum((args.into is not None, args.convert, args.forget is not None)) != 1:
        parser.error("give one of --into DIR, --convert and --forget AREA/FOLDER")
    if args.forget is not None:
        area, _, folder = args.forget.partition("/")
        if area not in AREAS or not folder:
            parser.error(f"--forget takes {' or '.join(AREAS)}/FOLDER, not {args.forget!r}")
        print(f"forgot {forget(args.store, area, folder)} files of {args.forget} in {args.store}")
    elif args.convert:
        print(f"packed {convert_to_packs(args.store)} files in {args.store}")
    else:
        target = extract(args.store, args.into)
        print(f"extracted {args.store} into {target / 'data'} and {target / 'runs'}")


if __name__ == "__main__":
    main()
