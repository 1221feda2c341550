"""`pddlgym_sl.bounded_load.load_task_bounded`: the task a child process loads is the task loaded
in process; a load past its time limit raises `TimeLimitError` (and leaves no child); a grounding
refused for memory and bad input raise what `load_task` raises, naming the file."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

import domains
from pddlgym_sl import load_task
from pddlgym_sl.bounded_load import load_task_bounded
from pddlgym_sl.errors import InputLimitError, ParseError, TimeLimitError
from pddlgym_sl.ground_size import MAX_GROUND_BYTES_VAR
from pddlgym_sl.search import gbfs


def _problem(tmp_path, locations=8, cars=8):
    path = tmp_path / "p.pddl"
    path.write_text(domains.generate_problem("ferry", seed=2, locations=locations, cars=cars))
    return domains.domain_file("ferry"), path


def test_the_child_loads_the_task_loaded_in_process(tmp_path):
    domain_file, problem = _problem(tmp_path)
    ours, theirs = load_task_bounded(domain_file, problem, time_limit=60), load_task(domain_file, problem)
    assert ours.facts == theirs.facts and ours.actions == theirs.actions
    assert np.array_equal(ours.goal, theirs.goal) and ours.init == theirs.init
    assert gbfs(ours, "hff").plan == gbfs(theirs, "hff").plan


def test_a_load_past_its_time_limit_raises_and_leaves_no_child(tmp_path):
    domain_file, problem = _problem(tmp_path, locations=40, cars=40)
    with pytest.raises(TimeLimitError, match=r"more than 0\.001 s") as caught:
        load_task_bounded(domain_file, problem, time_limit=0.001)
    assert caught.value.file == str(problem)
    assert not multiprocessing.active_children()


def test_errors_come_back_as_load_task_raises_them(tmp_path, monkeypatch):
    domain_file, problem = _problem(tmp_path)
    monkeypatch.setenv(MAX_GROUND_BYTES_VAR, "1000")  # the child inherits it: grounding refused
    with pytest.raises(InputLimitError, match=r"more than the limit of 1000 B") as caught:
        load_task_bounded(domain_file, problem, time_limit=60)
    assert not isinstance(caught.value, TimeLimitError) and caught.value.file is not None
    monkeypatch.delenv(MAX_GROUND_BYTES_VAR)
    bad = tmp_path / "bad.pddl"
    bad.write_text("(define (problem p) (:domain ferry)\n (:objects a - car\n")
    with pytest.raises(ParseError) as caught:
        load_task_bounded(domain_file, bad, time_limit=60)
    assert caught.value.file == str(bad) and caught.value.line is not None
