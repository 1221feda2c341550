"""Benchmark: WL feature extraction and GBFS with a WL heuristic beside GBFS + hFF, one process.

    python benchmarks/wl_speed.py [--domains ferry rovers ...] [--tasks 3] [--max-evaluations 10000]
                                  [--train-tasks 10] [--run RUN_DIR]

On the IPC 2023 Learning Track tasks in ``../shared/ipc23-lt`` (skipped, saying so, where absent):
for each domain, a WL colour table (`agents.models.wl`, 2 iterations) is fitted on the states of
GBFS + hFF plans of the first ``--train-tasks`` training tasks, and a linear model on it by least
squares to the remaining plan length (so that the searches below go where a trained model would;
``--run`` takes a trained ``--model wl`` run of that domain instead). Then, on the first
``--tasks`` ``testing-easy`` tasks:

- **WL states/s**: the ILG's WL counts of the states GBFS + hFF generates, batched (one `wlplan`
  call for all of them) and one state at a time;
- **GBFS + WL evals/s**: GBFS with the learned heuristic (N head, as in `agents.evaluate`: one
  call per expansion), with the LM-cut bound computed for dead ends as the runs of docs/ipc23.md do,
  and with the blind bound (the WL model alone);
- **GBFS + hFF evals/s** on the same tasks, and the ratios.

Rates are total evaluations (states) over total time, compilation excluded by a warm-up run.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from agents.heads import make_head
from agents.learned_heuristic import LearnedHeuristic, TrainedModel
from agents.models.wl import WLFeaturizer, WLLinear
from agents.models.wl.vocabulary import TaskAtoms, wl_domain
from pddlgym_sl import load_task
from pddlgym_sl.search import gbfs

IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"
DOMAINS = ("blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban",
           "spanner", "transport")  # fmt: skip


def _plan_states(task, budget: int) -> np.ndarray | None:
    result = gbfs(task, "hff", max_evaluations=budget)
    return task.states_to_array(task.validate_plan(result.plan)) if result.solved else None


def fitted_model(domain: str, n_tasks: int, head) -> WLLinear:
    """A WL model fitted by least squares to the remaining length of GBFS + hFF plans."""
    domain_file = IPC / domain / "domain.pddl"
    data, xs, ys = [], [], []
    for problem in sorted((IPC / domain / "training").glob("*.pddl"))[:n_tasks]:
        task = load_task(domain_file, problem)
        states = _plan_states(task, 10_000)
        if states is not None:
            atoms = TaskAtoms(task)
            data.append((atoms.problem, atoms.states(states), len(states)))
    wl_dom, _ = wl_domain(str(domain_file))
    featurizer = WLFeaturizer.fit(wl_dom, [(p, s) for p, s, _ in data])
    for p, s, n in data:
        xs.append(featurizer.embed(p, s))
        ys.append(np.arange(n - 1, -1, -1, dtype=np.float64))
    x, y = np.concatenate(xs).astype(np.float64), np.concatenate(ys)
    mean, std = x.mean(0), x.std(0)
    model = WLLinear(head.n_outputs, featurizer.config, mean.tolist(), std.tolist())
    z = (x - mean) * np.where(std > 0, 1 / np.where(std > 0, std, 1), 0)
    w, *_ = np.linalg.lstsq(np.c_[z, np.ones(len(z))], y, rcond=None)
    with torch.no_grad():
        model.linear.weight[0] = torch.as_tensor(w[:-1], dtype=torch.float32)
        model.linear.bias[0] = float(w[-1])
    return model.eval()


def extraction_rates(model: WLLinear, task, states: np.ndarray) -> tuple[float, float]:
    """States/s of WL counts for `states`: one call for all, and one call per state."""
    atoms = TaskAtoms(task)
    start = time.perf_counter()
    batched = model.featurizer.embed(atoms.problem, atoms.states(states))
    t_batch = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(len(states)):
        model.featurizer.embed(atoms.problem, atoms.states(states[i : i + 1]))
    t_single = time.perf_counter() - start
    assert batched.shape[0] == len(states)
    return len(states) / t_batch, len(states) / t_single


def search_rate(task, heuristic, budget: int) -> tuple[int, float]:
    result = gbfs(task, heuristic, max_evaluations=budget)
    return result.evaluations, result.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    parser.add_argument("--tasks", type=int, default=3, help="testing-easy tasks per domain")
    parser.add_argument("--train-tasks", type=int, default=10)
    parser.add_argument("--max-evaluations", type=int, default=10_000)
    parser.add_argument("--run", type=Path, default=None, help="a trained --model wl run (one domain)")
    args = parser.parse_args()
    if not IPC.is_dir():
        print(f"skipped: the IPC 2023 LT tasks are not at {IPC}")
        return
    torch.set_num_threads(1)
    head = make_head("n", sigma="fixed", residual="none")
    print("| domain | WL states/s batched | one at a time | GBFS + WL evals/s (LM-cut bound) | "
          "(blind bound) | GBFS + hFF evals/s | hFF / WL |")  # fmt: skip
    print("|---|--:|--:|--:|--:|--:|--:|")
    for domain in args.domains:
        if args.run is not None:
            trained = TrainedModel.load(args.run)
            model, head = trained.model, trained.head
        else:
            model = fitted_model(domain, args.train_tasks, head)
        tasks = [
            load_task(IPC / domain / "domain.pddl", p)
            for p in sorted((IPC / domain / "testing-easy").glob("*.pddl"))[: args.tasks]
        ]
        bounded = TrainedModel(
            model, make_head(head.dist, sigma=head.sigma, residual=head.residual), "wl", domain, Path(".")
        )
        blind = TrainedModel(
            model,
            make_head(head.dist, sigma=head.sigma, residual=head.residual, bound="blind"),
            "wl",
            domain,
            Path("."),
        )
        gbfs(tasks[0], "hff", max_evaluations=100)  # warm-up: compile
        gbfs(tasks[0], LearnedHeuristic(bounded, tasks[0]), max_evaluations=20)
        totals = np.zeros(9)
        for task in tasks:
            result = gbfs(task, "hff", max_evaluations=2_000)
            visited = (
                task.states_to_array(task.validate_plan(result.plan))
                if result.solved
                else task.states_to_array([task.init])
            )
            states = np.concatenate([task.expand(np.ascontiguousarray(s))[1] for s in visited])
            batched, single = extraction_rates(model, task, states)
            totals[0] += len(states)
            totals[1] += len(states) / batched
            totals[2] += len(states) / single
            for k, heuristic in enumerate(
                (LearnedHeuristic(bounded, task), LearnedHeuristic(blind, task), "hff"), start=3
            ):
                evaluations, seconds = search_rate(task, heuristic, args.max_evaluations)
                totals[k] += evaluations
                totals[k + 3] += seconds
        wl_rate, blind_rate, hff_rate = (totals[k] / totals[k + 3] for k in (3, 4, 5))
        print(
            f"| {domain} | {totals[0] / totals[1]:,.0f} | {totals[0] / totals[2]:,.0f} | {wl_rate:,.0f} | "
            f"{blind_rate:,.0f} | {hff_rate:,.0f} | {hff_rate / wl_rate:.0f}x |"
        )


if __name__ == "__main__":
    main()
