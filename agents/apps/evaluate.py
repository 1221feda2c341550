"""GBFS evaluation of learned (or symbolic) heuristics: ``python -m agents.evaluate``.

    python -m agents.evaluate --run runs/<id> [--split plan] [--limit 10000] [--jobs N] [--clip]
    python -m agents.evaluate --heuristic hff --domain ferry [--split plan]
    python -m agents.evaluate --run runs/<id> --search anytime   # restarting GBFS, u = C − g(s)
    python -m agents.evaluate --run runs/<id> --tasks ../shared/ipc23-lt/ferry/testing-easy --time-limit 300
    python -m agents.evaluate --run runs/<id> --search dual --prune adaptive --threshold 40

Confidence-aware search (Heller et al., SoCS 2022; `pddlgym_sl.search.confidence`): ``--search
gbfs|dual`` (single queue, or dual queue with hFF), ``--prune mean|adaptive --threshold X`` (the
run's training-data threshold below which X% of its training states fall, `agents.confidence`;
states below it are pruned, in dual-queue search from the learned queue only), ``--prioritize``
(dual: the threshold decides the queue turns instead of pruning). Their results go to
``<run>/eval/<split>[-clip]-<search>-<config>/`` with the paper's configuration names (``Base``,
``M5``, ``A40``, ``P20``, ...; ``PM20`` prioritizes with the mean threshold).

The paper's planning protocol (Table 2): eager GBFS with a budget of ``--limit`` node evaluations
(10,000) on the problems of a split (``plan``: 100 test-size problems); a problem counts as
solved when a plan is found within the budget, and an unsolved problem counts the whole budget
in the average evaluations. The learned heuristic evaluates all successors of an expansion in
one forward pass (N: μ, N+clip: max(μ, l), TN: E[x]); every plan is validated by replay.
``--search`` picks another search of `pddlgym_sl.search.SEARCHES` under the same budget: ``anytime``
goes on after the first plan, restarting GBFS with the incumbent's cost C as an upper bound (the
TN value gets u = C − g(s), nodes with g + LM-cut ≥ C are pruned); its per-problem results also
list every improved plan with its cost and evaluation count (``improvements``).

Problems: ``<data>/<domain>/<split>/problems`` of the run's dataset when that directory exists,
otherwise the split of the paper's Table 3 (generated once into the problem cache); or, with
``--tasks DIR``, every task file in DIR (a directory of given tasks, such as the IPC 2023 Learning
Track's test tasks), with ``--domain-file`` or the ``domain.pddl`` in DIR or its parent; the
directory's name then stands for the split. ``--time-limit`` bounds each search's wall-clock time
(grounding not included; both are recorded). The first problem of each process also records
``compile_seconds``: a small warm-up search compiles the kernels before its search is timed. A
task that cannot be loaded is a recorded failure.
Results go to ``<run>/eval/<split>[-clip][-<search>]/`` (no suffix for gbfs; baselines:
``runs/baselines/<domain>__<heuristic>/eval/<split>[-<search>]/``):
one JSON per problem (written atomically; finished problems are skipped on a re-run) and
``summary.json``. ``--run R --accuracy`` plans nothing: it prints the run's accuracy on its
dataset's test split (Table 1: MSE, MSE+clip, NLL, beside hFF and LM-cut) and writes it to
``<run>/eval/accuracy.json``.

Parallel (`pddlgym_sl.parallel`, one problem per unit): ``--jobs N`` local worker processes, or
``--backend ray [--address ADDR]`` Ray tasks on a cluster (the ``[cluster]`` extra; every node
must see the run and the problems at the same paths). Ctrl-C or SIGTERM stops every worker at
once and says how many problems are kept; the same command evaluates the rest.

This module is the command line: `Args` is `agents.evaluation.EvaluationConfig`, the library that
does the work (`agents.evaluation.evaluate`, `agents.evaluation.run_accuracy`).
"""

from __future__ import annotations

import sys

from agents.devices import resolve_device
from agents.evaluation import EvaluationConfig, evaluate, run_accuracy
from pddlgym_sl.cli import Command, tyro_parse

__all__ = ["COMMAND", "Args", "main", "run"]

Args = EvaluationConfig
"""The command's flags (field docstrings are their help texts)."""


def run(args: Args) -> int:
    """Evaluate, then print the summary line (with --accuracy: the accuracy line, no planning)."""
    resolve_device(args.device)  # a device that is not there is refused before any work
    if args.accuracy:
        metrics = run_accuracy(args)
        print("  ".join(f"{k.removeprefix('test_')} {v:.4g}" for k, v in metrics.items()))
        return 0
    s = evaluate(args)
    on_solved = "–" if s["mean_evaluations_solved"] is None else f"{s['mean_evaluations_solved']:.0f}"
    if args.time_limit is None:  # Table 2's mean: an unsolved problem counts the evaluation limit
        mean = s["mean_evaluations"]
        means = f"mean evaluations {mean:.0f} (limit {s['limit']}; solved problems: {on_solved})"
    else:  # the limit is time: counting unsolved problems at --limit would be meaningless
        means = f"mean evaluations on solved problems {on_solved} (time limit {args.time_limit:g} s)"
    print(
        f"{s['domain']}/{s['split']} {s['heuristic']}: coverage {s['coverage']:.2f} "
        f"({s['solved']}/{s['problems']}), {means}, {s['wall_seconds']:.1f}s"
    )
    return 0


COMMAND = Command(
    "python -m agents.evaluate",
    tyro_parse(Args, __doc__),
    run,
    extra="learn",
    interrupt=lambda args: "evaluated problems are kept",
)


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
