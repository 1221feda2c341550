"""The data setting of Neural Fast Downward: states of ONE task, labelled by satisficing plans.

Ferber, Helmert and Hoffmann (ECAI 2020), and Heller et al. (SoCS 2022) after them, learn a
heuristic for one fixed task and apply it to instances of that task with other initial states.
Their training data (`sample_task`):

1. *seed states*: random walks from the task's initial state (uniform over the applicable actions
   at each step), of a length drawn uniformly from ``0..walk``;
2. from each seed, GBFS with hFF (our engine, Fast Downward's ``eager_greedy([ff()])``); a seed
   it does not solve within ``max_evaluations`` is left out;
3. every state of each plan, labelled with its *remaining plan cost* (not h*: an upper bound on
   it). A state on several plans is a sample of each (states near the goal are on most plans, and
   weigh accordingly), as NFD stores them.

The seeds are split into ``train`` and ``val`` (one label file each, over the task's own problem
file); ``test`` holds ``test_instances`` problem files of the same task whose initial state is
drawn like a seed (a random walk of length ``1..walk``; a goal state or one hFF does not solve is
drawn again), each labelled along its own GBFS + hFF plan. The layout is the labelled split's
(`pddlgym_sl.data.build`), so ``python -m agents.supervised --data OUT --domain D`` trains on it
and ``python -m agents.evaluate --run RUN --split test`` searches the test instances:

    python -m pddlgym_sl.data.sampling --domain gripper --problem p.pddl --out data/nfd/gripper-p

Everything is drawn from ``--seed``, so a run is reproducible; a finished split (its manifest
names the same settings) is kept, anything else is rebuilt; every file is written atomically.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

import domains
from pddlgym_sl.cli import Command, tyro_parse
from pddlgym_sl.data.dataset import consolidate
from pddlgym_sl.data.labels import ProblemLabels, heuristic_values, save_labels
from pddlgym_sl.errors import ConfigError, PDDLError
from pddlgym_sl.io import atomic_write_json, atomic_write_text
from pddlgym_sl.search import gbfs
from pddlgym_sl.task import CORE_VERSION, CompiledTask, State, load_task

__all__ = ["Args", "random_walk", "replace_init", "sample_task"]

FORMAT = "pddlgym-sl-nfd-sampling/1"


@dataclass
class Args:
    """Sample the training data of one task as Neural Fast Downward does (see the module docstring)."""

    domain: str
    """registered domain of the task (its domain.pddl), or use --domain-file"""
    problem: Path
    """the task's problem file"""
    out: Path
    """dataset root: writes OUT/<domain>/{train,val,test}"""
    domain_file: Path | None = None
    """domain file (default: the registered domain's)"""
    seeds: int = 500
    """random walks (seed states) for train and val"""
    walk: int | None = None
    """longest random walk (default: twice the GBFS + hFF plan length of the initial state)"""
    val_fraction: float = 0.1
    """share of the seeds whose plans go to val"""
    test_instances: int = 20
    """test problems (the task with a random-walk initial state)"""
    max_evaluations: int = 100_000
    """GBFS + hFF budget per seed"""
    seed: int = 0
    """seed of every random choice"""
    quiet: bool = False
    """no progress bars"""


def random_walk(task: CompiledTask, start: State, length: int, rng: np.random.Generator) -> State:
    """The state after `length` uniformly random applicable actions from `start` (stops early in a
    state without applicable actions)."""
    state = start
    for _ in range(length):
        successors = task.successors(state)
        if not successors:
            break
        state = successors[int(rng.integers(len(successors)))][1]
    return state


def _with_init(task: CompiledTask, state: State) -> CompiledTask:
    return dataclasses.replace(task, init=state)


def plan_states(task: CompiledTask, start: State, max_evaluations: int) -> list[State] | None:
    """The states of GBFS + hFF's plan from `start` (None when unsolved within the budget)."""
    result = gbfs(_with_init(task, start), "hff", max_evaluations=max_evaluations)
    return task.validate_plan(result.plan_indices, start=start) if result.solved else None


