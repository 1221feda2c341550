"""The sweep: grid selection and run names, resumable planning from what is on disk, the job
scheduler (dependencies, failures, logs), and a tiny end-to-end sweep that a second invocation
finds finished."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from tqdm import tqdm

from agents.apps.sweep import Args, Cell, Job, Scheduler, grid_cells, plan
from pddlgym_sl.errors import ConfigError


def _args(tmp_path: Path, **kw) -> Args:
    base = dict(domains=["ferry"], models=["linear"], sigmas=["learn"], residuals=["hff"], seeds=[0, 1])
    return Args(**(dict(out=tmp_path / "sweep", split="test", limit=200, problems=2) | base | kw))


def test_grid_cells_and_names(tmp_path):
    cells = grid_cells(_args(tmp_path, dists=["n", "tn"]))
    assert [c.name for c in cells] == [
        "ferry__linear__n__learn__hff__s0",
        "ferry__linear__tn__learn__hff__s0",
        "ferry__linear__n__learn__hff__s1",
        "ferry__linear__tn__learn__hff__s1",
    ]  # seed-major: an interrupted sweep has seed 0 of every cell first
    full = grid_cells(Args())  # configs/grid.yaml: 4 domains x 3 models x 2 x 2 x 2 x 5 seeds
    assert len(full) == 4 * 3 * 2 * 2 * 2 * 5 and len({c.name for c in full}) == len(full)
    assert (
        Cell("ferry", "nlm", "tn", "learn", "hff", "hmax", 3).name == "ferry__nlm__tn__learn__hff__hmax__s3"
    )
    bad = tmp_path / "grid.yaml"
    bad.write_text(
        "domains: [ferry]\nmodels: [gnn]\ndists: [n]\nsigmas: [learn]\nresiduals: [hff]\nseeds: [0]\n"
    )
    with pytest.raises(ConfigError, match="unknown models"):
        grid_cells(Args(grid=bad))


def test_plan_reads_what_is_on_disk(tmp_path):
    args = _args(tmp_path, dists=["n"], seeds=[0, 1, 2], eval=False)
    out = args.out
    (out / "ferry__linear__n__learn__hff__s0").mkdir(parents=True)
    (out / "ferry__linear__n__learn__hff__s0" / "metrics.json").write_text("{}")  # finished
    (out / "ferry__linear__n__learn__hff__s1").mkdir()
    (out / "ferry__linear__n__learn__hff__s1" / "args.json").write_text("{}")  # interrupted
    todo = plan(args, grid_cells(args))
    assert [j.name for j in todo.jobs] == [
        "ferry__linear__n__learn__hff__s1",
        "ferry__linear__n__learn__hff__s2",
    ]
    resume, fresh = (j.command for j in todo.jobs)
    assert "--resume" in resume and "--config" not in resume
    assert fresh[fresh.index("--name") + 1] == "ferry__linear__n__learn__hff__s2"
    assert fresh[fresh.index("--config") + 1] == str(Path("configs/ferry-linear.yaml"))  # the paper's preset
    assert "--resume" not in fresh


def test_scheduler_dependencies_failures_and_logs(tmp_path):
    py = sys.executable
    jobs = [
        Job("ok", "train", [py, "-c", "print('hello')"], "a", "a"),
        Job("ok-eval", "eval", [py, "-c", "import os; print(os.environ['OMP_NUM_THREADS'])"], "a", "a", "ok"),
        Job("bad", "train", [py, "-c", "raise SystemExit(3)"], "b", "b"),
        Job("bad-eval", "eval", [py, "-c", "print('never')"], "b", "b", "bad"),
    ]
    jobs.sort(key=lambda j: j.priority)
    with tqdm(total=2, file=io.StringIO()) as bar:
        scheduler = Scheduler(jobs, 2, tmp_path / "logs", bar, quiet=True)
        scheduler.run()
        assert bar.n == 2
    assert scheduler.succeeded == {"ok", "ok-eval"}
    assert set(scheduler.failed) == {"bad", "bad-eval"} and "not run" in scheduler.failed["bad-eval"]
    assert "hello" in (tmp_path / "logs" / "ok.log").read_text()
    assert (tmp_path / "logs" / "ok-eval.log").read_text().splitlines()[-1] == "1"  # one thread per job
    assert not (tmp_path / "logs" / "bad-eval.log").exists()
    assert not list((tmp_path / "logs").glob("*.pid"))


def _sweep(tiny_dataset: Path, out: Path, dists: list[str], seeds: list[str]) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "agents.sweep", "--domains", "ferry", "--models", "linear"]
    cmd += ["--dists", *dists, "--sigmas", "learn", "--residuals", "hff", "--seeds", *seeds]
    cmd += ["--steps", "5", "--problems", "2", "--limit", "200", "--split", "test"]
    cmd += ["--data", str(tiny_dataset), "--out", str(out), "--jobs", "2"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize(
    ("dists", "seeds"),
    [
        pytest.param(["n"], ["0"], id="n-1-seed"),  # 4 jobs: about 25 s on 2 cores
        pytest.param(["n", "tn"], ["0", "1"], id="n-tn-2-seeds", marks=pytest.mark.slow),  # 11 jobs: 1-2 min
    ],
)
def test_tiny_sweep_end_to_end_and_resume(tiny_dataset, tmp_path, dists, seeds):
    out = tmp_path / "sweep"
    first = _sweep(tiny_dataset, out, dists, seeds)
    assert first.returncode == 0, first.stdout + first.stderr
    runs = [f"ferry__linear__{d}__learn__hff__s{s}" for s in seeds for d in dists]
    finished = []
    for name in runs:
        run = out / name
        assert (run / "metrics.json").is_file(), name
        args = json.loads((run / "args.json").read_text())
        assert (args["steps"], args["seed"], args["data"]) == (5, int(name[-1]), str(tiny_dataset))
        splits = ["test", "test-clip"] if "__n__" in name else ["test"]
        for split in splits:
            summary = json.loads((run / "eval" / split / "summary.json").read_text())
            assert (summary["problems"], summary["limit"]) == (2, 200)
            finished.append(run / "eval" / split / "summary.json")
        assert not (run / "eval" / "test-clip").exists() or "__n__" in name
        finished.append(run / "metrics.json")
    baseline = out / "baselines" / "ferry__hff" / "eval" / "test" / "summary.json"
    assert json.loads(baseline.read_text())["heuristic"] == "hff"
    finished.append(baseline)
    for name in (
        "table1.md",
        "table1.csv",
        "table2.md",
        "table2.csv",
        "coverage_linear.png",
        "val_mse_linear.png",
    ):
        assert (out / "report" / name).is_file(), name
    table2 = (out / "report" / "table2.md").read_text()
    ferry = next(line for line in table2.splitlines() if line.startswith("| ferry |"))  # coverage row
    cells = [c.strip() for c in ferry.strip("| ").split("|")]  # domain, problems, hFF, N, N+clip, TN
    assert cells[1] == "2" and "–" not in cells[:5] and (cells[5] != "–") == ("tn" in dists), ferry
    n_jobs = (
        len(seeds) * (len(dists) + len(dists) + 1) + 1
    )  # training, evaluation(s) (N also +clip); baseline
    logs = sorted(p.name for p in (out / "logs").iterdir())
    assert len(logs) == n_jobs and all(name.endswith(".log") for name in logs)  # no pid file left
    assert f"launched {n_jobs} jobs, 0 failed" in first.stdout

    stamps = {p: p.stat().st_mtime_ns for p in finished + list((out / "logs").iterdir())}
    second = _sweep(tiny_dataset, out, dists, seeds)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "nothing to do" in second.stdout and "launched 0 jobs" in second.stdout
    assert stamps == {p: p.stat().st_mtime_ns for p in stamps}  # nothing trained, evaluated or logged again


def test_expected_problems_agree_with_evaluate(tiny_dataset, tmp_path):
    from agents.sweeping.jobs import Planner
    from pddlgym_sl.envs.problems import problem_files

    planner = Planner(_args(tmp_path, problems=None))
    assert planner.expected_problems("ferry", tiny_dataset) == len(
        problem_files("ferry", "test", tiny_dataset)
    )
    planner = Planner(_args(tmp_path, problems=2))
    assert planner.expected_problems("ferry", tiny_dataset) == 2


def test_sweep_trains_with_another_test_split(tiny_dataset, tmp_path):
    """``--test-split`` is the split the dataset must have (no ``test`` needed) and the one tested on."""
    data = tmp_path / "data" / "ferry"
    data.mkdir(parents=True)
    for split, target in (("train", "train"), ("val", "val"), ("held-out", "test")):
        (data / split).symlink_to(tiny_dataset / "ferry" / target)
    cmd = [sys.executable, "-m", "agents.sweep", "--domains", "ferry", "--models", "linear", "--dists", "n"]
    cmd += ["--sigmas", "learn", "--residuals", "hff", "--seeds", "0", "--steps", "5", "--no-eval"]
    cmd += ["--no-report", "--test-split", "held-out", "--data", str(data.parent)]
    cmd += ["--out", str(tmp_path / "s")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    args = json.loads((tmp_path / "s" / "ferry__linear__n__learn__hff__s0" / "args.json").read_text())
    assert args["test_split"] == "held-out"
