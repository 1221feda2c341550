"""Supervised heuristic learning: ``python -m agents.supervised --dist tn``.

Trains a model (NLM, STRIPS-HGN or linear regression) to predict the optimal cost-to-go h* as a
Gaussian N(μ, σ) or a truncated Gaussian TN(μ, σ, l, u) whose lower bound l is an admissible
heuristic, by minimising the negative log-likelihood (Núñez-Molina et al., IJCAI 2024). Defaults
follow the paper (AdamW, batch 256, lr 1e-2 (1e-3 for HGN), weight decay 1e-2, gradient-norm
clip 0.1); the default data is the small ferry dataset (`pddlgym_sl.data.presets`), created on
first use, and the default step budget finishes in minutes on a laptop CPU. Paper budgets:
``--config configs/<domain>-<model>.yaml``.

A run directory ``runs/<domain>__<model>__<dist>__<sigma>__<residual>__s<seed>__<time>/`` holds
TensorBoard events, ``args.json``, ``model.json`` (how to rebuild model and head),
``best.safetensors`` (best validation MSE), ``last.pt`` (full training state, loaded with
``weights_only=True``), ``metrics.json`` (test metrics of the best checkpoint, beside hFF and
LM-cut) and the confidence files of `agents.confidence` (training-data thresholds, Table 1 of
Heller et al.). ``--dist cat`` is their categorical head; ``--ood`` their out-of-distribution
training (`agents.ood`). ``--resume RUN_DIR`` continues an interrupted run; on CPU the result equals an
uninterrupted run with the same seed (batches are drawn from a per-step seeded generator).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import tyro
import yaml
from tqdm import tqdm

import domains
from agents.choices import BOUNDS, DISTS, LOSS_NAMES, MODEL_NAMES, NOISE_NAMES, RESIDUALS, SIGMAS, UPPERS
from agents.config_files import resolve_config
from agents.devices import resolve_device
from pddlgym_sl.arguments import check_ranges, with_paths
from pddlgym_sl.data.dataset import load_split
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.io import atomic_write_json

# torch and the torch-using modules are imported where they are used, so that ``--help`` and
# argument errors come back without loading torch (seconds); `agents.choices` lists the names.
if TYPE_CHECKING:
    import torch
    from torch.utils.tensorboard import SummaryWriter

    from agents.checkpoint import RunClock

OOD_CHOICES = ("none", *NOISE_NAMES)
MAX_BATCH_SIZE = 1 << 20
"""Most states per step (the paper trains with 256): a larger batch is a typo, and allocating it
would exhaust memory before the first step."""


@dataclass
class Args:
    """Train a learned heuristic with a N or TN head (flags follow the paper's notation)."""

    dist: Literal[DISTS] = "tn"
    """distribution of h*: Gaussian (n; NLL = MSE with fixed sigma), truncated Gaussian (tn) or categorical
    over the costs 0..H (cat: cross-entropy, argmax; needs --residual none)"""
    model: Literal[MODEL_NAMES] = "nlm"
    """network: Neural Logic Machine, STRIPS-HGN, linear regression on 4 features, or WL features"""
    domain: str = "ferry"
    """domain of the dataset: data/<domain>/{train,val,test} under --data"""
    data: Path = Path("data/small")
    """dataset root (data/small is created on first use: python -m pddlgym_sl.data.generate --preset small)"""
    loss: Literal[LOSS_NAMES] = "nll"
    """training loss: the head's NLL, or rank (pairwise: plan states below their parents and
    siblings; needs labels with siblings; the best checkpoint has the lowest val ranking loss)"""
    sigma: Literal[SIGMAS] = "learn"
    """learn sigma (second model output) or fix it to 1/sqrt(2)"""
    residual: Literal[RESIDUALS] = "hff"
    """mu = model output + this heuristic"""
    bound: Literal[BOUNDS] = "lmcut"
    """admissible lower bound l of TN (also the +clip bound of N)"""
    upper: Literal[UPPERS] = "none"
    """upper bound u of TN: none (1e5, the paper), inf, or plan: the data's satisficing plan costs,
    TN(mu, sigma, l - 0.1, u + 0.1) (add them with python -m pddlgym_sl.data.upper)"""
    steps: int | None = None
    """training steps (default 3000; when resuming, the stored value; the paper: 40,000, see configs/)"""
    batch_size: int = 256
    """states per step"""
    lr: float | None = None
    """AdamW learning rate (default 1e-2; 1e-3 for hgn)"""
    weight_decay: float = 1e-2
    """AdamW weight decay"""
    grad_clip: float = 0.1
    """gradient-norm clipping"""
    test_split: str = "test"
    """labelled split for the final test metrics (e.g. test-reduced, see pddlgym_sl.data.presets)"""
    train_problems: int = 400
    """problems subsampled (seeded) from the training split"""
    seed: int = 0
    """seed of initialisation, subsampling and batches"""
    val_every: int = 250
    """steps between validations (best-checkpoint selection)"""
    device: str = "auto"
    """auto (cuda when available), cpu, cuda, cuda:1, ..."""
    runs: Path = Path("runs")
    """parent directory of run directories"""
    name: str | None = None
    """run directory name (default: <domain>__<model>__<dist>__<sigma>__<residual>__s<seed>__<time>)"""
    resume: Path | None = None
    """continue the run in this directory (its args.json is used; --steps may extend it)"""
    ood: Literal[OOD_CHOICES] = "none"
    """out-of-distribution training: mix uniform or weighted noise states into each batch and teach low
    confidence on them (agents/ood.py)"""
    ood_ratio: float = 0.5
    """fraction Y of noise states in a batch (B training states plus round(B*Y/(1-Y)) noise states)"""
    config: Path | None = None
    """YAML preset whose keys set the defaults of these flags (command-line flags win): a file, or the
    name of a bundled preset (ferry-nlm, gripper-hgn, ...)"""
    quiet: bool = False
    """no progress bar"""

    def __post_init__(self) -> None:
        check_ranges(
            self,
            positive=("steps", "batch_size", "lr", "grad_clip", "train_problems", "val_every"),
            non_negative=("weight_decay",),
            at_most={"batch_size": MAX_BATCH_SIZE},
        )


def run_name(args: Args) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return f"{args.domain}__{args.model}__{args.dist}__{args.sigma}__{args.residual}__s{args.seed}__{stamp}"


def ensure_dataset(args: Args) -> None:
    """Create the small default dataset when it is asked for and absent (with upper bounds when
    the head trains with them)."""
    root = args.data / args.domain
    if all(any((root / s / "labels").glob("*.npz")) for s in ("train", "val", args.test_split)):
        return
    if args.data == Path("data/small") and args.domain == "ferry":
        from agents.heads import make_head
        from pddlgym_sl.data.generate import Args as GenArgs
        from pddlgym_sl.data.generate import run as generate

        print("creating the small ferry dataset in data/small (once; about a minute)")
        upper = make_head(args.dist, upper=args.upper).upper_key is not None
        generate(GenArgs(preset="small", out=args.data, quiet=args.quiet, upper=upper))
        return
    raise ConfigError(missing_dataset_message(args))


def missing_dataset_message(args: Args) -> str:
    """What to run when the dataset is absent: the generate commands of a bundled domain (its
    train and val splits, and the minutes-scale test-reduced preset rather than the paper's test
    split of 30 min per problem), or, for another name, the closest bundled domain and the
    command for one's own domain and problem files."""
    root = args.data / args.domain
    missing = [s for s in ("train", "val", args.test_split) if not any((root / s / "labels").glob("*.npz"))]
    where = f"no labelled {'/'.join(missing)} split in {root}"
    gen = "python -m pddlgym_sl.data.generate"
    if args.domain in domains.DOMAIN_NAMES:
        steps = [
            f"{gen} --domain {args.domain} --split {s} --out {args.data}"
            for s in missing
            if s in domains.SPLIT_NAMES
        ]
        if args.test_split in missing and args.test_split not in domains.SPLIT_NAMES:
            steps.append(f"{gen} --preset {args.test_split} --domain {args.domain} --out {args.data}")
        hint = (
            " (the paper's test split takes up to 30 min per problem: --test-split test-reduced, "
            f"built by {gen} --preset test-reduced --domain {args.domain} --out {args.data}, takes minutes)"
            if args.test_split == "test" and "test" in missing
            else ""
        )
        return f"{where}; create it with: {' && '.join(steps)}{hint}"
    close = difflib.get_close_matches(args.domain, domains.DOMAIN_NAMES, n=1)
    guess = f"did you mean --domain {close[0]}? " if close else ""
    return (
        f"{where}; {guess}{args.domain!r} is not a bundled domain ({', '.join(domains.DOMAIN_NAMES)}); "
        f"for your own domain: {gen} --domain-file DOMAIN.pddl --problems DIR --split train "
        f"--out {args.data} (then val and {args.test_split} likewise)"
    )


def _hparams_table(args: Args) -> str:
    rows = "\n".join(f"|{k}|{v}|" for k, v in sorted(dataclasses.asdict(args).items()))
    return "|param|value|\n|-|-|\n" + rows


def write_hparams(writer: SummaryWriter, args: Args, metrics: dict, step: int) -> None:
    """The run's flags and final metrics for TensorBoard's HParams tab (comparing runs).

    Written into the run's own event file: ``SummaryWriter.add_hparams`` would put them into a
    timestamped subdirectory, which TensorBoard shows as a second run. The metrics are also
    scalars ``hparams/<name>`` at the last step (the plugin reads their values from there)."""
    from torch.utils.tensorboard.summary import hparams

    flags = {
        k: v if isinstance(v, int | float | str | bool) else str(v)
        for k, v in dataclasses.asdict(args).items()
    }
    finals = {
        f"hparams/{k}": float(v)
        for k, v in metrics.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    }
    for summary in hparams(flags, finals):
        writer.file_writer.add_summary(summary, step)
    for tag, value in finals.items():
        writer.add_scalar(tag, value, step)


class Trainer:
    """One training run: data, model, head, optimiser, logging and checkpoints."""

    def __init__(
        self, args: Args, run_dir: Path, device: torch.device, clock: RunClock | None = None
    ) -> None:
        import torch

        from agents.checkpoint import RunClock
        from agents.heads import make_head
        from agents.losses import make_loss
        from agents.models import make_model, model_spec
        from agents.ood import NoisePool

        self.args, self.run_dir, self.device = args, run_dir, device
        root = args.data / args.domain
        self.train = load_split(root / "train", max_problems=args.train_problems, seed=args.seed)
        self.val = load_split(root / "val")
        self.head = make_head(
            args.dist,
            sigma=args.sigma,
            residual=args.residual,
            bound=args.bound,
            upper=args.upper,
            max_cost=int(self.train.h_star.max()),
        )
        if args.loss != "nll" and (args.ood != "none" or args.upper == "plan"):
            raise ConfigError(
                f"--loss {args.loss} takes neither --ood nor --upper plan (they extend the NLL)"
            )
        self.loss = make_loss(args.loss, self.head)
        self.train, self.val = self.loss.prepare(self.train), self.loss.prepare(self.val)
        spec = model_spec(args.model)
        self.inputs = {"train": spec.training_inputs(self.train), "val": spec.training_inputs(self.val)}
        torch.manual_seed(args.seed)
        model_config = {
            "name": args.model,
            **self.inputs["train"].model_config(),
            "n_outputs": self.head.n_outputs,
        }
        self.model = make_model(**model_config).to(device)
        self.model_config = {"model": model_config, "head": self.head.config, "domain": args.domain}
        lr = args.lr if args.lr is not None else spec.lr
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr, weight_decay=args.weight_decay)
        self.sampler = self.loss.sampler(self.train, self.inputs["train"].sizes(), args.batch_size, args.seed)
        self.noise = None
        if args.ood != "none":
            self.noise = NoisePool(self.train, args.ood, args.ood_ratio, self.head, spec, args.seed)
        self.step = 0
        self.best_val_mse = math.inf
        self.clock = clock or RunClock()

    def state(self) -> dict:
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "step": self.step,
            "best_val_mse": self.best_val_mse,
            self.clock.KEY: self.clock.total(),
        }

    def check_state(self, state: dict, path: Path, max_step: int) -> None:
        """Every field of a ``last.pt`` of this run (`agents.run_files`): a `CheckpointError`
        naming the file and the field, before anything is restored."""
        from agents.checkpoint import CheckpointError, RunClock
        from agents.run_files import check_number, check_optimizer_state, check_state_dict

        required = {"model", "optimizer", "step", "best_val_mse"}
        fields = required | {RunClock.KEY}
        if not required <= set(state) <= fields:
            missing, unknown = sorted(required - set(state)), sorted(set(state) - fields)
            raise CheckpointError(
                f"not a training state of agents.supervised (missing fields {missing}, unknown {unknown})",
                file=path,
            )
        steps = " (the steps the run is given)"
        check_number(state["step"], path, "step", integer=True, low=0, high=max_step, what=steps)
        check_number(state["best_val_mse"], path, "best_val_mse", low=0, allow_inf=True)
        if state.get(RunClock.KEY) is not None:
            check_number(state[RunClock.KEY], path, RunClock.KEY, low=0)
        check_state_dict(state["model"], self.model.state_dict(), path, "model")
        check_optimizer_state(state["optimizer"], self.optimizer, path)

    def restore(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.step = int(state["step"])
        self.best_val_mse = float(state["best_val_mse"])
        self.clock.restore(state)

    def train_step(self) -> dict[str, float]:
        import torch

        from agents.metrics import bound_inputs

        rows = self.sampler.batch(self.step)
        raw = self.model(self.inputs["train"].batch(rows, self.device))
        target, lower, base, upper = bound_inputs(self.train, self.head, rows, self.device)
        if self.noise is None:
            loss = self.loss(self.head, raw, self.train, rows)
        else:  # the NLL of the training states and the OOD loss of the noise states (agents.ood)
            nll = self.head.nll(raw, target, lower, base, upper)
            loss = self.noise.loss(self.model, nll, self.step, rows)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.grad_clip)
        self.optimizer.step()
        with torch.no_grad():
            mse = (self.head.heuristic(raw, lower, base, upper) - target).square().nanmean()  # NaN: no h*
            sigma = self.head.mu_sigma(raw, base)[1].mean()
        return {self.loss.name: loss.item(), "mse": mse.item(), "sigma": sigma.item()}

    def validate(self) -> dict[str, float]:
        return self.loss.validate(self.model, self.head, self.inputs["val"], self.val, self.device)

    def save_last(self) -> None:
        from agents.checkpoint import save_training_state

        save_training_state(self.run_dir / "last.pt", self.state())


