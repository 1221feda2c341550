"""Benchmark: GBFS with a WL heuristic (compiled, and the torch path) beside GBFS + hFF, one process.

    python benchmarks/wl_speed.py [--domains ferry rovers ...] [--tasks N] [--max-evaluations 10000]
                                  [--train-tasks 10] [--iterations 2] [--pruning none] [--run RUN_DIR]
                                  [--repeats 3]

On the IPC 2023 Learning Track tasks in ``../shared/ipc23-lt`` (skipped, saying so, where absent):
for each domain, a WL colour table (`agents.models.wl`, 2 iterations, or ``--iterations 1
--pruning i-mf`` for the ECAI 2025 study's best setting) is fitted on the states of
GBFS + hFF plans of the first ``--train-tasks`` training tasks, and a linear model on it by least
squares to the remaining plan length (so that the searches below go where a trained model would;
``--run`` takes a trained ``--model wl`` run of that domain instead). The head is N with the hmax
bound (docs/ipc23.md's WL N and WL rank configurations: hmax only recognises dead ends). Then, on the
``testing-easy`` tasks (all 23, or ``--tasks N`` spread evenly over them), each searched with
``--max-evaluations``:

- **hFF**: GBFS + hFF evaluations/s (the compiled engine, heuristic inside its loop);
- **WL**: GBFS + the compiled WL heuristic (`agents.models.wl.compiled`) through
  `pddlgym_sl.search.gbfs`, evaluated inside the engine's compiled loop (what `agents.evaluate`
  runs for ``--model wl``); and the same model with the blind bound (the WL model alone);
- **torch**: GBFS + `LearnedHeuristic` (wlplan and torch per expansion: the previous path), and
  whether its search is the compiled one's node for node (evaluations, expansions, plan).

Rates are total evaluations over total seconds, compilation excluded by warm-up runs; each
search (the torch path's excepted) runs ``--repeats`` times and the fastest counts. The ratios
compare with GBFS + hFF on the same tasks in the same process; the load average of the machine is
printed with them.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import torch

from agents.heads import make_head
from agents.learned_heuristic import LearnedHeuristic, TrainedModel
from agents.models.wl import WLFeaturizer, WLLinear
from agents.models.wl.compiled import CompiledWLHeuristic
from agents.models.wl.vocabulary import TaskAtoms, wl_domain
from agents.registries import WL_PRUNING
from pddlgym_sl import load_task
from pddlgym_sl.envs.problems import spread
from pddlgym_sl.search import SearchResult, gbfs

IPC = Path(__file__).resolve().parents[2] / "shared" / "ipc23-lt"
DOMAINS = ("blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban",
           "spanner", "transport")  # fmt: skip


def _plan_states(task, budget: int) -> np.ndarray | None:
    result = gbfs(task, "hff", max_evaluations=budget)
    return task.states_to_array(task.validate_plan(result.plan)) if result.solved else None


def fitted_model(domain: str, n_tasks: int, head, iterations: int = 2, pruning: str = "none") -> WLLinear:
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
    featurizer = WLFeaturizer.fit(wl_dom, [(p, s) for p, s, _ in data], iterations, pruning)
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


class Totals:
    """Evaluations and seconds per measured column, summed over a domain's tasks."""

    def __init__(self) -> None:
        self.evaluations: dict[str, float] = {}
        self.seconds: dict[str, float] = {}

    def add(self, name: str, evaluations: float, seconds: float) -> None:
        self.evaluations[name] = self.evaluations.get(name, 0) + evaluations
        self.seconds[name] = self.seconds.get(name, 0) + seconds

    def rate(self, name: str) -> float:
        return self.evaluations[name] / max(self.seconds[name], 1e-12)


def fastest(task, heuristic, budget: int, repeats: int) -> SearchResult:
    """The quickest of `repeats` identical searches (a search of a few dozen evaluations takes
    about a hundred microseconds, so one run measures the machine's noise as much as the search)."""
    results = [gbfs(task, heuristic(), max_evaluations=budget) for _ in range(repeats)]
    return min(results, key=lambda r: r.seconds)


