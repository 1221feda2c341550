"""The hostile-input corpus: every bad or extreme input ends in a typed error (or a correct
result) instead of a hang, a crash, a swap storm, a raw traceback or a silently wrong answer.

- PDDL files (`benchmarks/hostile_inputs.py`'s corpus, each in a subprocess under a 2 GB
  address-space cap, so an unbounded allocation fails the case): oversized files, deep types,
  grounding far beyond the memory limit, a translator that outgrows its cap, 100,000 objects,
  empty goals, a valid negative goal. The benchmark prints each case's time and peak memory.
- Edge-case tasks: the empty goal (empty plan, exit 0, heuristics 0, an episode over at reset),
  tasks without fluent facts under every observation type, steps after the goal.
- The validator's requirements (a valid problem once refused) and the grounding limit's settings.
- Run directories: every field of ``last.pt``, ``model.json``, ``args.json`` and the weights is
  checked on load; each violation is one `CheckpointError` naming the file and the field.
"""

from __future__ import annotations

import json
import re
import resource
import shutil
from pathlib import Path

import pytest
import torch
from gymnasium.utils.env_checker import data_equivalence
from safetensors.torch import load_file, save_file

from benchmarks.hostile_inputs import cases, run_case
from pddlgym_sl import PDDLEnv, load_task
from pddlgym_sl.errors import ConfigError, EpisodeEndedError, InputLimitError, UnsupportedRequirementError
from pddlgym_sl.ground_size import MAX_GROUND_BYTES_VAR, check_ground_size, max_ground_bytes
from pddlgym_sl.heuristics import HEURISTICS, make_heuristic
from pddlgym_sl.pddl import parse_domain, parse_problem_string
from tests.problems import ROOT

CAP_BYTES = 2 << 30
FERRY = ROOT / "domains" / "ferry" / "domain.pddl"
SLOW = {"100,000 objects", "20,000 ferry cars"}
EXPECTED = {
    "8 MB of unknown atoms": "SemanticError: ",
    "16 MB file (over the limit)": "InputLimitError: ",
    "2 MB object name": "ok: 0 actions",
    "20,000-deep type chain": "InputLimitError: ",
    "40^7 ground actions": "InputLimitError: grounding may take about ",
    "11^7 ground actions": "InputLimitError: grounding may take about ",
    "five schemas of 11^7": "InputLimitError: grounding may take about ",
    "translator over its memory cap": "InputLimitError: Fast Downward's translator ran out of memory",
    "100,000 objects": "ok: 6 actions, 100003 objects",
    "20,000 ferry cars": "ok: 80002 actions, 20002 objects",
    "empty goal (and)": "ok: 0 actions, 3 objects (goal at init)",
    "empty goal ()": "ok: 0 actions, 3 objects (goal at init)",
    "negative goal, problem requirements": "ok: 6 actions, 3 objects",
    "a FIFO": "PDDLError: ",
    "/dev/zero": "PDDLError: ",
    "a directory": "PDDLError: ",
}


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return {case.name: case for case in cases(tmp_path_factory.mktemp("hostile"))}


def test_corpus_is_the_benchmarks(corpus) -> None:
    assert list(corpus) == list(EXPECTED)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in EXPECTED]
)
def test_hostile_input_ends_in_a_typed_error_within_2_gb(corpus, monkeypatch, name: str) -> None:
    monkeypatch.delenv(MAX_GROUND_BYTES_VAR, raising=False)
    status, outcome, _, _ = run_case(corpus[name], timeout=300, preexec_fn=_cap_memory)
    assert status == 0, outcome
    assert outcome.startswith(EXPECTED[name]), outcome


# --------------------------------------------------------------------------- empty goal, no facts
EMPTY_GOALS = {"and": "(:goal (and))", "()": "(:goal ())"}
FERRY_START = (
    "(define (problem p) (:domain ferry) (:objects l0 l1 c0) (:init (location l0) (location l1) "
    "(car c0) (not-eq l0 l1) (not-eq l1 l0) (at c0 l0) (at-ferry l0) (empty-ferry)) {goal})"
)


