"""Benchmark: evaluations per second of the confidence-aware searches with the NLM, in one process.

    python benchmarks/confidence_search.py [--run RUN_DIR] [--sizes 8 10 15] [--evaluations 1000]
                                           [--threads 2] [--repeats 3] [--percent 40]

On ferry problems of growing size, with the learned heuristic of the paper's proposed
configuration (NLM, TN head, learned σ, hFF residual, LM-cut bound; ``--run`` or fresh weights),
each search runs ``--repeats`` times with a fresh model (its inference memo empty), best rate kept:

- ``engine``: the compiled engine's GBFS (`pddlgym_sl.search.gbfs`), the reference;
- ``single``: single-queue GBFS in Python (`confidence_gbfs`) without a threshold (the same nodes
  as the engine: the cost of the Python loop and of the confidences);
- ``single-M``: the same pruning below the mean threshold;
- ``dual``: dual-queue GBFS with hFF, round robin (every state evaluated by both heuristics: one
  evaluation); ``dual-A``: with adaptive-threshold pruning on the NLM queue; ``dual-P``: the
  prioritizing queue.

The thresholds put ``--percent``% of the confidences below them: the run's training data with
``--run``, else the states of a first GBFS (random weights have no training data). Prints each
rate and its ratio to the engine's and to single-queue's in the same run; the rates depend on the
states each search visits, so the ratios compare search overheads, not equal work.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import torch
from search_speed import ferry_nlm_tn  # beside this file: python puts benchmarks/ on the path

import domains
from agents.confidence import run_threshold
from agents.learned_heuristic import LearnedHeuristic
from pddlgym_sl import load_task
from pddlgym_sl.search import confidence_gbfs, dual_gbfs, gbfs
from pddlgym_sl.search.thresholds import adaptive_threshold, mean_threshold


class _Recorder:
    """Records the values and confidences a search asks for (to make thresholds without a run)."""

    def __init__(self, inner: LearnedHeuristic) -> None:
        self.inner, self.values, self.confidences = inner, [], []

    def values_and_confidences(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v, c = self.inner.values_and_confidences(states)
        live = np.isfinite(v)
        self.values.append(v[live])
        self.confidences.append(c[live])
        return v, c


def _thresholds(args: argparse.Namespace, task) -> tuple:
    if args.run is not None:
        return (
            run_threshold(args.run, "mean", args.percent),
            run_threshold(args.run, "adaptive", args.percent),
        )
    recorder = _Recorder(LearnedHeuristic(ferry_nlm_tn(None), task))
    confidence_gbfs(task, recorder, max_evaluations=args.evaluations)
    values, confidences = np.concatenate(recorder.values), np.concatenate(recorder.confidences)
    return mean_threshold(confidences, args.percent), adaptive_threshold(values, confidences, args.percent)


def _searches(task, mean, adaptive, budget: int) -> dict:
    """The searches timed, by name: each a function of the learned heuristic."""
    return {
        "engine": lambda h: gbfs(task, h, max_evaluations=budget),
        "single": lambda h: confidence_gbfs(task, h, max_evaluations=budget),
        "single-M": lambda h: confidence_gbfs(task, h, mean, max_evaluations=budget),
        "dual": lambda h: dual_gbfs(task, h, max_evaluations=budget),
        "dual-A": lambda h: dual_gbfs(task, h, adaptive, max_evaluations=budget),
        "dual-P": lambda h: dual_gbfs(task, h, adaptive, prioritize=True, max_evaluations=budget),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", type=Path, default=None, help="trained NLM TN run (default: random weights)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 10, 15], help="ferry locations (= cars)")
    parser.add_argument("--evaluations", type=int, default=1000, help="evaluation budget of each search")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--percent", type=float, default=40.0, help="X of the thresholds")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"NLM (TN, learn sigma, hFF residual, LM-cut bound) on ferry, {args.threads} threads, "
        f"budget {args.evaluations}, best of {args.repeats}; thresholds X = {args.percent:g}%"
    )
    header = (
        f"{'size':>4} {'search':<9} {'eval/s':>9} {'x engine':>9} {'x single':>9} {'evaluations':>12}  status"
    )
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            problem = Path(tmp) / f"ferry-{size}.pddl"
            problem.write_text(domains.generate_problem("ferry", seed=1, locations=size, cars=size))
            task = load_task(domains.domain_file("ferry"), problem)
            mean, adaptive = _thresholds(args, task)
            gbfs(task, LearnedHeuristic(ferry_nlm_tn(args.run), task), max_evaluations=30)  # warm-up (JIT)
            searches = _searches(task, mean, adaptive, args.evaluations)
            rates = {}
            for name, search in searches.items():
                best, result = 0.0, None
                for _ in range(args.repeats):  # a fresh model each time: its inference memo starts empty
                    result = search(LearnedHeuristic(ferry_nlm_tn(args.run), task))
                    best = max(best, result.evaluations / result.seconds)
                rates[name] = best
                print(
                    f"{size:>4} {name:<9} {best:>9,.0f} {best / rates['engine']:>8.2f}x "
                    f"{best / rates.get('single', best):>8.2f}x {result.evaluations:>12}  {result.status}"
                )


if __name__ == "__main__":
    main()
