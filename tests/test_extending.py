"""Adding a domain or a model is one module and one registry line: a toy domain
(`tests.toy_domain`) and a toy model (`tests.toy_model`), registered with one line each, go
through problem generation, the Gymnasium environment, labelling, training, GBFS evaluation, the
sweep's grid and the report."""

from __future__ import annotations

import json

import gymnasium as gym

import domains
from agents.apps.supervised import Args, train
from agents.apps.sweep import Args as SweepArgs
from agents.apps.sweep import grid_cells
from agents.evaluation import EvaluationConfig as EvalArgs
from agents.evaluation import evaluate
from agents.models import MODELS
from agents.reporting import build_report
from pddlgym_sl.data.build import build_split
from pddlgym_sl.data.solve import SolveConfig
from pddlgym_sl.envs import register_envs
from tests import toy_domain, toy_model


def test_a_new_domain_and_model_work_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setitem(domains.DOMAINS, "line", toy_domain.SPEC)  # the registry lines
    monkeypatch.setitem(MODELS, "toy", toy_model.SPEC)
    monkeypatch.setenv("PDDLGYM_SL_CACHE", str(tmp_path / "cache"))

    assert domains.DOMAIN_NAMES[-1] == "line"
    assert [s.filename for s in domains.split_specs("line", "test")] == ["line-n5-s1.pddl", "line-n5-s2.pddl"]
    register_envs()
    try:
        env = gym.make("pddl/line-v0", split="train")
        _, info = env.reset(seed=0)
        env.step(int(info["action_mask"].nonzero()[0][0]))
        env.close()
    finally:
        del gym.registry["pddl/line-v0"]

    data = tmp_path / "data"
    for split in ("train", "val", "test"):
        specs, out = domains.split_specs("line", split), data / "line" / split
        domain_file = domains.domain_file("line")
        manifest = build_split(
            "line", domain_file, split, specs, out, SolveConfig(time_limit=60), progress=False
        )
        assert manifest["summary"]["solved"] == len(specs)

    runs = tmp_path / "runs"
    run = train(
        Args(domain="line", model="toy", data=data, runs=runs, steps=4, val_every=2, batch_size=8, quiet=True)
    )
    assert json.loads((run / "model.json").read_text())["model"]["name"] == "toy"
    summary = evaluate(EvalArgs(run=run, split="test", quiet=True))
    assert summary["problems"] == 2 and summary["solved"] == 2

    cells = grid_cells(SweepArgs(domains=["line"], models=["toy"], dists=["tn"], sigmas=["learn"], seeds=[0]))
    assert {c.name for c in cells} == {"line__toy__tn__learn__hff__s0", "line__toy__tn__learn__none__s0"}

    report = build_report([runs], tmp_path / "report", split="test", plots=False)
    assert "### toy regression: test MSE" in report.table1 and "| line |" in report.table1
