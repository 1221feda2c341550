"""The hostile-input corpus of `benchmarks/hostile_inputs.py` under a 2 GB address-space cap: every
case ends in a typed `PDDLError` (or loads correctly) instead of a hang, a crash or a MemoryError.

The benchmark prints each case's time and peak memory; here the cap is enforced (RLIMIT_AS, so an
unbounded allocation fails the case) and a generous timeout only guards against a hang.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.hostile_inputs import CHILD, cases
from tests.problems import ROOT

CAP_BYTES = 2 << 30
EXPECTED = {
    "8 MB of unknown atoms": "SemanticError: ",
    "16 MB file (over the limit)": "InputLimitError: ",
    "2 MB object name": "ok: 0 actions",
    "20,000-deep type chain": "InputLimitError: ",
    "40^7 ground actions": "InputLimitError: ",
    "a FIFO": "PDDLError: ",
    "/dev/zero": "PDDLError: ",
    "a directory": "PDDLError: ",
}


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[tuple[str, Path, Path]]:
    return cases(tmp_path_factory.mktemp("hostile"))


def test_corpus_is_the_benchmarks(corpus) -> None:
    assert [name for name, _, _ in corpus] == list(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_hostile_input_ends_in_a_typed_error_within_2_gb(corpus, name: str) -> None:
    _, domain_file, problem_file = next(case for case in corpus if case[0] == name)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(domain_file), str(problem_file)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        preexec_fn=_cap_memory,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().startswith(EXPECTED[name]), proc.stdout