@pytest.mark.parametrize("goal", EMPTY_GOALS)
def test_empty_goal_is_solved_by_the_empty_plan(goal, tmp_path, capsys) -> None:
    """Before: the translator's axiom for a goal simplified to "true" (``new-axiom@0``) became a
    fact no action adds: exhausted search, exit 1, every heuristic inf, the env failing."""
    from pddlgym_sl.plan import main
    from pddlgym_sl.search import astar, gbfs

    problem = tmp_path / "p.pddl"
    problem.write_text(FERRY_START.format(goal=EMPTY_GOALS[goal]))
    task = load_task(FERRY, problem)
    assert task.is_goal(task.init) and not any("axiom" in f for f in task.facts)
    for search in (gbfs, astar):
        result = search(task, "hff")
        assert result.solved and result.plan == [] and result.cost == 0
    for name in HEURISTICS:
        assert make_heuristic(name, task).batch(task.init.words.reshape(1, -1))[0] == 0.0, name
    assert main([str(FERRY), str(problem)]) == 0
    assert "plan (0 steps)" in capsys.readouterr().out


@pytest.mark.parametrize("goal", EMPTY_GOALS)
def test_an_episode_with_an_empty_goal_is_over_at_reset(goal, tmp_path) -> None:
    problem = tmp_path / "p.pddl"
    problem.write_text(FERRY_START.format(goal=EMPTY_GOALS[goal]))
    env = PDDLEnv(domain_file=FERRY, problems=[problem])
    obs, info = env.reset(seed=0)
    assert env.terminated and info["bounds"]["lmcut"] == 0.0
    obs2, reward, terminated, truncated, _ = env.step(0)  # reports the end; applies nothing
    assert (reward, terminated, truncated) == (0.0, True, False) and env.state == env.task.init
    assert data_equivalence(obs, obs2, exact=True)
    with pytest.raises(EpisodeEndedError):
        env.step(0)
    env.reset()
    assert env.step(0)[2] is True


NO_FACTS = "(define (problem p) (:domain ferry) (:init) (:goal (and)))"


@pytest.mark.parametrize(
    "obs, padded",
    [
        ("ilg", False),
        ("ilg", True),
        ("nlm", False),
        ("hypergraph", False),
        ("hypergraph", True),
        ("flat", False),
    ],
)
def test_a_task_without_fluent_facts_plays_under_every_observation(obs, padded, tmp_path) -> None:
    """Before: ``obs="flat"`` raised Gymnasium's raw ``ValueError: n (counts) have to be positive``."""
    problem = tmp_path / "p.pddl"
    problem.write_text(NO_FACTS)
    env = PDDLEnv(domain_file=FERRY, problems=[problem], obs=obs, padded=padded)
    assert env.task.n_facts == 0 and env.task.static_atoms == ()
    o, _ = env.reset(seed=0)
    assert env.observation_space.contains(o)
    o, _, terminated, _, _ = env.step(0)
    assert terminated and env.observation_space.contains(o)


def test_flat_size_must_be_positive(tmp_path) -> None:
    problem = tmp_path / "p.pddl"
    problem.write_text(NO_FACTS)
    with pytest.raises(ConfigError, match="size must be a positive int"):
        PDDLEnv(domain_file=FERRY, problems=[problem], obs="flat", obs_kwargs={"size": 0})


def test_stepping_after_the_goal_without_reset_raises(tmp_path) -> None:
    """Before: accepted silently (a step after termination is undefined in Gymnasium)."""
    problem = tmp_path / "p.pddl"
    problem.write_text(FERRY_START.format(goal="(:goal (and (at c0 l1)))"))
    env = PDDLEnv(domain_file=FERRY, problems=[problem])
    env.reset(seed=0)
    task = env.task
    plan = ["(board c0 l0)", "(sail l0 l1)", "(debark c0 l1)"]
    for k, action in enumerate(plan):
        _, reward, terminated, _, _ = env.step(task.action_index(action))
        assert reward == -1.0 and terminated == (k == len(plan) - 1)
    with pytest.raises(EpisodeEndedError, match="call reset"):
        env.step(0)
    env.reset()
    assert not env.terminated and env.step(task.action_index(plan[0]))[2] is False


