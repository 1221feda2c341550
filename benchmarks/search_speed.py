"""Benchmark: GBFS node-evaluation rate, ours against pyperplan's on the same problems, one process.

    python benchmarks/search_speed.py [--max-evaluations 10000] [--pyperplan-evaluations 1000] [--seeds 5]
                                      [--run RUN_DIR] [--threads 2] [--repeats 3] [--sizes 5 8 10 15]

Part 2 times GBFS with the learned heuristic of the paper's proposed configuration — NLM, TN
head, learned sigma, hFF residual, LM-cut bound — beside GBFS + hFF on the same ferry problems
of growing size (objects = locations + cars). The NLM is the one of ``--run`` or, by default,
freshly initialised (the cost of a forward pass does not depend on the weights, but the states
visited do, and with them how often the arity-3 memo of `agents.models.nlm_block3_memo` finds a
state's first-layer input); each expansion's successors are evaluated in one forward pass. Each
NLM search runs ``--repeats`` times with a fresh model (an empty memo), and the best rate is
kept: on a shared machine the slower runs measure the neighbours.

For each domain, mid-size generated problems (seeds 1..N) are solved with our GBFS + hFF
(compiled kernels, one batched heuristic call per expansion) and with pyperplan's greedy
best-first search + its hFF (pure Python). Both are capped; the rate is total evaluations over
total search time (JIT compilation excluded by a warm-up run). Prints a table and the ratio
ours / pyperplan.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from pathlib import Path

import torch
from pyperplan.heuristics.relaxation import hFFHeuristic
from pyperplan.search.a_star import greedy_best_first_search
from pyperplan_reference import pyperplan_task

import domains
from agents.heads import make_head
from agents.learned_heuristic import LearnedHeuristic, TrainedModel
from agents.models import make_model
from pddlgym_sl import load_task
from pddlgym_sl.envs.encoders.schema import Schema
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.search import gbfs

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
    parser.add_argument("--run", type=Path, default=None, help="trained NLM run (default: random weights)")
    parser.add_argument("--nlm-evaluations", type=int, default=1_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="NLM searches per problem (best rate kept)")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[5, 8, 10, 15], help="ferry locations (= cars), NLM part"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"{'domain':<12} {'problem':<28} {'ours eval/s':>12} {'pyperplan eval/s':>17} {'ratio':>7}  result")
    with tempfile.TemporaryDirectory() as tmp:
        for name, params in PROBLEMS.items():
            domain_file = domains.domain_file(name)
            evaluations = seconds = solved = 0
            ref_rates = []
            for seed in range(1, args.seeds + 1):
                problem_file = Path(tmp) / f"{name}-{seed}.pddl"
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
            print(f"{name:<12} {label:<28} {ours:>12,.0f} {ref:>17,.0f} {ours / ref:>6.1f}x  {outcome}")
        learned_rates(args, Path(tmp))


def ferry_nlm_tn(run: Path | None) -> TrainedModel:
    """The NLM TN of run `run`, or an untrained one for ferry (seeded) when None."""
    if run is not None:
        return TrainedModel.load(run)
    head = make_head("tn", sigma="learn", residual="hff", bound="lmcut")
    schema = Schema.from_domain_file(domains.domain_file("ferry"))
    channels = {k: 2 * len(preds) for k, preds in schema.by_arity.items()}
    torch.manual_seed(0)
    return TrainedModel(
        make_model("nlm", in_channels=channels, n_outputs=head.n_outputs), head, "nlm", "ferry", None
    )


def learned_rates(args: argparse.Namespace, tmp: Path) -> None:
    print(
        "\nGBFS + NLM (TN, learn sigma, hFF residual, LM-cut bound) vs GBFS + hFF, ferry, "
        f"{args.threads} threads, best of {args.repeats} runs"
    )
    print(
        f"{'locations=cars':<15} {'objects':>7} {'NLM eval/s':>11} {'hFF eval/s':>11} {'NLM evaluations':>16}"
    )
    for size in args.sizes:
        problem = tmp / f"ferry-nlm-{size}.pddl"
        problem.write_text(domains.generate_problem("ferry", seed=1, locations=size, cars=size))
        task = load_task(domains.domain_file("ferry"), problem)
        gbfs(task, LearnedHeuristic(ferry_nlm_tn(args.run), task), max_evaluations=30)  # warm-up (JIT)
        rates = []
        for _ in range(args.repeats):  # a fresh model each time: its inference memo starts empty
            learned = LearnedHeuristic(ferry_nlm_tn(args.run), task)
            result = gbfs(task, learned, max_evaluations=args.nlm_evaluations)
            rates.append(result.evaluations / result.seconds)
        hff = gbfs(task, make_heuristic("hff", task), max_evaluations=args.max_evaluations)
        print(
            f"{size:<15} {2 * size:>7} {max(rates):>11,.0f} "
            f"{hff.evaluations / hff.seconds:>11,.0f} {result.evaluations:>16}"
        )


if __name__ == "__main__":
    main()