def _sexp_end(text: str, start: int) -> int:
    """Index just after the parenthesised expression opening at `start` (``;`` comments skipped)."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == ";":
            i = text.find("\n", i)
            if i < 0:
                break
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise PDDLError("unbalanced parentheses in the :init section")


def replace_init(problem_text: str, atoms: list[str]) -> str:
    """The problem text with its ``(:init ...)`` section replaced by `atoms` (``"(at c0 l1)"``, ...)."""
    start = _find_init(problem_text)
    end = _sexp_end(problem_text, start)
    body = "\n".join(f"    {a}" for a in atoms)
    return f"{problem_text[:start]}(:init\n{body}\n  ){problem_text[end:]}"


_INIT = re.compile(r"\(\s*:init\b", flags=re.IGNORECASE)


def _find_init(text: str) -> int:
    """Index of the ``(:init`` that opens the init section (not one in a ``;`` comment)."""
    i = 0
    while i < len(text):
        if text[i] == ";":
            i = text.find("\n", i)
            if i < 0:
                break
        elif text[i] == "(" and _INIT.match(text, i):
            return i
        i += 1
    raise PDDLError("the problem has no (:init ...) section")


def state_atoms(task: CompiledTask, state: State) -> list[str]:
    """The atoms of `state` as an initial state: its true facts and the task's static atoms."""
    return task.true_facts(state) + list(task.static_atoms)


def _labels(task: CompiledTask, name: str, states: list[State], costs: list[int]) -> ProblemLabels:
    array = task.states_to_array(states).copy()
    values, features = heuristic_values(task, array)
    return ProblemLabels(
        problem=name,
        plan=[],
        states=array,
        h_star=np.asarray(costs, dtype=np.int32),
        values=values,
        features=features,
        facts=task.facts,
    )


def _write_split(
    split_dir: Path, domain_file: Path, problems: dict[str, str], labels: list[ProblemLabels]
) -> None:
    (split_dir / "problems").mkdir(parents=True, exist_ok=True)
    (split_dir / "labels").mkdir(parents=True, exist_ok=True)
    atomic_write_text(split_dir / "domain.pddl", Path(domain_file).read_text())
    for name, text in problems.items():
        atomic_write_text(split_dir / "problems" / name, text)
    for lab in labels:
        save_labels(split_dir / "labels" / f"{Path(lab.problem).stem}.npz", lab)
    consolidate(split_dir)


def _settings(args: Args, domain_file: Path, walk: int) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "core_version": CORE_VERSION,
        "domain": args.domain,
        "domain_file": str(domain_file),
        "problem": str(args.problem),
        "seeds": args.seeds,
        "walk": walk,
        "val_fraction": args.val_fraction,
        "test_instances": args.test_instances,
        "max_evaluations": args.max_evaluations,
        "seed": args.seed,
    }