# --------------------------------------------------------------------------- validation, limits
def test_problem_requirements_allow_a_negative_goal_with_objects() -> None:
    """Before: ``check_problem`` reused one name for the problem's requirements and its object
    names, so a valid problem declaring ``:negative-preconditions`` with ``:objects`` was refused."""
    domain = parse_domain(FERRY)  # declares no requirements
    text = (
        "(define (problem p) (:domain ferry) (:requirements :negative-preconditions) (:objects l0 l1 c0) "
        "(:init (location l0) (location l1) (car c0) (at c0 l0)) (:goal (and (at c0 l1) (not (on c0)))))"
    )
    problem = parse_problem_string(text, domain)
    assert problem.requirements == frozenset({":negative-preconditions"})
    with pytest.raises(UnsupportedRequirementError, match=":negative-preconditions"):
        parse_problem_string(text.replace("(:requirements :negative-preconditions) ", ""), domain)


def test_the_grounding_limit_is_set_in_bytes(monkeypatch) -> None:
    domain = parse_domain(FERRY)
    problem = parse_problem_string(FERRY_START.format(goal="(:goal (at c0 l1))"), domain)
    assert max_ground_bytes() == 64 << 30
    estimate = check_ground_size(domain, problem)
    for raw, value in (("2G", 2 << 30), ("1.5GiB", 3 << 29), ("300m", 300 << 20), ("4096", 4096)):
        monkeypatch.setenv(MAX_GROUND_BYTES_VAR, raw)
        assert max_ground_bytes() == value
    monkeypatch.setenv(MAX_GROUND_BYTES_VAR, str(estimate.total_bytes - 1))
    with pytest.raises(InputLimitError, match=r"'(board|debark|sail)' up to \d+ instances"):
        check_ground_size(domain, problem)
    monkeypatch.setenv(MAX_GROUND_BYTES_VAR, str(estimate.total_bytes))
    check_ground_size(domain, problem)
    for bad in ("-1", "0", "lots", "8X"):
        monkeypatch.setenv(MAX_GROUND_BYTES_VAR, bad)
        with pytest.raises(ConfigError, match=MAX_GROUND_BYTES_VAR):
            max_ground_bytes()
    monkeypatch.delenv(MAX_GROUND_BYTES_VAR)
    monkeypatch.setenv("PDDLGYM_SL_MAX_GROUND_ACTIONS", "100")  # the retired per-schema count
    with pytest.raises(ConfigError, match="no longer read"):
        max_ground_bytes()


def test_a_translator_out_of_memory_is_a_typed_error_and_the_limit_is_restored(monkeypatch) -> None:
    """A MemoryError inside the translator (its memory cap reached) is an `InputLimitError`, and
    the process's address-space limit is back to what it was."""
    import fast_downward.translate.main as fd_main

    from pddlgym_sl.translate import translate

    def out_of_memory(task):
        raise MemoryError

    before = resource.getrlimit(resource.RLIMIT_AS)
    domain = parse_domain(FERRY)
    problem = parse_problem_string(FERRY_START.format(goal="(:goal (at c0 l1))"), domain)
    translate(domain, problem)  # imports the translator before it is patched
    monkeypatch.setattr(fd_main, "pddl_to_sas", out_of_memory)
    with pytest.raises(InputLimitError, match="ran out of memory while grounding"):
        translate(domain, problem)
    assert resource.getrlimit(resource.RLIMIT_AS) == before


def test_the_address_space_cap_is_set_and_restored() -> None:
    from pddlgym_sl.memory import SLACK_BYTES, address_space_cap, virtual_bytes

    before = resource.getrlimit(resource.RLIMIT_AS)
    with address_space_cap(64 << 20) as granted:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if before[0] == resource.RLIM_INFINITY:
            assert granted == 64 << 20
            assert soft <= virtual_bytes() + (64 << 20) + SLACK_BYTES
            with pytest.raises(MemoryError):
                bytearray(2 * ((64 << 20) + SLACK_BYTES))
        with address_space_cap(1 << 40):  # nested: the outer cap stays
            assert resource.getrlimit(resource.RLIMIT_AS)[0] == soft
    assert resource.getrlimit(resource.RLIMIT_AS) == before


# --------------------------------------------------------------------------- run directories
@pytest.fixture(scope="module")
def linear_run(tiny_dataset, tmp_path_factory) -> Path:
    from agents.apps.supervised import Args, train

    runs = tmp_path_factory.mktemp("runs")
    common = dict(data=tiny_dataset, runs=runs, name="linear", model="linear", batch_size=32, quiet=True)
    return train(Args(**common, steps=10, val_every=5))


