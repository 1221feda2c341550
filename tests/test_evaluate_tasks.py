"""``python -m agents.evaluate --tasks DIR``: planning on a directory of given test tasks (the IPC
2023 Learning Track's), with a time limit per search; a task that cannot be loaded is a recorded
failure."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import domains
from agents.apps.evaluate import main as evaluate_main
from agents.evaluation import EvaluationConfig as Args
from agents.evaluation import evaluate

IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"
ROOT = Path(__file__).resolve().parents[1]


def _ipc_tables(*flags: str) -> str:
    """What ``python -m experiments.ipc23_lt --table-only FLAGS`` prints (run from the checkout's root)."""
    import subprocess

    cmd = [sys.executable, "-m", "experiments.ipc23_lt", "--table-only", *flags]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _tasks(tmp_path: Path) -> Path:
    tasks = tmp_path / "mytasks"
    tasks.mkdir()
    shutil.copy(domains.domain_file("ferry"), tasks / "domain.pddl")
    for k in (1, 2):
        (tasks / f"p{k}.pddl").write_text(domains.generate_problem("ferry", seed=k, locations=3, cars=2))
    return tasks


def test_a_directory_of_tasks_with_its_domain_file(tmp_path):
    tasks = _tasks(tmp_path)
    (tasks / "p3.pddl").write_text("(define (problem broken) (:domain ferry) (:objects")
    out = tmp_path / "out"
    summary = evaluate(Args(heuristic="hff", tasks=tasks, out=out, quiet=True, time_limit=30.0))
    assert (summary["domain"], summary["split"], summary["problems"], summary["solved"]) == (
        "mytasks",
        "mytasks",
        3,
        2,
    )
    assert summary["time_limit"] == 30.0
    broken = json.loads((out / "problems" / "p3.json").read_text())
    assert not broken["solved"] and broken["status"].startswith("error:") and "p3.pddl" in broken["status"]
    first = json.loads((out / "problems" / "p1.json").read_text())
    assert first["time_limit"] == 30.0 and first["load_seconds"] >= 0
    # a re-run under another time limit evaluates again; under the same one it skips
    (out / "problems" / "p1.json").write_text(json.dumps({**first, "evaluations": -1}))
    evaluate(Args(heuristic="hff", tasks=tasks, out=out, quiet=True, time_limit=30.0))
    assert json.loads((out / "problems" / "p1.json").read_text())["evaluations"] == -1
    evaluate(Args(heuristic="hff", tasks=tasks, out=out, quiet=True, time_limit=20.0))
    assert json.loads((out / "problems" / "p1.json").read_text())["evaluations"] > 0


def test_a_search_stopped_by_the_time_limit_is_unsolved(tmp_path):
    tasks = tmp_path / "big"
    tasks.mkdir()
    (tasks / "p.pddl").write_text(domains.generate_problem("gripper", seed=1, balls=60))
    out = tmp_path / "out"
    args = Args(
        heuristic="blind", tasks=tasks, domain_file=domains.domain_file("gripper"), out=out, quiet=True
    )
    summary = evaluate(Args(**{**vars(args), "time_limit": 0.2, "limit": 10**9}))
    result = json.loads((out / "problems" / "p.json").read_text())
    assert summary["solved"] == 0 and result["status"] == "time_limit"


@pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")
def test_the_cli_on_ipc_test_tasks(tmp_path, capsys):
    args = ["--heuristic", "hff", "--tasks", str(IPC / "ferry" / "testing-easy"), "--problems", "2"]
    assert evaluate_main([*args, "--out", str(tmp_path), "--quiet", "--time-limit", "60"]) == 0
    out = capsys.readouterr().out
    assert "ferry/testing-easy hff: coverage 1.00 (2/2)" in out
    # under a time limit, no mean that counts the (placeholder) evaluation limit
    assert "mean evaluations on solved problems" in out and "(time limit 60 s)" in out
    assert "limit 10000" not in out


def test_the_ipc_experiment_script_tabulates_what_is_done(tmp_path):
    """``python -m experiments.ipc23_lt --table-only`` reads the evaluations present (none here)."""
    out = _ipc_tables("--domains", "ferry", "--runs", str(tmp_path), "--data", str(tmp_path))
    assert "| ferry | – | – | – | – | – | – | – | – |" in out


def test_the_ipc_table_totals_complete_columns(tmp_path):
    """A column's total row sums solved, tasks and time-outs when every domain has a result."""

    def result(domain: str, config: str, statuses: list[str]) -> None:
        out = tmp_path / f"{domain}-{config}" / "eval" / "testing-easy"
        (out / "problems").mkdir(parents=True)
        (out / "summary.json").write_text("{}")
        for i, status in enumerate(statuses):
            record = {"solved": status == "solved", "status": status}
            (out / "problems" / f"p{i}.json").write_text(json.dumps(record))

    result("ferry", "hff", ["solved", "solved", "evaluation_limit"])
    result("miconic", "hff", ["solved", "time_limit"])
    result("ferry", "wl-n", ["solved"])  # miconic's WL N is missing: no total
    flags = ("--domains", "ferry", "miconic", "--test-sets", "testing-easy", "--configs", "hff", "wl-n")
    out = _ipc_tables(*flags, "--runs", str(tmp_path), "--data", str(tmp_path))
    assert "| ferry | 2/3 | 1/1 |" in out and "| miconic | 1/2 (1t) | – |" in out
    assert "| **total** | 3/5 (1t) | – |" in out


@pytest.mark.skipif(not IPC.is_dir(), reason=f"the IPC 2023 LT tasks are not at {IPC}")
def test_the_ecai25_tables_put_the_competition_on_the_same_tasks_beside_ours(tmp_path):
    """``--protocol ecai25``: per set, the official planners' coverage on exactly the tasks our
    records name (ferry hard p03 and p04: HUZAR and FD SMAC solved both, GOFAI and Muninn neither),
    the tasks no configuration grounded, and evaluations per second."""

    out = tmp_path / "ferry-hff" / "eval" / "testing-hard"
    (out / "problems").mkdir(parents=True)
    (out / "summary.json").write_text("{}")
    records = {
        "p03": {"solved": True, "status": "solved", "evaluations": 500, "seconds": 0.5},
        "p04": {
            "solved": False,
            "status": "time_limit",
            "evaluations": 0,
            "seconds": 0.0,
            "ended_in": "grounding",
        },
    }
    for name, record in records.items():
        (out / "problems" / f"{name}.json").write_text(json.dumps({"problem": f"{name}.pddl", **record}))
    flags = ("--protocol", "ecai25", "--domains", "ferry", "--configs", "hff", "--test-sets", "testing-hard")
    done = _ipc_tables(*flags, "--runs", str(tmp_path), "--data", str(tmp_path))
    assert "| ferry | hard | 2 | 1 | 2 | 0 | 2 | 0 |" in done
    assert "Tasks on which every configuration's run ended in grounding: 1 of 2." in done
    assert "| ferry | 1,000 | 500 |" in done
