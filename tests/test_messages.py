"""Messages a new user met that misled (issue 18), each checked: what the CLI says now."""

from __future__ import annotations

import dataclasses
import json

import pddlgym_sl
from agents.apps.supervised import Args, missing_dataset_message, train


def test_misspelled_domain_suggests_the_bundled_one_not_generating_it(tmp_path):
    text = missing_dataset_message(Args(domain="ferri", data=tmp_path))
    assert "did you mean --domain ferry?" in text
    assert "--domain ferri" not in text and "--domain-file DOMAIN.pddl --problems DIR" in text


def test_missing_paper_dataset_never_suggests_the_30_minute_test_split_blindly(tmp_path):
    text = missing_dataset_message(Args(domain="gripper", data=tmp_path))
    assert "--split all" not in text
    assert "--split train" in text and "--split val" in text
    assert "--preset test-reduced --domain gripper" in text and "30 min per problem" in text
    reduced = missing_dataset_message(Args(domain="gripper", data=tmp_path, test_split="test-reduced"))
    assert "--preset test-reduced --domain gripper" in reduced and "--split test " not in reduced


def test_args_json_stores_the_learning_rate_used(tiny_dataset, tmp_path):
    run = train(Args(model="linear", data=tiny_dataset, runs=tmp_path, steps=2, val_every=1, quiet=True))
    record = json.loads((run / "args.json").read_text())
    assert record["lr"] == 1e-2  # linear's default, not null
    assert (record["app"], record["version"]) == (
        "supervised",
        pddlgym_sl.__version__,
    )  # beside the manifests'
    assert not {"runs", "name", "resume", "config", "quiet"} & set(record)  # the command line's own options


def test_evaluating_a_custom_domain_run_on_a_split_it_lacks_says_what_to_pass(tmp_path, capsys):
    """A run of one's own domain has no bundled ``plan`` split: name the dataset's splits and --tasks
    instead of "unknown domain"."""
    from agents.apps.evaluate import main as evaluate_main

    data = tmp_path / "data"
    problems = data / "miconic" / "test" / "problems"
    problems.mkdir(parents=True)
    (problems / "p01.pddl").write_text("(define (problem p01) (:domain miconic))")
    run = tmp_path / "run"
    run.mkdir()
    (run / "model.json").write_text("{}")
    stored = {**dataclasses.asdict(Args(domain="miconic", data=data).training_config()), "data": str(data)}
    (run / "args.json").write_text(json.dumps({**stored, "steps": 10, "lr": 0.01}))  # a run's whole record
    assert evaluate_main(["--run", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'miconic' is not a built-in one" in err and "--tasks DIR" in err
    assert "--split test" in err and "unknown domain" not in err


def test_a_domain_file_among_a_datasets_problems_is_not_a_problem(tmp_path):
    from pddlgym_sl.envs.problems import problem_files

    problems = tmp_path / "mine" / "test" / "problems"
    problems.mkdir(parents=True)
    (problems / "domain.pddl").write_text("(define (domain mine) (:predicates (p)))")
    (problems / "p01.pddl").write_text("(define (problem p01) (:domain mine) (:init) (:goal (p)))")
    assert [p.name for p in problem_files("mine", "test", tmp_path)] == ["p01.pddl"]
