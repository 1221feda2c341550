"""Siblings of the optimal plan in the labels (label format 2, for ranking losses): every successor
of a plan state but the next plan state, their heuristic values, the upgrade of format-1 files from
their stored plans, and the consolidated split."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import domains
from pddlgym_sl.data.build import build_split
from pddlgym_sl.data.dataset import load_split
from pddlgym_sl.data.labels import LABEL_FORMAT, LABEL_HEURISTICS, add_siblings, load_labels, save_labels
from pddlgym_sl.data.solve import SolveConfig
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.task import load_task

FERRY = domains.domain_file("ferry")


@pytest.fixture(scope="module")
def split_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("siblings") / "ferry" / "train"
    specs = domains.split_specs("ferry", "train")[:4]
    build_split("ferry", FERRY, "train", specs, out, SolveConfig(time_limit=60), progress=False)
    return out


def _successors_by_action(task, words: np.ndarray) -> set[bytes]:
    """Successor states by applying each applicable action one at a time (not `expand`)."""
    state = task.state_from_words(words)
    return {bytes(task.successor(state, int(a))) for a in task.applicable(state)}


def test_siblings_are_the_other_successors_of_each_plan_state(split_dir):
    for path in sorted((split_dir / "labels").glob("*.npz")):
        labels = load_labels(path)
        task = load_task(split_dir / "domain.pddl", split_dir / "problems" / labels.problem)
        sib = labels.siblings
        assert sib is not None and len(sib) > 0
        for i in range(len(labels.plan)):
            expected = _successors_by_action(task, labels.states[i]) - {labels.states[i + 1].tobytes()}
            mine = sib.states[sib.parent == i]
            assert len({row.tobytes() for row in mine}) == len(mine)  # no duplicates
            assert {row.tobytes() for row in mine} == expected
        for name in LABEL_HEURISTICS:
            assert np.array_equal(sib.values[name], make_heuristic(name, task).batch(sib.states))
        assert np.array_equal(sib.features, make_heuristic("hff", task).features_batch(sib.states))


def test_format_one_files_are_upgraded_from_their_plans(split_dir, tmp_path):
    path = sorted((split_dir / "labels").glob("*.npz"))[0]
    labels = load_labels(path)
    old = tmp_path / "old.npz"
    save_labels(old, dataclasses.replace(labels, siblings=None))
    assert load_labels(old).siblings is None
    with np.load(old) as z:
        assert "format" not in z.files  # format 1
    task = load_task(split_dir / "domain.pddl", split_dir / "problems" / labels.problem)
    assert add_siblings(old, task) and not add_siblings(old, task)
    upgraded = load_labels(old)
    assert np.array_equal(upgraded.siblings.states, labels.siblings.states)
    assert np.array_equal(upgraded.siblings.parent, labels.siblings.parent)
    with np.load(old) as z:
        assert int(z["format"]) == LABEL_FORMAT


def test_a_rerun_upgrades_a_split_and_the_consolidated_file_holds_the_siblings(split_dir, tmp_path):
    import shutil

    copy = tmp_path / "ferry" / "train"
    shutil.copytree(split_dir, copy)
    for path in (copy / "labels").glob("*.npz"):
        save_labels(path, dataclasses.replace(load_labels(path), siblings=None))
    (copy / "labels.npz").unlink()
    assert load_split(copy).siblings is None
    specs = domains.split_specs("ferry", "train")[:4]
    manifest = build_split("ferry", FERRY, "train", specs, copy, SolveConfig(time_limit=60), progress=False)
    assert manifest["label_format"] == LABEL_FORMAT
    assert json.loads((copy / "manifest.json").read_text())["summary"]["solved"] == 4
    data = load_split(copy)
    sib = data.siblings
    assert sib is not None and len(sib) == sum(len(s) for s in sib.states)
    # parent_row points at the plan state (same problem) of which each sibling is a successor
    for k in range(len(data.problems)):
        task = data.task(k)
        for j in np.flatnonzero(sib.problem_of == k)[:20]:
            parent = sib.parent_row[j]
            assert data.problem_of[parent] == k
            local = j - np.flatnonzero(sib.problem_of == k)[0]
            words = sib.states[k][local]
            parent_words = data.states[k][parent - data.offsets[k]]
            assert words.tobytes() in _successors_by_action(task, parent_words)
            assert sib.values["lmcut"][j] == make_heuristic("lmcut", task).batch(words[None])[0]
    # a subset keeps siblings and parents together
    sub = data.subset([2, 0])
    assert sub.siblings is not None and len(sub.siblings) == sum(len(sib.states[i]) for i in (2, 0))
    assert np.array_equal(sub.problem_of[sub.siblings.parent_row], sub.siblings.problem_of)
    first = np.flatnonzero(sub.siblings.problem_of == 0)
    assert np.array_equal(sub.siblings.values["hff"][first], sib.values["hff"][sib.problem_of == 2])
