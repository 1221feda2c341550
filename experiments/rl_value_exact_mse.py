"""How close a learned value function is to h*: MSE over every reachable state of small problems.

    python -m experiments.rl_value_exact_mse --write-tiny DIR     # three tiny ferry problems and the domain
    python -m experiments.rl_value_exact_mse --tasks DIR --runs RUN [RUN ...] [--clip]

For each problem file in ``--tasks`` (small ones: the whole reachable space is enumerated), h* of
every reachable state comes from a breadth-first enumeration and a backward fixpoint (unit costs;
no search heuristic involved). Each run's model (`agents.learned_heuristic`, the value GBFS would
use, with ``--clip`` for N+clip) and hFF are compared with it on the states with finite h*. Prints
one line per run: states, MSE(V, h*), MSE(hFF, h*).
"""

from __future__ import annotations

import argparse
from collections import deque
from pathlib import Path

import numpy as np

from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.task import CompiledTask, State, load_task


def exact_cost_to_go(task: CompiledTask, max_states: int = 100_000) -> tuple[list[State], np.ndarray]:
    """Every state reachable from the initial state and its h* (inf: no plan from it)."""
    index = {task.init: 0}
    order, children = [task.init], []
    queue = deque([task.init])
    while queue:
        state = queue.popleft()
        succ = [t for _, t in task.successors(state)]
        children.append([])
        for t in succ:
            if t not in index:
                if len(order) >= max_states:
                    raise ValueError(f"more than {max_states} reachable states: too large to enumerate")
                index[t] = len(order)
                order.append(t)
                queue.append(t)
            children[index[state]].append(index[t])
    h = np.array([0.0 if task.is_goal(s) else np.inf for s in order])
    changed = True
    while changed:  # Bellman-Ford on unit costs: at most (longest plan) sweeps
        changed = False
        for i in range(len(order)):
            if h[i] > 0 and children[i]:
                best = 1.0 + min(h[j] for j in children[i])
                if best < h[i]:
                    h[i], changed = best, True
    return order, h


def mse_against_exact(
    run: Path, problems: list[Path], domain_file: Path, clip: bool
) -> tuple[int, float, float]:
    """(states, MSE of the run's V, MSE of hFF) over the problems' reachable states with finite h*."""
    from agents.learned_heuristic import LearnedHeuristic, TrainedModel

    trained = TrainedModel.load(run)
    errors, errors_hff = [], []
    for problem in problems:
        task = load_task(domain_file, problem)
        states, h = exact_cost_to_go(task)
        batch = task.states_to_array(states)
        solvable = np.isfinite(h)
        v = LearnedHeuristic(trained, task, clip=clip).batch(batch)
        hff = make_heuristic("hff", task).batch(batch)
        errors.append((v - h)[solvable] ** 2)
        errors_hff.append((hff - h)[solvable] ** 2)
    err, err_hff = np.concatenate(errors), np.concatenate(errors_hff)
    return len(err), float(err.mean()), float(err_hff.mean())


TINY_FERRY = ((2, 1, 1), (3, 2, 1), (3, 2, 2))
"""(locations, cars, seed) of the ``--write-tiny`` problems (those of tests/test_rl_value.py)."""


def write_tiny(directory: Path) -> None:
    import shutil

    import domains
    from domains.ferry.generator import generate

    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(domains.domain_file("ferry"), directory / "domain.pddl")
    for locations, cars, seed in TINY_FERRY:
        (directory / f"ferry-l{locations}-c{cars}-s{seed}.pddl").write_text(generate(locations, cars, seed))


def build_parser() -> argparse.ArgumentParser:
    """The command line (what ``--help`` shows; the docs' commands are checked against it)."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write-tiny", type=Path, default=None)
    parser.add_argument("--tasks", type=Path)
    parser.add_argument("--runs", type=Path, nargs="+", default=[])
    parser.add_argument("--clip", action="store_true")
    return parser


def main() -> None:
    parser = build_parser()
    opts = parser.parse_args()
    if opts.write_tiny is not None:
        write_tiny(opts.write_tiny)
        print(f"wrote the ferry domain and {len(TINY_FERRY)} tiny problems to {opts.write_tiny}")
        return
    if opts.tasks is None or not opts.runs:
        parser.error("--tasks and --runs are needed (or --write-tiny DIR)")
    domain_file = opts.tasks / "domain.pddl"
    problems = sorted(p for p in opts.tasks.glob("*.pddl") if p.name != "domain.pddl")
    for run in opts.runs:
        n, mse, mse_hff = mse_against_exact(run, problems, domain_file, opts.clip)
        print(f"{run}: {n} states, MSE(V, h*) {mse:.3f}, MSE(hFF, h*) {mse_hff:.3f}")


if __name__ == "__main__":
    main()
