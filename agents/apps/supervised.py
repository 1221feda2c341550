"""Supervised heuristic learning: ``python -m agents.supervised --dist tn``.

Trains a model (NLM, STRIPS-HGN, linear regression, MLP or WL features) to predict the optimal
cost-to-go h* as a Gaussian N(μ, σ) or a truncated Gaussian TN(μ, σ, l, u) whose lower bound l is
an admissible heuristic, by minimising the negative log-likelihood (Núñez-Molina et al., IJCAI
2024). Defaults follow the paper (AdamW, batch 256, lr 1e-2 (1e-3 for HGN), weight decay 1e-2,
gradient-norm clip 0.1); the default data is the small ferry dataset (`pddlgym_sl.data.presets`),
created on first use, and the default step budget finishes in minutes on a laptop CPU. Paper
budgets: ``--config configs/<domain>-<model>.yaml``.

A run directory ``runs/<domain>__<model>__<dist>__<sigma>__<residual>[__<loss>]__s<seed>__<time>/``
holds TensorBoard events, ``args.json``, ``model.json``, ``best.safetensors``, ``last.pt``,
``metrics.json`` and the confidence files (`agents.training.supervised` describes them).
``--dist cat`` is Heller et al.'s categorical head; ``--ood`` their out-of-distribution training
(`agents.ood`). ``--resume RUN_DIR`` continues an interrupted run; on CPU the result equals an
uninterrupted run with the same seed.

This module is the command line: `Args` is `agents.training.SupervisedConfig` plus where the run
goes and how it is shown; the training itself is `agents.training.supervised.Trainer`.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agents.config_files import resolve_config
from agents.training.configs import SupervisedConfig
from agents.training.datasets import ensure_dataset, missing_dataset_message
from pddlgym_sl.arguments import with_paths
from pddlgym_sl.cli import Command, tyro_parse
from pddlgym_sl.errors import ConfigError

# torch and the torch-using modules are imported where they are used, so that ``--help`` and
# argument errors come back without loading torch (seconds).

__all__ = ["Args", "load_config_defaults", "main", "missing_dataset_message", "train"]


@dataclass
class Args(SupervisedConfig):
    """Train a learned heuristic with an N, TN or categorical head (flags follow the paper's notation)."""

    steps: int | None = None
    """training steps (default 3000, and 1000 on the quick start's data, data/small; when resuming,
    the stored value; the paper: 40,000, see configs/)"""
    runs: Path = Path("runs")
    """parent directory of run directories"""
    name: str | None = None
    """run directory name (default: <domain>__<model>__<dist>__<sigma>__<residual>[__<loss>]__s<seed>__<time>,
    the loss when it is not nll)"""
    resume: Path | None = None
    """continue the run in this directory (its args.json is used; --steps may extend it)"""
    config: Path | None = None
    """YAML preset whose keys set the defaults of these flags (command-line flags win): a file, or the
    name of a bundled preset (ferry-nlm, gripper-hgn, ...)"""
    quiet: bool = False
    """no progress bar"""
    plan: int | None = None
    """after training, plan this many problems of the test split (spread over it) with GBFS and the
    trained model, and with GBFS + hFF, at most 10,000 evaluations each, and print both (0: none;
    default: 4 on the quick start's data, data/small, else none)"""

    def training_config(self) -> SupervisedConfig:
        """The training loop's configuration: every field of `SupervisedConfig`, the default steps
        when none are given."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(SupervisedConfig)}
        default = QUICK_START_STEPS if self.data == Path("data/small") else SupervisedConfig.steps
        return SupervisedConfig(**{**values, "steps": self.steps or default})


def train(args: Args) -> Path:
    """Run (or resume) the training `args` describe; return the run directory (with metrics.json)."""
    from agents.devices import resolve_device
    from agents.training.records import resumed_config
    from agents.training.supervised import Trainer

    if args.resume is not None:
        config = resumed_config(args.resume, "supervised", args.steps)[1]
        resolve_device(config.device)  # refused before any work
        ensure_dataset(config, progress=not args.quiet)
        trainer = Trainer.load(args.resume, steps=args.steps)
    else:
        config = args.training_config()
        resolve_device(config.device)
        run_dir = args.runs / (args.name or config.run_name())
        if run_dir.exists():
            raise ConfigError(f"{run_dir} exists: pass --resume {run_dir} to continue it")
        ensure_dataset(config, progress=not args.quiet)
        trainer = Trainer(config, run_dir)
    trainer.learn(progress_bar=not args.quiet)
    return trainer.run_dir


def load_config_defaults(argv: list[str]) -> Args:
    """Defaults from ``--config FILE`` if given (before tyro parses the rest)."""
    if "--config" not in argv:
        return Args()
    i = argv.index("--config")
    if i + 1 >= len(argv):
        raise ConfigError("--config needs a YAML file")
    path = resolve_config(argv[i + 1])
    try:
        values = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read config: {exc}", file=path) from None
    fields = {f.name for f in dataclasses.fields(Args)}
    unknown = set(values) - fields
    if unknown:
        raise ConfigError(f"unknown keys {sorted(unknown)} (valid: {sorted(fields)})", file=path)
    return Args(**with_paths(Args, values), config=path)


QUICK_START_STEPS = 1000
"""Training steps on the quick start's data (data/small) unless ``--steps`` says otherwise: a
test MSE of 2.18 against 3,000 steps' 2.01 (hFF: 9.30), in a third of the time."""
QUICK_START_PLANS = 4
"""Test problems the quick start plans after training (``--plan``'s default on data/small)."""


def plan_test_problems(run_dir: Path, n: int, quiet: bool) -> list[str]:
    """GBFS with the run's model and with hFF on `n` problems of its test split (10,000
    evaluations each, `agents.evaluate`; results under ``<run>/eval/``): the lines to print."""
    from agents.evaluation import EvaluationConfig as EvaluateArgs
    from agents.evaluation import evaluate
    from agents.training.records import run_args

    config = run_args(run_dir)[1]
    common = {"split": config.test_split, "data": config.data, "problems": n, "quiet": quiet, "limit": 10_000}
    learned = evaluate(EvaluateArgs(run=run_dir, **common))
    out = run_dir / "eval" / f"{config.test_split}-hff"
    hff = evaluate(EvaluateArgs(heuristic="hff", domain=config.domain, out=out, **common))
    budget = "GBFS, at most 10,000 evaluations each"
    lines = [f"planning {learned['problems']} {config.test_split} problems ({budget}):"]
    for name, summary in (("the trained model", learned), ("hFF", hff)):
        mean = summary["mean_evaluations_solved"]
        evaluations = "-" if mean is None else f"{mean:,.0f}"
        lines.append(
            f"  {name:<20} solved {summary['solved']}/{summary['problems']}, "
            f"mean evaluations of the solved {evaluations}"
        )
    return lines


def _start_compiling_planning(domain: str, scratch: Path):
    """The child process that compiles GBFS's kernels (hFF's and a learned heuristic's batch path)
    while this one labels and trains (`pddlgym_sl.search.warm_up.warm_up_in_background`), on a
    bundled domain's plan-sized task written to `scratch`; None for a domain of one's own."""
    from domains import DOMAIN_NAMES, DOMAINS, domain_file, generate_problem
    from pddlgym_sl.search.warm_up import warm_up_in_background

    if domain not in DOMAIN_NAMES or not DOMAINS[domain].plan_defaults:
        return None
    problem = scratch / "warm-up.pddl"
    problem.write_text(generate_problem(domain, seed=0, **DOMAINS[domain].plan_defaults))
    return warm_up_in_background(domain_file(domain), problem)


def _plans(args: Args, data: Path) -> int:
    """How many test problems to plan after training (``--plan``, else the quick start's)."""
    return args.plan if args.plan is not None else (QUICK_START_PLANS if data == Path("data/small") else 0)


def run(args: Args) -> int:
    """Train, print the test MSE beside hFF's and LM-cut's, then (``--plan N``) plan test problems
    with the trained model and with hFF (their kernels compiled on the other core meanwhile)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pddlgym-sl-warm-up-") as scratch:
        compiling = None
        if args.resume is None and _plans(args, args.data) > 0:
            compiling = _start_compiling_planning(args.domain, Path(scratch))
        try:
            return _train_and_report(args, compiling)
        finally:
            if compiling is not None and compiling.is_alive():
                compiling.terminate()
                compiling.join()


def _train_and_report(args: Args, compiling: Any) -> int:
    """`run`'s work; `compiling` the child compiling the planning kernels, or None."""
    from agents.registries import LOSSES
    from agents.training.records import run_args

    run_dir = train(args)
    config = run_args(run_dir)[1]  # the labels below come from the run's own record
    m = json.loads((run_dir / "metrics.json").read_text())
    print(f"run: {run_dir}")
    print(f"test split: {m['test_states']} states of {m['test_problems']} problems")
    print(f"{'heuristic':<28} {'test MSE':>10}")
    label = f"{config.model} {config.dist.upper()} {config.sigma}/{config.residual}"
    if config.loss != "nll":  # a ranking run: its values order states, their scale is not h*'s
        label += f" {config.loss}"
    print(f"{label:<28} {m['test_mse']:>10.3f}")
    if config.dist == "n":
        print(f"{label + ' +clip':<28} {m['test_mse_clip']:>10.3f}")
    print(f"{'hFF':<28} {m['test_hff_mse']:>10.3f}")
    print(f"{'LM-cut':<28} {m['test_lmcut_mse']:>10.3f}")
    select = LOSSES[config.loss].select
    name = {"mse": "MSE"}.get(select, select.replace("_", " "))
    print(f"(test NLL {m['test_nll']:.3f}; best validation {name} {m[f'best_val_{select}']:.3f})")
    if "test_pair_accuracy" in m:
        print(
            f"test pairs ranked right (plan states below their parents and siblings): "
            f"{m['test_pair_accuracy']:.3f} (ranking loss {m['test_rank_loss']:.3f})"
        )
    n = _plans(args, config.data)
    if n > 0:
        if compiling is not None:
            compiling.join()  # its kernels are in numba's cache now: the searches below load them
        print("\n".join(plan_test_problems(run_dir, n, args.quiet)))
    return 0


COMMAND = Command(
    "python -m agents.supervised", tyro_parse(Args, __doc__, default=load_config_defaults), run, extra="learn"
)


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
