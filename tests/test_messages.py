"""Messages a new user met that misled (issue 18), each checked: what the CLI says now."""

from __future__ import annotations

import json

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
    assert json.loads((run / "args.json").read_text())["lr"] == 1e-2  # linear's default, not null
