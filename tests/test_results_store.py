"""``experiments.results_store`` keeps an experiment's finished units in a tracked folder and puts
them back on a fresh checkout, so that the resumed labels and sweep redo nothing."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

import domains
from experiments import results_store
from pddlgym_sl.data.build import build_split
from pddlgym_sl.data.solve import SolveConfig

FERRY = domains.domain_file("ferry")


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def _stored(store: Path) -> set[str]:
    """What a store keeps, as the paths the plain layout had (``runs/<run>/...``, ``data/...``)."""
    return {f"{area}/{path}" for area in results_store.AREAS for path in results_store.read_area(store, area)}


def _write(path: Path, text: str = "{}") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _runs(out: Path) -> None:
    """A finished run, an unfinished one, a baseline, a heuristic's evaluation outside any training
    run (`experiments/ipc23_lt.py`'s ``<domain>-hff``), the report and the sweep's logs."""
    done = out / "ferry__nlm__tn__learn__hff__s0"
    for name in ("args.json", "model.json", "metrics.json", "eval/plan/summary.json"):
        _write(done / name)
    _write(done / "eval" / "plan" / "problems" / "p1.json")
    for name in ("best.safetensors", "last.pt", "events.out.tfevents.1"):
        _write(done / name, "weights")
    _write(out / "ferry__nlm__n__fixed__none__s0" / "args.json")
    _write(out / "ferry__nlm__n__fixed__none__s0" / "best.safetensors", "weights")
    _write(out / "baselines" / "ferry__hff" / "eval" / "plan" / "problems" / "p1.json")
    _write(out / "ferry-hff" / "eval" / "testing-easy" / "problems" / "p01.json")
    _write(out / "report" / "table1.md", "| table |")
    _write(out / "logs" / "job.log", "progress")


def test_finished_runs_are_kept_without_events_checkpoints_or_logs(tmp_path):
    _runs(tmp_path / "runs")
    store = tmp_path / "store"
    assert results_store.save(store, out=tmp_path / "runs") == 9
    run = "runs/ferry__nlm__tn__learn__hff__s0/"
    assert _stored(store) == {
        *(run + n for n in ("args.json", "model.json", "metrics.json", "best.safetensors")),
        run + "eval/plan/summary.json",
        run + "eval/plan/problems/p1.json",
        "runs/baselines/ferry__hff/eval/plan/problems/p1.json",
        "runs/ferry-hff/eval/testing-easy/problems/p01.json",
        "runs/report/table1.md",
    }
    packs = {p: p.stat().st_mtime_ns for p in store.rglob("*.jsonl")}
    assert len(packs) == 4 and len(_files(store)) == 4  # one pack per run folder, not one file per file
    assert results_store.save(store, out=tmp_path / "runs") == 0  # nothing new: nothing copied
    assert {p: p.stat().st_mtime_ns for p in store.rglob("*.jsonl")} == packs  # nor rewritten
    (tmp_path / "runs" / run.split("/")[1] / "metrics.json").write_text('{"mse": 1}')
    assert results_store.save(store, out=tmp_path / "runs") == 1


def test_restored_labels_resume_without_solving_and_leave_newer_files_alone(tmp_path, monkeypatch):
    specs = domains.split_specs("ferry", "train")[:3]
    first = tmp_path / "first" / "ferry" / "train"
    build_split("ferry", FERRY, "train", specs, first, SolveConfig(time_limit=60), progress=False)
    store = tmp_path / "store"
    results_store.save(store, data=tmp_path / "first")
    assert {p.split("/")[-2] for p in _stored(store)} == {"train", "records", "labels", "problems"}
    assert _files(store) == {"data/ferry.jsonl"}

    fresh = tmp_path / "fresh"
    newer = json.dumps({"core_version": 2, "note": "newer than the store's"})
    _write(fresh / "ferry" / "train" / "manifest.json", newer)
    restored = results_store.restore(store, data=fresh)
    assert restored == len(_stored(store)) - 1
    assert (fresh / "ferry" / "train" / "manifest.json").read_text() == newer

    def no_solver(*args, **kwargs):
        raise AssertionError("a restored slot was solved again")

    monkeypatch.setattr("pddlgym_sl.data.solve.run_fast_downward", no_solver)
    again = fresh / "ferry" / "train"
    manifest = build_split("ferry", FERRY, "train", specs, again, SolveConfig(), progress=False)
    assert manifest["summary"]["solved"] == 3 and manifest["summary"]["failed"] == 0
    for record in (first / "records").glob("*.json"):
        assert json.loads(record.read_text()) == json.loads((again / "records" / record.name).read_text())
    assert (again / "labels.npz").is_file()


def test_a_pack_round_trips_text_and_binary_files_byte_for_byte(tmp_path):
    """Text is kept as text (readable diffs), other bytes as base64; both come back unchanged, and
    a changed file replaces its line instead of adding one."""
    out = tmp_path / "runs"
    run = out / "r"
    _write(run / "metrics.json", '{"mse": 0.5, "note": "σ ≥ 0"}')
    (run / "best.safetensors").write_bytes(bytes(range(256)))
    results_store.save(tmp_path / "store", out=out)
    pack = tmp_path / "store" / "runs" / "r.jsonl"
    lines = pack.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["path"] for x in lines] == ["r/best.safetensors", "r/metrics.json"]
    assert "base64" in json.loads(lines[0]) and json.loads(lines[1])["text"].endswith('σ ≥ 0"}')
    (run / "metrics.json").write_text('{"mse": 0.25}')
    assert results_store.save(tmp_path / "store", out=out) == 1
    assert len(pack.read_text(encoding="utf-8").splitlines()) == 2
    fresh = tmp_path / "fresh"
    assert results_store.restore(tmp_path / "store", out=fresh) == 2
    assert (fresh / "r" / "best.safetensors").read_bytes() == bytes(range(256))
    assert (fresh / "r" / "metrics.json").read_text() == '{"mse": 0.25}'


def test_converting_a_plain_store_keeps_every_file(tmp_path):
    """`convert_to_packs` turns the layout before packs (one file per finished file) into packs,
    removing the plain files: the same paths and bytes come back, and a README beside stays."""
    _runs(tmp_path / "runs")
    plain = tmp_path / "plain"
    for path in results_store.run_files(tmp_path / "runs"):
        target = plain / "runs" / path.relative_to(tmp_path / "runs")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    _write(plain / "README.md", "what this store is")
    before = {p: (plain / p).read_bytes() for p in _files(plain)}
    assert results_store.convert_to_packs(plain) == 9
    assert _files(plain) == {
        "README.md",
        *(f"runs/{n}.jsonl" for n in ("baselines", "ferry-hff", "ferry__nlm__tn__learn__hff__s0", "report")),
    }
    after = {f"runs/{k}": v for k, v in results_store.read_area(plain, "runs").items()}
    assert after == {k: v for k, v in before.items() if k != "README.md"}


STORES = Path(__file__).resolve().parents[1] / "experiments" / "results"


def _plain_and_converted(name: str, tmp_path: Path, areas: tuple[str, ...]) -> tuple[Path, Path]:
    """A tracked store as the plain files it was before packs, and those files converted again."""
    plain = results_store.extract(STORES / name, tmp_path / "plain", areas)
    converted = tmp_path / "converted"
    for area in areas:
        shutil.copytree(plain / area, converted / area)
    results_store.convert_to_packs(converted)
    return plain, converted


@pytest.mark.slow  # 27,000 files written three times: a minute or two
def test_the_paper_stores_cells_are_the_same_from_plain_files_and_from_packs(tmp_path):
    """`experiments.paper_tables`' CSV rows of the tracked store read from plain run folders equal
    those read from the same folders converted to packs (as the tracked store was converted)."""
    from experiments.paper_tables import cell_rows

    plain, converted = _plain_and_converted("paper-v2", tmp_path, ("runs",))
    rows = cell_rows(plain / "runs")
    assert len(rows) > 50
    assert cell_rows(results_store.extract(converted, tmp_path / "again", ("runs",)) / "runs") == rows


def test_the_ipc_stores_tables_are_the_same_from_plain_files_and_from_packs(tmp_path, capsys):
    """`experiments.ipc23_lt`'s tables of the tracked store (its own protocol and sample, every
    configuration it holds) from plain folders, the layout before packs, equal those of
    ``--table-only`` on the same folders converted to packs."""
    from experiments import ipc23_lt

    if not ipc23_lt.IPC.is_dir():
        pytest.skip(f"the IPC 2023 LT tasks are not at {ipc23_lt.IPC}")
    plain, converted = _plain_and_converted("ipc-ecai25", tmp_path, results_store.AREAS)
    description = json.loads((STORES / "ipc-ecai25" / ipc23_lt.STORE_DESCRIPTION).read_text())
    (converted / ipc23_lt.STORE_DESCRIPTION).write_text(json.dumps(description))
    args = argparse.Namespace(
        domains=list(ipc23_lt.DOMAINS), protocol=ipc23_lt.PROTOCOLS[description["protocol"]],
        configs=ipc23_lt.stored_configs(plain / "runs"), sample=description["sample"], ipc=ipc23_lt.IPC,
        runs=plain / "runs", data=plain / "data", store=converted, test_sets=None,
    )  # fmt: skip
    args.test_sets = list(args.protocol.test_sets)
    ipc23_lt.print_tables(args)
    from_plain = capsys.readouterr().out
    ipc23_lt.tabulate_stores(
        argparse.Namespace(
            **{**vars(args), "protocol": None, "configs": None, "sample": None, "test_sets": None}
        )
    )
    header, from_packs = capsys.readouterr().out.split("\n", 1)
    assert header.startswith(f"# {converted}") and "| **total** |" in from_plain
    assert from_packs == from_plain


def test_forget_removes_a_folder_so_that_it_is_computed_again(tmp_path):
    """`forget` drops one evaluation's records from the store (and nothing else): restored into a
    fresh folder, that evaluation is missing and the rest is there."""
    _runs(tmp_path / "runs")
    store = tmp_path / "store"
    results_store.save(store, out=tmp_path / "runs")
    assert results_store.forget(store, "runs", "ferry-hff/eval/testing-easy") == 1
    assert not (store / "runs" / "ferry-hff.jsonl").exists()  # its only file: the pack goes
    assert results_store.forget(store, "runs", "ferry__nlm__tn__learn__hff__s0/eval/plan/") == 2
    fresh = tmp_path / "fresh"
    results_store.restore(store, out=fresh)
    assert (
        not (fresh / "ferry-hff").exists()
        and not (fresh / "ferry__nlm__tn__learn__hff__s0" / "eval").exists()
    )
    assert (fresh / "ferry__nlm__tn__learn__hff__s0" / "metrics.json").is_file()
