"""``experiments/ipc23_lt.py`` labels a domain before its first training, keeps what is finished in
its tracked store after every step, and on a fresh checkout restores it instead of training again."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from experiments import results_store

MANIFEST = '{"summary": {"slots": 1, "solved": 1, "states": 3}}'  # a finished split's, in short


@pytest.fixture
def ipc23_lt():
    from experiments import ipc23_lt

    return ipc23_lt


def _flag(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


def _fake_commands(ran: list[list[str]]):
    """Stand-ins for our commands that write what the real ones leave behind."""

    def run_command(cmd, cwd, env):
        cmd = cmd[2:]  # python -m
        ran.append(cmd)
        if cmd[0] == "pddlgym_sl.data.generate":
            for name in ("train", "val"):
                split = Path(_flag(cmd, "--out")) / "ferry" / name
                (split / "records").mkdir(parents=True, exist_ok=True)
                (split / "records" / "p01.json").write_text('{"status": "solved"}')
                (split / "labels.npz").write_bytes(b"consolidated")
                (split / "manifest.json").write_text(MANIFEST)
        elif cmd[0] == "agents.supervised":
            run = Path(_flag(cmd, "--runs")) / _flag(cmd, "--name")
            run.mkdir(parents=True)
            (run / "args.json").write_text("{}")
            (run / "best.safetensors").write_bytes(b"weights")
            (run / "metrics.json").write_text("{}")
        elif cmd[0] == "agents.evaluate":
            problems = Path(_flag(cmd, "--out")) / "problems"
            problems.mkdir(parents=True, exist_ok=True)
            (problems / "p01.json").write_text('{"solved": true, "status": "solved"}')
        return 0

    return run_command


def _run(ipc23_lt, monkeypatch, tmp_path: Path, checkout: Path, *flags: str) -> list[list[str]]:
    """Run the driver on ferry's easy set with `checkout`'s data/ and runs/; the commands it ran."""
    ran: list[list[str]] = []
    monkeypatch.setattr(ipc23_lt, "run_command", _fake_commands(ran))
    argv = [
        "ipc23_lt.py",
        "--domains",
        "ferry",
        "--test-sets",
        "testing-easy",
        "--ipc",
        str(tmp_path / "ipc"),
    ]
    argv += ["--data", str(checkout / "data"), "--runs", str(checkout / "runs"), *flags]
    monkeypatch.setattr(sys, "argv", argv)
    ipc23_lt.main()
    return ran


def test_a_fresh_checkout_resumes_from_the_store_without_training_again(ipc23_lt, monkeypatch, tmp_path):
    (tmp_path / "ipc" / "ferry").mkdir(parents=True)
    store = tmp_path / "store"

    def main(checkout: str) -> list[list[str]]:
        flags = ("--configs", "hff", "wl-rank", "--store", str(store))
        return _run(ipc23_lt, monkeypatch, tmp_path, tmp_path / checkout, *flags)

    first = main("first")
    assert [c[0] for c in first] == [
        "agents.evaluate",  # hFF
        "pddlgym_sl.data.generate",  # the labels before the first training
        "agents.supervised",
        "agents.evaluate",
    ]
    generate = first[1]
    assert _flag(generate, "--problems") == str(tmp_path / "ipc" / "ferry" / "training")
    assert _flag(generate, "--val-every") == "5" and _flag(generate, "--time-limit") == "60"
    kept = {f"{area}/{path}" for area in results_store.AREAS for path in results_store.read_area(store, area)}
    assert (store / "experiment.json").is_file()  # what --table-only reads: the protocol and sample
    assert kept == {
        *(
            f"data/ferry/{split}/{name}"
            for split in ("train", "val")
            for name in ("records/p01.json", "manifest.json")
        ),
        "runs/ferry-hff/eval/testing-easy/problems/p01.json",
        "runs/ferry-wl-rank/args.json",
        "runs/ferry-wl-rank/metrics.json",
        "runs/ferry-wl-rank/best.safetensors",
        "runs/ferry-wl-rank/eval/testing-easy/problems/p01.json",
    }

    again = main("fresh")  # a new checkout: nothing under data/ and runs/ but what the store gives back
    assert "agents.supervised" not in [c[0] for c in again]  # the restored run is finished
    assert (tmp_path / "fresh" / "runs" / "ferry-wl-rank" / "best.safetensors").read_bytes() == b"weights"


def test_labels_interrupted_before_the_val_split_ended_are_finished_before_training(
    ipc23_lt, monkeypatch, tmp_path
):
    """A stopped label command leaves the train split finished (manifest, consolidated labels) and the
    val split without its manifest; the next run labels again (resuming) before it trains."""
    (tmp_path / "ipc" / "ferry").mkdir(parents=True)
    data = tmp_path / "data"
    for split, finished in (("train", True), ("val", False)):
        (data / "ferry" / split / "records").mkdir(parents=True)
        (data / "ferry" / split / "records" / "p01.json").write_text('{"status": "solved"}')
        (data / "ferry" / split / "labels.npz").write_bytes(b"consolidated")
        if finished:
            (data / "ferry" / split / "manifest.json").write_text(MANIFEST)
    flags = ("--configs", "wl-rank", "--no-store")
    ran = _run(ipc23_lt, monkeypatch, tmp_path, tmp_path, *flags)
    assert [c[0] for c in ran] == ["pddlgym_sl.data.generate", "agents.supervised", "agents.evaluate"]
    ran = _run(ipc23_lt, monkeypatch, tmp_path, tmp_path, *flags)  # labelled and trained: only the evaluation
    assert [c[0] for c in ran] == ["agents.evaluate"]


def test_intervals_are_left_out_where_every_training_task_was_solved(ipc23_lt, tmp_path):
    """A domain whose satisficing split labelled no task (A* solved every training task) trains
    the interval configuration without ``--interval-split``, which would refuse the empty split;
    one with labelled tasks keeps it."""
    import argparse

    args = argparse.Namespace(data=tmp_path)
    for domain, solved in (("miconic", 0), ("ferry", 33)):
        (tmp_path / domain / "train-plans").mkdir(parents=True)
        (tmp_path / domain / "train-plans" / "manifest.json").write_text(
            f'{{"summary": {{"solved": {solved}}}}}'
        )
    assert "--interval-split" not in ipc23_lt.train_flags("miconic", "wl-rankmu-tn-int", args)
    kept = ipc23_lt.train_flags("ferry", "wl-rankmu-tn-int", args)
    assert _flag(kept, "--interval-split") == "train-plans"
    assert ipc23_lt.train_flags("miconic", "wl-rankmu-tn", args) == ipc23_lt.CONFIGS["wl-rankmu-tn"].train
