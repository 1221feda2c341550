"""Benchmark: GBFS node-evaluation rates: ours against pyperplan's, and learned heuristics beside hFF.

    python benchmarks/search_speed.py [--max-evaluations 10000] [--pyperplan-evaluations 1000] [--seeds 5]
                                      [--run RUN_DIR] [--threads 2] [--sizes 5 10 20 30 40 50 60]
                                      [--lockstep 4] [--repeats 2] [--nlm-evaluations 1000]
                                      [--models nlm hgn mlp] [--gripper 4] [--gripper-run RUN_DIR]
                                      [--parts core nlm gripper] [--device cpu]

Part ``core``: for each domain, mid-size generated problems (seeds 1..N) are solved with our GBFS
+ hFF (compiled kernels) and with pyperplan's greedy best-first search + its hFF (pure Python).
Both are capped; the rate is total evaluations over total search time (JIT compilation excluded
by a warm-up run). Prints a table and the ratio ours / pyperplan.

Part ``nlm`` times GBFS with the learned heuristics in the paper's proposed configuration -- TN
head, learned sigma, hFF residual, LM-cut bound -- beside GBFS + hFF on the same ferry problems
of growing size (objects = locations + cars; ``--lockstep`` problems per size, seeds 1..K): one
search at a time (each expansion's successors in one forward pass), and the same problems
advanced in lockstep (`agents.lockstep`: one forward pass per round over the new states of all of
them, the bounds on both cores; the rate is all their evaluations over the wall time). The NLM is
the one of ``--run`` or freshly initialised (the cost of a forward pass does not depend on the
weights, but the states visited do, and with them how much of the arity-3 block the memo of
`agents.models.nlm.fast.arity3_memo` reuses); every mode starts from a fresh model (an empty
memo), ``--repeats`` times each, alternating, and the best rate of each mode is kept. ``--models``
adds STRIPS-HGN and the MLP (untrained, same head) at the same sizes; ``--bound hmax`` gives the
untrained models the hmax bound instead of LM-cut (whose cost grows fastest with the problem: on
100 objects it takes longer per state than the network). The column "bound eval/s" is GBFS with
that bound alone (its rate caps the learned heuristic's, which computes it for every state).

Part ``gripper``: the same on ``--gripper`` problems of gripper's ``plan`` split (20 to 100 balls,
evenly spread), with an untrained gripper NLM or the one of ``--gripper-run``.

``--device cuda`` (or ``auto``) runs the learned models' forward passes there (PyTorch's generic
path; the bounds and hFF stay on the CPU threads): the rates of a GPU machine, to set beside the
CPU ones of the same run with ``--device cpu`` on the same machine.

The machine's load average is printed before and after: on a shared machine the rates measure
the neighbours too.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
from pathlib import Path

import torch
from pyperplan.heuristics.relaxation import hFFHeuristic
from pyperplan.search.a_star import greedy_best_first_search
from pyperplan_reference import pyperplan_task

import domains
from agents.devices import resolve_device
from agents.heads import make_head
from agents.learned_heuristic import LearnedHeuristic, TrainedModel
from agents.lockstep import lockstep_gbfs
from agents.models import make_model
from agents.models.mlp import input_names
from pddlgym_sl import load_task
from pddlgym_sl.envs.encoders.schema import Schema
from pddlgym_sl.envs.problems import problem_files, spread
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.search import gbfs
from pddlgym_sl.task import CompiledTask

PROBLEMS = {
    "blocksworld": {"blocks": 12},
    "ferry": {"locations": 10, "cars": 10},
    "gripper": {"balls": 20},
    "visitall": {"x": 6, "y": 6, "ratio": 1.0},
}


class _Budget(Exception):
    pass


class CountingHeuristic:
    """Wraps a pyperplan heuristic: counts calls and stops the search after `limit` of them."""

    def __init__(self, inner, limit: int) -> None:
        self.inner, self.limit, self.calls = inner, limit, 0

    def __call__(self, node):
        self.calls += 1
        if self.calls > self.limit:
            raise _Budget
        return self.inner(node)


def pyperplan_rate(domain_file: Path, problem_file: Path, limit: int) -> float:
    task = pyperplan_task(domain_file, problem_file)
    h = CountingHeuristic(hFFHeuristic(task), limit)
    start = time.perf_counter()
    with contextlib.suppress(_Budget):
        greedy_best_first_search(task, h)
    return min(h.calls, limit) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-evaluations", type=int, default=10_000)
    parser.add_argument("--pyperplan-evaluations", type=int, default=1_000)
    parser.add_argument("--seeds", type=int, default=5, help="problems per domain (seeds 1..N)")
    parser.add_argument("--run", type=Path, default=None, help="trained ferry NLM run (default: untrained)")
    parser.add_argument("--nlm-evaluations", type=int, default=1_000, help="budget of each learned search")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[5, 10, 20, 30, 40, 50, 60], help="ferry locations (= cars)"
    )
    parser.add_argument("--lockstep", type=int, default=4, help="problems per size, advanced together")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each learned mode (best rate kept)")
    parser.add_argument("--models", nargs="+", default=["nlm"], choices=["nlm", "hgn", "mlp"])
    parser.add_argument(
        "--bound", default="lmcut", choices=["lmcut", "hmax"], help="the untrained models' lower bound"
    )
    parser.add_argument("--gripper", type=int, default=4, help="gripper plan problems (evenly spread)")
    parser.add_argument("--gripper-run", type=Path, default=None, help="trained gripper NLM run")
    parts = ["core", "nlm", "gripper"]
    parser.add_argument("--parts", nargs="+", default=parts, choices=parts)
    parser.add_argument("--device", default="cpu", help="the learned models' forward passes: cpu, cuda, auto")
    args = parser.parse_args()
    args.device = resolve_device(args.device)
    torch.set_num_threads(args.threads)
    print(f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        if "core" in args.parts:
            core_rates(args, Path(tmp))
        if "nlm" in args.parts:
            learned_rates(args, Path(tmp))
        if "gripper" in args.parts:
            gripper_rates(args)
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)


def core_rates(args: argparse.Namespace, tmp: Path) -> None:
    print(f"{'domain':<12} {'problem':<28} {'ours eval/s':>12} {'pyperplan eval/s':>17} {'ratio':>7}  result")
    for name, params in PROBLEMS.items():
        domain_file = domains.domain_file(name)
        evaluations = seconds = solved = 0
        ref_rates = []
        for seed in range(1, args.seeds + 1):
            problem_file = tmp / f"{name}-{seed}.pddl"
            problem_file.write_text(domains.generate_problem(name, seed=seed, **params))
            task = load_task(domain_file, problem_file)
            heuristic = make_heuristic("hff", task)
            gbfs(task, heuristic, max_evaluations=50)  # warm-up: JIT compilation
            result = gbfs(task, heuristic, max_evaluations=args.max_evaluations)
            evaluations, seconds = evaluations + result.evaluations, seconds + result.seconds
            solved += result.solved
            ref_rates.append(pyperplan_rate(domain_file, problem_file, args.pyperplan_evaluations))
        ours, ref = evaluations / seconds, sum(ref_rates) / len(ref_rates)
        label = ",".join(f"{k}={v}" for k, v in params.items())
        outcome = f"{solved}/{args.seeds} solved, {evaluations} evaluations"
        rates = f"{ours:>12,.0f} {ref:>17,.0f} {ours / ref:>6.1f}x"
        print(f"{name:<12} {label:<28} {rates}  {outcome}", flush=True)


def untrained(
    model: str,
    domain: str,
    tasks: list[CompiledTask],
    bound: str = "lmcut",
    device: torch.device | None = None,
) -> TrainedModel:
    """A freshly initialised (seeded) model of ``domain`` with the paper's TN head (learned sigma,
    hFF residual, LM-cut bound unless ``bound`` says otherwise)."""
    head = make_head("tn", sigma="learn", residual="hff", bound=bound)
    if model == "nlm":
        schema = Schema.from_domain_file(domains.domain_file(domain))
        config = {"in_channels": {k: 2 * len(preds) for k, preds in schema.by_arity.items()}}
    elif model == "mlp":
        config = {"vocabulary": sorted(set().union(*(input_names(t) for t in tasks)))}
    else:
        config = {}
    torch.manual_seed(0)
    network = make_model(model, n_outputs=head.n_outputs, **config).eval().to(device or "cpu")
    return TrainedModel(network, head, model, domain, None)


def model_for(
    model: str,
    domain: str,
    run: Path | None,
    tasks: list[CompiledTask],
    bound: str = "lmcut",
    device: torch.device | None = None,
) -> TrainedModel:
    """The model of ``run`` (a fresh copy: an empty memo), or an untrained one, on ``device``."""
    if run is not None:
        return TrainedModel.load(run, device=device or "cpu")
    return untrained(model, domain, tasks, bound, device)


def one_at_a_time(make, tasks: list[CompiledTask], budget: int) -> tuple[float, int]:
    """Evaluations per second of GBFS on each task in turn (total evaluations over total search
    time), and the evaluations."""
    trained = make()
    evaluations = seconds = 0.0
    for task in tasks:
        result = gbfs(task, LearnedHeuristic(trained, task), max_evaluations=budget)
        evaluations, seconds = evaluations + result.evaluations, seconds + result.seconds
    return evaluations / seconds, int(evaluations)


def together(make, tasks: list[CompiledTask], budget: int) -> tuple[float, int]:
    """Evaluations per second of the same searches advanced in lockstep (all of them at once):
    their evaluations over the wall time."""
    trained = make()
    heuristics = [LearnedHeuristic(trained, t) for t in tasks]
    start = time.perf_counter()
    results = lockstep_gbfs(tasks, heuristics, width=len(tasks), max_evaluations=budget)
    evaluations = sum(r.evaluations for r in results)
    return evaluations / (time.perf_counter() - start), evaluations


def symbolic_rate(name: str, tasks: list[CompiledTask], budget: int) -> float:
    """GBFS + the heuristic `name` alone (one search at a time): hFF, or the learned heuristic's
    bound, which a search with it cannot outrun."""
    gbfs(tasks[0], make_heuristic(name, tasks[0]), max_evaluations=30)  # warm-up: loading its kernels
    evaluations = seconds = 0.0
    for task in tasks:
        result = gbfs(task, make_heuristic(name, task), max_evaluations=budget)
        evaluations, seconds = evaluations + result.evaluations, seconds + result.seconds
    return evaluations / seconds


def compare(label: str, model: str, domain: str, run: Path | None, tasks, args) -> None:
    """One row: GBFS + the model one search at a time and in lockstep, beside GBFS + hFF."""
    make = lambda: model_for(model, domain, run, tasks, args.bound, args.device)  # noqa: E731
    gbfs(tasks[0], LearnedHeuristic(make(), tasks[0]), max_evaluations=30)  # warm-up (JIT)
    one = lock = 0.0
    for _ in range(args.repeats):  # alternating, best of each: the slower runs measure the neighbours
        rate, evaluations = one_at_a_time(make, tasks, args.nlm_evaluations)
        one = max(one, rate)
        rate, lock_evaluations = together(make, tasks, args.nlm_evaluations)
        lock = max(lock, rate)
        assert lock_evaluations == evaluations  # the same searches, node for node
    hff = symbolic_rate("hff", tasks, args.max_evaluations)
    bound = symbolic_rate(args.bound, tasks, args.nlm_evaluations)
    objects = "/".join(sorted({str(len(t.objects)) for t in tasks}, key=int))
    print(
        f"{label:<22} {model:<5} {objects:>9} {one:>10,.0f} {lock:>13,.0f} {lock / one:>6.1f}x "
        f"{hff:>11,.0f} {bound:>11,.0f} {evaluations:>12}",
        flush=True,
    )


def header(title: str, args: argparse.Namespace) -> None:
    print(
        f"\n{title}, {args.threads} threads, forward passes on {args.device}, "
        f"{args.nlm_evaluations} evaluations per learned search, best of {args.repeats}"
    )
    print(
        f"{'problems':<22} {'model':<5} {'objects':>9} {'one eval/s':>10} {'lockstep eval/s':>13} "
        f"{'ratio':>7} {'hFF eval/s':>11} {'bound eval/s':>11} {'evaluations':>12}"
    )


def learned_rates(args: argparse.Namespace, tmp: Path) -> None:
    bound = {"lmcut": "LM-cut", "hmax": "hmax"}[args.bound]
    title = f"GBFS + learned heuristic (TN, learned sigma, hFF residual, {bound} bound) vs GBFS + hFF, ferry"
    header(title, args)
    for size in args.sizes:
        tasks = []
        for seed in range(1, args.lockstep + 1):
            problem = tmp / f"ferry-{size}-{seed}.pddl"
            problem.write_text(domains.generate_problem("ferry", seed=seed, locations=size, cars=size))
            tasks.append(load_task(domains.domain_file("ferry"), problem))
        for model in args.models:
            run = args.run if model == "nlm" else None
            compare(f"ferry {size}/{size} x{len(tasks)}", model, "ferry", run, tasks, args)


def gripper_rates(args: argparse.Namespace) -> None:
    header("GBFS + NLM vs GBFS + hFF, gripper plan problems (lockstep: all of them together)", args)
    files = spread(problem_files("gripper", "plan", None), args.gripper)
    tasks = [load_task(domains.domain_file("gripper"), f) for f in files]
    compare(f"gripper plan x{len(tasks)}", "nlm", "gripper", args.gripper_run, tasks, args)


if __name__ == "__main__":
    main()