def sample_task(args: Args) -> dict[str, Any]:
    """Write the train, val and test splits of `args.problem` (see the module docstring); return the
    train split's manifest."""
    domain_file = args.domain_file or domains.domain_file(args.domain)
    task = load_task(domain_file, args.problem)
    if not 0 <= args.val_fraction < 1 or args.seeds < 1 or args.test_instances < 0:
        raise ConfigError("need --seeds >= 1, --test-instances >= 0 and --val-fraction in [0, 1)")
    init_plan = plan_states(task, task.init, args.max_evaluations)
    if init_plan is None:
        raise ConfigError(
            f"GBFS + hFF does not solve {args.problem} within {args.max_evaluations} evaluations"
        )
    walk = args.walk if args.walk is not None else 2 * (len(init_plan) - 1)
    settings = _settings(args, domain_file, walk)
    root = args.out / args.domain
    manifests = [root / s / "manifest.json" for s in ("train", "val", "test")]
    if all(m.is_file() and json.loads(m.read_text()).get("settings") == settings for m in manifests):
        return json.loads(manifests[0].read_text())
    started = time.time()
    rng = np.random.default_rng([args.seed, 0x5EED])
    n_val = round(args.seeds * args.val_fraction)
    samples: list[list[tuple[State, int]]] = [[], []]  # train, val: (plan state, remaining plan cost)
    solved, slots = [0, 0], [args.seeds - n_val, n_val]
    for i in tqdm(range(args.seeds), desc="seeds", disable=args.quiet, dynamic_ncols=True):
        seed_state = random_walk(task, task.init, int(rng.integers(walk + 1)), rng)
        states = plan_states(task, seed_state, args.max_evaluations)
        if states is None:
            continue
        part = 1 if i < n_val else 0
        solved[part] += 1
        samples[part] += [(s, len(states) - 1 - k) for k, s in enumerate(states)]
    problem_name = Path(args.problem).name
    problem_text = Path(args.problem).read_text()
    for split, pairs in zip(("train", "val"), samples, strict=True):
        labels = [_labels(task, problem_name, *map(list, zip(*pairs, strict=True)))] if pairs else []
        _write_split(root / split, domain_file, {problem_name: problem_text}, labels)
    test_problems, test_labels, redraws = {}, [], 0
    bar = tqdm(total=args.test_instances, desc="test instances", disable=args.quiet, dynamic_ncols=True)
    while len(test_problems) < args.test_instances:
        if redraws > 20 * max(args.test_instances, 1):
            raise ConfigError(
                "could not draw the test instances: random walks end in goals or unsolved states"
            )
        start = random_walk(task, task.init, int(rng.integers(1, walk + 1)), rng)
        name = f"{Path(args.problem).stem}-walk{len(test_problems):03d}.pddl"
        text = replace_init(problem_text, state_atoms(task, start))
        test_task = _parse(domain_file, text, root / "test" / "problems" / name)
        goal = test_task.is_goal(test_task.init)
        states = None if goal else plan_states(test_task, test_task.init, args.max_evaluations)
        if states is None:
            redraws += 1
            continue
        test_problems[name] = text
        test_labels.append(_labels(test_task, name, states, list(range(len(states) - 1, -1, -1))))
        bar.update(1)
    bar.close()
    _write_split(root / "test", domain_file, test_problems, test_labels)
    seconds = round(time.time() - started, 2)
    counts = {
        "train": (slots[0], solved[0], 0, len(samples[0])),
        "val": (slots[1], solved[1], 0, len(samples[1])),
        "test": (len(test_problems), len(test_problems), redraws, sum(len(lab) for lab in test_labels)),
    }
    for (split, (n_slots, n_solved, retries, n_states)), path in zip(counts.items(), manifests, strict=True):
        manifest = {
            "format": FORMAT,
            "domain": args.domain,
            "split": split,
            "settings": settings,
            "labels": "remaining cost of a GBFS + hFF plan (an upper bound on h*)",
            "init_plan_length": len(init_plan) - 1,
            "solver": {"planner": "gbfs-hff", "time_limit_s": None, "max_evaluations": args.max_evaluations},
            "summary": {
                "slots": n_slots,
                "solved": n_solved,
                "failed": n_slots - n_solved,
                "retries": retries,
                "states": n_states,
            },
            "runs": [{"finished": time.strftime("%Y-%m-%dT%H:%M:%S"), "seconds": seconds}],
        }
        atomic_write_json(path, manifest)
    return json.loads(manifests[0].read_text())


def _parse(domain_file: Path, text: str, path: Path) -> CompiledTask:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return load_task(domain_file, path)


def run(args: Args) -> int:
    """Sample the task's data; one line saying what was written."""
    manifest = sample_task(args)
    states, walk = manifest["summary"]["states"], manifest["settings"]["walk"]
    print(f"{args.out}: {states} training states from walks of up to {walk} steps")
    return 0


COMMAND = Command("python -m pddlgym_sl.data.sampling", tyro_parse(Args, __doc__), run)


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