def _copy(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    return copy


def _edit_state(run: Path, **fields) -> None:
    state = torch.load(run / "last.pt", weights_only=True)
    state.update(fields)
    torch.save(state, run / "last.pt")


def _edit_json(run: Path, name: str, edit) -> None:
    value = json.loads((run / name).read_text())
    edit(value)
    (run / name).write_text(json.dumps(value))


def _to_int64(state: dict) -> dict:
    return {k: v.to(torch.int64) for k, v in state.items()}


RESUME_CASES = {
    "negative step": (
        lambda r: _edit_state(r, step=-5),
        "last.pt",
        "field 'step' must be an integer in [0, 20]",
    ),
    "step beyond the run": (lambda r: _edit_state(r, step=10**9), "last.pt", "field 'step'"),
    "NaN best validation": (
        lambda r: _edit_state(r, best_val_mse=float("nan")),
        "last.pt",
        "field 'best_val_mse' must be a number",
    ),
    "int64 weights in last.pt": (
        lambda r: _edit_state(r, model=_to_int64(torch.load(r / "last.pt", weights_only=True)["model"])),
        "last.pt",
        "field 'model.linear.weight' has dtype torch.int64, the model's is torch.float32",
    ),
    "an optimiser state of another shape": (
        lambda r: _edit_state(
            r,
            optimizer={
                **(s := torch.load(r / "last.pt", weights_only=True)["optimizer"]),
                "state": {0: {**s["state"][0], "exp_avg": torch.zeros(3)}},
            },
        ),
        "last.pt",
        "field 'optimizer.state[0].exp_avg' has shape (3,)",
    ),
    "model.json a directory": (
        lambda r: ((r / "model.json").unlink(), (r / "model.json").mkdir()),
        "model.json",
        "is a directory where the run's model.json belongs",
    ),
    "absurd batch size": (
        lambda r: _edit_json(r, "args.json", lambda a: a.update(batch_size=10**12)),
        "args.json",
        "field 'batch_size' must be at most 1,048,576",
    ),
    "steps 25.5": (
        lambda r: _edit_json(r, "args.json", lambda a: a.update(steps=25.5)),
        "args.json",
        "field 'steps' must be an integer, not 25.5",
    ),
    "steps -3 (a range error)": (
        lambda r: _edit_json(r, "args.json", lambda a: a.update(steps=-3)),
        "args.json",
        "field 'steps' must be > 0, not -3",
    ),
    "missing seed": (
        lambda r: _edit_json(r, "args.json", lambda a: a.pop("seed")),
        "args.json",
        "field 'seed' is missing",
    ),
    "a dist that does not exist": (
        lambda r: _edit_json(r, "args.json", lambda a: a.update(dist="nope")),
        "args.json",
        "field 'dist' must be one of 'n', 'tn', 'cat'",
    ),
}


@pytest.mark.parametrize("case", list(RESUME_CASES))
def test_resume_checks_every_field_of_the_run(case, linear_run, tmp_path) -> None:
    """Before: raw tracebacks (a negative step, a NaN best value, model.json a directory, a huge
    batch size) or silently wrong runs (int64 weights cast, 25.5 steps, a step of 1e9 accepted, a
    missing seed defaulted); errors from args.json named a flag (``--steps must be > 0``)."""
    from agents.apps.supervised import Args, train
    from agents.checkpoint import CheckpointError

    damage, file, message = RESUME_CASES[case]
    run = _copy(linear_run, tmp_path)
    damage(run)
    with pytest.raises(CheckpointError) as info:
        train(Args(resume=run, steps=20, quiet=True))
    assert info.value.file == str(run / file)
    assert message in info.value.cause, info.value.cause
    assert "--" not in info.value.cause  # names fields, never flags


def test_an_intact_run_resumes(linear_run, tmp_path) -> None:
    from agents.apps.supervised import Args, train

    run = _copy(linear_run, tmp_path)
    assert train(Args(resume=run, steps=12, quiet=True)) == run
    assert torch.load(run / "last.pt", weights_only=True)["step"] == 12


def test_resume_prints_the_runs_own_labels(linear_run, tmp_path, capsys) -> None:
    """Before: the labels came from the command line's defaults ("nlm TN") for a linear run."""
    from agents.apps.supervised import main

    run = _copy(linear_run, tmp_path)
    assert main(["--resume", str(run), "--steps", "12", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "linear TN learn/hff" in out and "nlm" not in out


LOAD_CASES = {
    "absurd n_outputs": (
        lambda r: _edit_json(r, "model.json", lambda m: m["model"].update(n_outputs=4 * 10**12)),
        "model.json",
        "field 'model.n_outputs' must be 2 (the tn head's outputs), not 4000000000000",
    ),
    "model.json a directory": (
        lambda r: ((r / "model.json").unlink(), (r / "model.json").mkdir()),
        "model.json",
        "is a directory",
    ),
    "int64 weights": (
        lambda r: save_file(_to_int64(load_file(r / "best.safetensors")), r / "best.safetensors"),
        "best.safetensors",
        "has dtype torch.int64, the model's is torch.float32",
    ),
    "NaN weights": (
        lambda r: save_file(
            {k: torch.full_like(v, float("nan")) for k, v in load_file(r / "best.safetensors").items()},
            r / "best.safetensors",
        ),
        "best.safetensors",
        "holds NaN or infinite values",
    ),
    "an unknown head": (
        lambda r: _edit_json(r, "model.json", lambda m: m["head"].update(dist="nope")),
        "model.json",
        "field 'head' does not describe a head",
    ),
    "an extra section": (
        lambda r: _edit_json(r, "model.json", lambda m: m.update(extra=1)),
        "model.json",
        "must hold exactly the fields model, head, domain",
    ),
}


@pytest.mark.parametrize("case", list(LOAD_CASES))
def test_loading_a_run_checks_model_json_and_the_weights(case, linear_run, tmp_path) -> None:
    """Before: an absurd n_outputs asked for terabytes (a raw RuntimeError) and int64 weights were
    cast silently."""
    from agents.checkpoint import CheckpointError
    from agents.learned_heuristic import TrainedModel

    damage, file, message = LOAD_CASES[case]
    run = _copy(linear_run, tmp_path)
    damage(run)
    with pytest.raises(CheckpointError) as info:
        TrainedModel.load(run)
    assert info.value.file == str(run / file)
    assert message in info.value.cause, info.value.cause


def test_evaluate_reads_the_runs_checked_record(linear_run, tmp_path) -> None:
    from agents.checkpoint import CheckpointError
    from agents.evaluation import EvaluationConfig as Args
    from agents.evaluation import evaluate

    run = _copy(linear_run, tmp_path)
    _edit_json(run, "args.json", lambda a: a.pop("seed"))
    with pytest.raises(CheckpointError, match="field 'seed' is missing") as info:
        evaluate(Args(run=run, split="test", problems=1, limit=10, quiet=True))
    assert info.value.file == str(run / "args.json")


def test_value_learning_states_are_checked(tmp_path, monkeypatch) -> None:
    """agents.rl_value's last.pt: counters, buffer and episodes in range."""
    from agents.apps.rl_value import Args, train
    from agents.checkpoint import CheckpointError
    from experiments.rl_value_exact_mse import write_tiny

    tasks = tmp_path / "tasks"
    write_tiny(tasks)
    base = dict(tasks=tasks, steps=16, num_envs=2, max_episode_steps=12, epsilon_steps=8, batch_size=8)
    base |= dict(learning_starts=8, train_every=2, target_every=5, checkpoint_every=8, quiet=True)
    run = train(Args(**base, runs=tmp_path, name="rlv"))
    good = torch.load(run / "last.pt", weights_only=True)
    bad = {
        "counters": ([-1, 0, 0, 0], "field 'counters[0] (step)'"),
        "episodes": ([[99, []], None], "field 'episodes[0][0]'"),
        "buffer": ({**good["buffer"], "pos": 10**6}, "field 'buffer.pos'"),
    }
    for key, (value, message) in bad.items():
        torch.save({**good, key: value}, run / "last.pt")
        with pytest.raises(CheckpointError, match=re.escape(message)) as info:
            train(Args(resume=run, steps=24, quiet=True))
        assert info.value.file == str(run / "last.pt")
    torch.save(good, run / "last.pt")
    assert train(Args(resume=run, steps=24, quiet=True)) == run
