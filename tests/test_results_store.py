"""``experiments.results_store`` keeps an experiment's finished units in a tracked folder and puts
them back on a fresh checkout, so that the resumed labels and sweep redo nothing."""

from __future__ import annotations

import json
from pathlib import Path

import domains
from experiments import results_store
from pddlgym_sl.data.build import build_split
from pddlgym_sl.data.solve import SolveConfig

FERRY = domains.domain_file("ferry")


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


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
    assert _files(store) == {
        *(run + n for n in ("args.json", "model.json", "metrics.json", "best.safetensors")),
        run + "eval/plan/summary.json",
        run + "eval/plan/problems/p1.json",
        "runs/baselines/ferry__hff/eval/plan/problems/p1.json",
        "runs/ferry-hff/eval/testing-easy/problems/p01.json",
        "runs/report/table1.md",
    }
    assert results_store.save(store, out=tmp_path / "runs") == 0  # nothing new: nothing copied
    (tmp_path / "runs" / run.split("/")[1] / "metrics.json").write_text('{"mse": 1}')
    assert results_store.save(store, out=tmp_path / "runs") == 1


def test_restored_labels_resume_without_solving_and_leave_newer_files_alone(tmp_path, monkeypatch):
    specs = domains.split_specs("ferry", "train")[:3]
    first = tmp_path / "first" / "ferry" / "train"
    build_split("ferry", FERRY, "train", specs, first, SolveConfig(time_limit=60), progress=False)
    store = tmp_path / "store"
    results_store.save(store, data=tmp_path / "first")
    assert {p.split("/")[-2] for p in _files(store / "data")} == {"train", "records", "labels", "problems"}

    fresh = tmp_path / "fresh"
    newer = json.dumps({"core_version": 2, "note": "newer than the store's"})
    _write(fresh / "ferry" / "train" / "manifest.json", newer)
    restored = results_store.restore(store, data=fresh)
    assert restored == len(_files(store / "data")) - 1
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
