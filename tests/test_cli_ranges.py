"""Every CLI refuses numbers out of range before doing any work: exit status 2 and a message that
names the flag (issue 19; before, ``--batch-size -5`` reached torch, ``--val-every 0`` divided by
zero and ``--time-limit -3`` ran a whole split as failures)."""

from __future__ import annotations

import dataclasses

import pytest

from agents.apps import evaluate, rl, supervised
from agents.apps.sweep import main as sweep_main
from agents.sweeping.config import SweepConfig
from pddlgym_sl.arguments import check_ranges
from pddlgym_sl.data import generate
from pddlgym_sl.errors import ConfigError

CASES = [
    (supervised.main, ["--steps", "0"], "--steps"),
    (supervised.main, ["--batch-size", "-5"], "--batch-size"),
    (supervised.main, ["--lr", "-1"], "--lr"),
    (supervised.main, ["--lr", "nan"], "--lr"),
    (supervised.main, ["--val-every", "0"], "--val-every"),
    (supervised.main, ["--train-problems", "0"], "--train-problems"),
    (supervised.main, ["--weight-decay", "-0.1"], "--weight-decay"),
    (supervised.main, ["--grad-clip", "0"], "--grad-clip"),
    (evaluate.main, ["--heuristic", "hff", "--domain", "ferry", "--limit", "0"], "--limit"),
    (evaluate.main, ["--heuristic", "hff", "--domain", "ferry", "--jobs", "0"], "--jobs"),
    (evaluate.main, ["--heuristic", "hff", "--domain", "ferry", "--problems", "-1"], "--problems"),
    (generate.main, ["--domain", "ferry", "--split", "train", "--jobs", "0"], "--jobs"),
    (generate.main, ["--domain", "ferry", "--split", "train", "--time-limit", "-3"], "--time-limit"),
    (generate.main, ["--domain", "ferry", "--split", "train", "--memory-limit", "0"], "--memory-limit"),
    (generate.main, ["--domain", "ferry", "--split", "train", "--retries", "0"], "--retries"),
    (generate.main, ["--domain", "ferry", "--split", "train", "--limit", "0"], "--limit"),
    (sweep_main, ["--jobs", "0"], "--jobs"),
    (sweep_main, ["--steps", "-1"], "--steps"),
    (rl.cli, ["--num-envs", "0"], "--num-envs"),
    (rl.cli, ["--learning-rate", "-1e-3"], "--learning-rate"),
    (rl.cli, ["--gamma", "1.5"], "--gamma"),
    (rl.cli, ["--total-timesteps", "0"], "--total-timesteps"),
]


@pytest.mark.parametrize(("main", "argv", "flag"), CASES, ids=[f"{m.__module__}{a}" for m, a, _ in CASES])
def test_out_of_range_flag_exits_2_naming_it(main, argv, flag, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)  # nothing may be created: no data/, runs/ or problems
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert flag in err and "must be" in err, err
    assert err.startswith("error: ") and err.count("\n") == 1, err  # one line
    assert list(tmp_path.iterdir()) == []


def test_programmatic_args_are_checked_too() -> None:
    """A --config file or a stored args.json builds Args directly: the same check applies."""
    with pytest.raises(ConfigError, match="--batch-size must be > 0"):
        supervised.Args(batch_size=0)
    with pytest.raises(ConfigError, match="--jobs must be > 0"):
        SweepConfig(jobs=0)
    assert supervised.Args(steps=None).steps is None  # None keeps meaning "the default"


def test_check_ranges() -> None:
    @dataclasses.dataclass
    class A:
        a: float | None = 1.0
        b: int = 0
        c: float = 0.5

    check_ranges(A(), positive=("a",), non_negative=("b",), unit_interval=("c",))
    check_ranges(A(a=None), positive=("a",))
    for bad, kwargs in [
        (A(a=0.0), {"positive": ("a",)}),
        (A(b=-1), {"non_negative": ("b",)}),
        (A(c=1.5), {"unit_interval": ("c",)}),
        (A(c=0.0), {"unit_interval": ("c",)}),
        (A(a=float("nan")), {"positive": ("a",)}),
        (A(b=True), {"non_negative": ("b",)}),
    ]:
        with pytest.raises(ConfigError):
            check_ranges(bad, **kwargs)