DEFAULT_STEPS = 3000


def train(args: Args) -> Path:
    """Run (or resume) training; return the run directory (with metrics.json)."""
    from torch.utils.tensorboard import SummaryWriter

    from agents.apps.run_record import SUPERVISED_ADDED_LATER
    from agents.checkpoint import (
        CheckpointError,
        RunClock,
        check_run_files,
        load_training_state,
        resumed_args,
        save_model_config,
        save_weights,
    )
    from agents.models import model_spec

    clock = RunClock()
    stored = None
    if args.resume is not None:
        stored, args = resumed_args(args, "agents.supervised", added_later=SUPERVISED_ADDED_LATER)
        run_dir = args.resume
        check_run_files(run_dir)
    else:
        lr = args.lr if args.lr is not None else model_spec(args.model).lr  # args.json keeps the value used
        args = dataclasses.replace(args, steps=args.steps or DEFAULT_STEPS, lr=lr)
        run_dir = args.runs / (args.name or run_name(args))
        if run_dir.exists():
            raise ConfigError(f"{run_dir} exists: pass --resume {run_dir} to continue it")
    ensure_dataset(args)
    device = resolve_device(args.device)
    trainer = Trainer(args, run_dir, device, clock)
    run_dir.mkdir(parents=True, exist_ok=True)
    last = run_dir / "last.pt"
    if args.resume is not None and (last.exists() or last.is_symlink()):  # a directory there is an error
        state = load_training_state(last)
        trainer.check_state(state, last, max(stored.steps, args.steps))
        try:
            trainer.restore(state)
        except (KeyError, RuntimeError, ValueError, TypeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CheckpointError(f"the training state does not fit this run ({first})", file=last) from None
    stored = {k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(args).items()}
    atomic_write_json(run_dir / "args.json", {**stored, "resume": None})
    save_model_config(run_dir / "model.json", trainer.model_config)
    writer = SummaryWriter(str(run_dir), purge_step=trainer.step if trainer.step else None)
    if trainer.step == 0:
        writer.add_text("hyperparameters", _hparams_table(args))

    bar = tqdm(
        total=args.steps,
        initial=trainer.step,
        desc="train",
        unit="step",
        disable=args.quiet,
        dynamic_ncols=True,
    )
    last_log = time.perf_counter()
    steps_since = 0
    while trainer.step < args.steps:
        stats = trainer.train_step()
        trainer.step += 1
        steps_since += 1
        step = trainer.step
        if step % 10 == 0 or step == args.steps:
            now = time.perf_counter()
            rate = steps_since / max(1e-9, now - last_log)
            last_log, steps_since = now, 0
            for k, v in stats.items():
                writer.add_scalar(f"train/{k}", v, step)
            writer.add_scalar("train/lr", trainer.optimizer.param_groups[0]["lr"], step)
            writer.add_scalar("train/steps_per_s", rate, step)
            shown = {name: f"{stats[name]:.3f}" for name in (trainer.loss.name, "mse")}
            bar.set_postfix(shown, refresh=False)
        if step % args.val_every == 0 or step == args.steps:
            val = trainer.validate()
            for k, v in val.items():
                writer.add_scalar(f"val/{k}", v, step)
            if val[trainer.loss.select] < trainer.best_val_mse:  # the loss's metric (nll: MSE)
                trainer.best_val_mse = val[trainer.loss.select]
                save_weights(run_dir / "best.safetensors", trainer.model)
            trainer.save_last()
            writer.flush()
        bar.update(1)
    bar.close()

    metrics = test_metrics(args, trainer, run_dir)
    for k, v in metrics.items():
        if isinstance(v, float):
            writer.add_scalar(f"test/{k.removeprefix('test_')}", v, trainer.step)
    metrics["wall_seconds"] = clock.total()  # every call's, data loading included (None: not known)
    write_hparams(writer, args, metrics, trainer.step)
    writer.close()
    atomic_write_json(run_dir / "metrics.json", metrics)
    return run_dir


def test_metrics(args: Args, trainer: Trainer, run_dir: Path) -> dict:
    """Test-split accuracy of the best checkpoint, beside hFF's and LM-cut's."""
    from agents.checkpoint import load_weights
    from agents.confidence import write_run_confidence
    from agents.metrics import baseline_mse, evaluate_split
    from agents.models import model_spec

    test = load_split(args.data / args.domain / args.test_split)
    load_weights(run_dir / "best.safetensors", trainer.model)
    spec = model_spec(args.model)
    model_metrics = evaluate_split(
        trainer.model, trainer.head, spec.training_inputs(test), test, trainer.device
    )
    write_run_confidence(
        run_dir, trainer.model, trainer.head, spec, trainer.train, test, trainer.device, args.seed
    )
    return {
        "test_states": len(test),
        "test_problems": len(test.problems),
        **{f"test_{k}": v for k, v in model_metrics.items()},
        **{f"test_{k}": v for k, v in baseline_mse(test).items()},
        f"best_val_{trainer.loss.select}": trainer.best_val_mse,
        "steps": trainer.step,
    }


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


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = tyro.cli(Args, args=argv, default=load_config_defaults(argv), description=__doc__)
        run_dir = train(args)
        from agents.apps.run_record import run_args

        args = run_args(run_dir)[1]  # the labels below come from the run's own record
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    m = json.loads((run_dir / "metrics.json").read_text())
    print(f"run: {run_dir}")
    print(f"test split: {m['test_states']} states of {m['test_problems']} problems")
    print(f"{'heuristic':<28} {'test MSE':>10}")
    label = f"{args.model} {args.dist.upper()} {args.sigma}/{args.residual}"
    print(f"{label:<28} {m['test_mse']:>10.3f}")
    if args.dist == "n":
        print(f"{label + ' +clip':<28} {m['test_mse_clip']:>10.3f}")
    print(f"{'hFF':<28} {m['test_hff_mse']:>10.3f}")
    print(f"{'LM-cut':<28} {m['test_lmcut_mse']:>10.3f}")
    from agents.losses import LOSSES

    select = LOSSES[args.loss].select
    name = {"mse": "MSE"}.get(select, select.replace("_", " "))
    print(f"(test NLL {m['test_nll']:.3f}; best validation {name} {m[f'best_val_{select}']:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