def measure_task(
    task, bounded: TrainedModel, blind: TrainedModel, budget: int, repeats: int, totals: Totals
) -> bool:
    """Add one task's searches and kernel times to `totals`; True when the compiled WL search is the
    torch path's node for node."""
    hff = fastest(task, lambda: "hff", budget, repeats)
    totals.add("hff", hff.evaluations, hff.seconds)
    compiled = fastest(task, lambda: CompiledWLHeuristic(bounded, task), budget, repeats)
    totals.add("wl", compiled.evaluations, compiled.seconds)
    alone = fastest(task, lambda: CompiledWLHeuristic(blind, task), budget, repeats)
    totals.add("wl-blind", alone.evaluations, alone.seconds)

    old = gbfs(task, LearnedHeuristic(bounded, task), max_evaluations=budget)
    totals.add("torch", old.evaluations, old.seconds)
    return (old.evaluations, old.expansions, old.plan) == (
        compiled.evaluations,
        compiled.expansions,
        compiled.plan,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    parser.add_argument(
        "--tasks", type=int, default=None, help="testing-easy tasks per domain (default: all)"
    )
    parser.add_argument("--train-tasks", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=2, help="WL iterations of the fitted table")
    parser.add_argument("--pruning", default="none", choices=WL_PRUNING, help="wlplan's colour pruning")
    parser.add_argument("--max-evaluations", type=int, default=10_000)
    parser.add_argument(
        "--repeats", type=int, default=3, help="searches per task and heuristic, the fastest counts"
    )
    parser.add_argument("--run", type=Path, default=None, help="a trained --model wl run (one domain)")
    args = parser.parse_args()
    if not IPC.is_dir():
        print(f"skipped: the IPC 2023 LT tasks are not at {IPC}")
        return
    torch.set_num_threads(1)
    head = make_head("n", sigma="fixed", residual="none", bound="hmax")
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    print("| domain | GBFS + hFF evals/s | GBFS + WL evals/s (ratio) | "
          "GBFS + WL, blind bound (ratio) | GBFS + WL torch evals/s | same search |")  # fmt: skip
    print("|---|--:|--:|--:|--:|--:|")
    for domain in args.domains:
        if args.run is not None:
            trained = TrainedModel.load(args.run)
            model, head = trained.model, trained.head
        else:
            model = fitted_model(domain, args.train_tasks, head, args.iterations, args.pruning)
        bounded = TrainedModel(model, head, "wl", domain, Path("."))
        blind_head = make_head(head.dist, sigma=head.sigma, residual=head.residual, bound="blind")
        blind = TrainedModel(model, blind_head, "wl", domain, Path("."))
        files = spread(sorted((IPC / domain / "testing-easy").glob("*.pddl")), args.tasks)
        tasks = [load_task(IPC / domain / "domain.pddl", p) for p in files]
        # warm-up: compile every kernel outside the timers
        gbfs(tasks[0], "hff", max_evaluations=100)
        for trained in (bounded, blind):
            gbfs(tasks[0], CompiledWLHeuristic(trained, tasks[0]), max_evaluations=20)
        gbfs(tasks[0], LearnedHeuristic(bounded, tasks[0]), max_evaluations=20)
        totals = Totals()
        budget, repeats = args.max_evaluations, args.repeats
        same = sum(measure_task(task, bounded, blind, budget, repeats, totals) for task in tasks)
        hff = totals.rate("hff")
        cells = [f"{totals.rate(k):,.0f} ({totals.rate(k) / hff:.2f}x)" for k in ("wl", "wl-blind")]
        old = f"{totals.rate('torch'):,.0f}"
        print(f"| {domain} | {hff:,.0f} | {' | '.join(cells)} | {old} | {same}/{len(tasks)} |", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
