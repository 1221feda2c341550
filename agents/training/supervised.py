"""Supervised training of a learned heuristic: `Trainer`, configured by a `SupervisedConfig`.

    trainer = Trainer(SupervisedConfig(dist="tn", steps=3000), "runs/ferry-tn")
    trainer.learn()                              # -> metrics (also in runs/ferry-tn/metrics.json)
    Trainer.load("runs/ferry-tn", steps=6000).learn()   # continue it to 6,000 steps

A model (`agents.models.MODELS`) predicts the optimal cost-to-go h* as a Gaussian N(μ, σ), a
truncated Gaussian TN(μ, σ, l, u) whose lower bound l is an admissible heuristic (Núñez-Molina et
al., IJCAI 2024), or a categorical over the costs (Heller et al., SoCS 2022); the loss is the
head's negative log-likelihood or the ranking loss (`agents.losses`), optimised by AdamW with
gradient-norm clipping. Batches are drawn per step from a generator seeded with the step, so a
run continued from its ``last.pt`` ends, on the CPU, with the weights of an uninterrupted one.

The run directory holds ``args.json`` (the configuration and the package version,
`agents.training.records`), ``model.json`` (how to rebuild model and head), ``best.safetensors``
(best validation value of the loss's selection metric), ``last.pt`` (the whole training state,
loaded with ``weights_only=True``), TensorBoard events, ``metrics.json`` (test metrics of the best
checkpoint beside hFF's and LM-cut's) and the confidence files of `agents.confidence`.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from agents.checkpoint import (
    CheckpointError,
    RunClock,
    check_run_files,
    load_training_state,
    load_weights,
    save_model_config,
    save_training_state,
    save_weights,
)
from agents.devices import resolve_device
from agents.heads import make_head
from agents.losses import NLLLoss, RankLoss, labelled_nll, make_loss
from agents.metrics import baseline_mse, bound_inputs, evaluate_split
from agents.micro_batches import MemoryBudgetError, fitting_chunks, memory_budget, state_cost
from agents.models import make_model, model_spec
from agents.ood import NoisePool
from agents.training.configs import SupervisedConfig
from agents.training.records import resumed_config, write_record
from pddlgym_sl.data.dataset import concat_splits, load_split
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.io import atomic_write_json

__all__ = ["Trainer", "hparams_table", "write_hparams"]


class Trainer:
    """One supervised training run: data, model, head, loss, optimiser, logging and checkpoints.

    Args:
        config: every hyperparameter (`SupervisedConfig`); ``lr=None`` becomes the model's.
        run_dir: the run directory; it must not exist yet (`Trainer.load` continues a run).

    The dataset of ``config.data`` must exist (`agents.training.datasets.ensure_dataset` creates
    the default one); a device that is not there is a `ConfigError` before anything is loaded.
    """

    def __init__(self, config: SupervisedConfig, run_dir: str | Path, *, _resuming: bool = False) -> None:
        self.clock = RunClock()
        self.run_dir = Path(run_dir)
        if not _resuming and self.run_dir.exists():
            raise ConfigError(f"{self.run_dir} exists: pass --resume {self.run_dir} to continue it")
        self.device = resolve_device(config.device)
        spec = model_spec(config.model)
        self.config = dataclasses.replace(config, lr=config.lr if config.lr is not None else spec.lr)
        root = config.data / config.domain
        self.train = load_split(root / "train", max_problems=config.train_problems, seed=config.seed)
        if config.interval_split is not None:  # states known to lie in [l, u] (satisficing plans)
            self.train = concat_splits(self.train, load_split(root / config.interval_split))
        self.val = load_split(root / "val")
        self.head = make_head(
            config.dist,
            sigma=config.sigma,
            residual=config.residual,
            bound=config.bound,
            upper=config.upper,
            max_cost=int(self.train.h_star.max()),
        )
        self.loss = make_loss(config.loss, self.head, config.nll_weight, config.rank_on)
        self.train, self.val = self.loss.prepare(self.train), self.loss.prepare(self.val)
        self.spec = spec
        self.inputs = {"train": spec.training_inputs(self.train), "val": spec.training_inputs(self.val)}
        torch.manual_seed(config.seed)
        model_config = {
            "name": config.model,
            **self.inputs["train"].model_config(
                **{arg: getattr(config, name) for name, arg in spec.fit_options.items()}
            ),
            "n_outputs": self.head.n_outputs,
        }
        self.model = make_model(**model_config).to(self.device)
        self.model_config = {"model": model_config, "head": self.head.config, "domain": config.domain}
        self.optimizer = torch.optim.AdamW(
            self.model.parameters(), lr=self.config.lr, weight_decay=config.weight_decay
        )
        self.sampler = self.loss.sampler(
            self.train, self.inputs["train"].sizes(), config.batch_size, config.seed
        )
        self.noise = None
        if config.ood != "none":
            self.noise = NoisePool(self.train, config.ood, config.ood_ratio, self.head, spec, config.seed)
        self.step = 0
        self.best_val = math.inf  # of the loss's selection metric (nll: the validation MSE)

    # ------------------------------------------------------------------ continuing a run
    @classmethod
    def load(cls, run_dir: str | Path, steps: int | None = None) -> Trainer:
        """The trainer of the run in `run_dir`, restored from its ``last.pt`` (when there is one),
        with `steps` as its new budget when given; `CheckpointError` naming the file and the field
        when a file of the run does not hold what it should."""
        run_dir = Path(run_dir)
        stored, config = resumed_config(run_dir, "supervised", steps)
        check_run_files(run_dir)
        trainer = cls(config, run_dir, _resuming=True)
        last = run_dir / "last.pt"
        if last.exists() or last.is_symlink():  # a directory there is an error
            state = load_training_state(last)
            trainer.check_state(state, last, max(stored.steps, config.steps))
            try:
                trainer.restore(state)
            except (KeyError, RuntimeError, ValueError, TypeError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise CheckpointError(
                    f"the training state does not fit this run ({first})", file=last
                ) from None
        return trainer

    def state(self) -> dict[str, Any]:
        """The whole training state (``last.pt``)."""
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "step": self.step,
            "best_val_mse": self.best_val,
            self.clock.KEY: self.clock.total(),
        }

    def check_state(self, state: dict, path: Path, max_step: int) -> None:
        """Every field of a ``last.pt`` of this run (`agents.run_files`): a `CheckpointError`
        naming the file and the field, before anything is restored."""
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

    def restore(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.step = int(state["step"])
        self.best_val = float(state["best_val_mse"])
        self.clock.restore(state)

    # ------------------------------------------------------------------ one step
    def train_step(self, stats: bool = True) -> dict[str, float]:
        """One AdamW step on the step's batch; the loss, and with `stats` the batch's MSE and mean
        σ (NaN without: the TN's mean costs a sixth of a WL model's step, and the loop logs them
        every tenth step only).

        A batch whose forward pass would not fit the memory limit is computed in parts
        (`agents.micro_batches`) whose gradients add up to the batch's: the NLL of a row does
        not depend on the other rows. The ranking loss (pairs across the batch) and OOD training
        (noise states beside the batch) need the whole batch at once."""
        rows = self.sampler.batch(self.step)
        cost = state_cost(self.model)
        budget = memory_budget(self.config.memory_limit, self.device) if cost is not None else 0
        chunks = fitting_chunks(rows, self.inputs["train"].sizes(), cost, budget, what="a training state")
        if len(chunks) > 1 and (self.noise is not None or not isinstance(self.loss, NLLLoss)):
            raise MemoryBudgetError(
                f"a batch of {len(rows)} states does not fit the memory limit in one forward pass, "
                f"and --loss {self.loss.name}{' with --ood' if self.noise is not None else ''} needs "
                "the whole batch at once: lower --batch-size or give more memory (--memory-limit MB)"
            )
        self.optimizer.zero_grad(set_to_none=True)
        loss_sum = sq_sum = sigma_sum = 0.0
        labelled = 0
        for chunk in chunks:
            raw = self.model(self.inputs["train"].batch(chunk, self.device))
            target, lower, base, upper = bound_inputs(self.train, self.head, chunk, self.device)
            if self.noise is not None:  # the NLL of the training states and the OOD loss (agents.ood)
                nll = labelled_nll(self.head, raw, self.train, chunk)
                loss = self.noise.loss(self.model, nll, self.step, chunk)
            elif len(chunks) > 1:  # this part's share of the batch's mean NLL
                loss = labelled_nll(self.head, raw, self.train, chunk).sum() / len(rows)
            else:
                loss = self.loss(self.head, raw, self.train, chunk)
            loss.backward()
            loss_sum += loss.item()
            if not stats:
                continue
            with torch.no_grad():
                exact = self.train.exact_rows(chunk)
                if exact is not None:  # an interval's upper end is no h*
                    target = target.masked_fill(~torch.as_tensor(exact, device=target.device), math.nan)
                sq = (self.head.heuristic(raw, lower, base, upper) - target).square()
                sq_sum += float(sq.nansum())  # NaN: a state without h*
                labelled += int((~sq.isnan()).sum())
                sigma_sum += float(self.head.mu_sigma(raw, base)[1].sum())
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
        self.optimizer.step()
        mse = sq_sum / labelled if labelled else math.nan
        sigma = sigma_sum / len(rows) if stats else math.nan
        return {self.loss.name: loss_sum, "mse": mse, "sigma": sigma}

    def validate(self) -> dict[str, float]:
        return self.loss.validate(self.model, self.head, self.inputs["val"], self.val, self.device)

    def save_last(self) -> None:
        save_training_state(self.run_dir / "last.pt", self.state())

    # ------------------------------------------------------------------ the loop
    def learn(self, progress_bar: bool = True) -> dict[str, Any]:
        """Train from the current step to ``config.steps`` (or until ``config.time_budget`` seconds
        have passed), validating every ``val_every`` steps (the best weights kept) and
        checkpointing there; then test the best weights. Returns the
        metrics, also written to ``metrics.json``."""
        config, run_dir = self.config, self.run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        write_record(run_dir, config)
        save_model_config(run_dir / "model.json", self.model_config)
        writer = SummaryWriter(str(run_dir), purge_step=self.step if self.step else None)
        if self.step == 0:
            writer.add_text("hyperparameters", hparams_table(config))
        bar = tqdm(
            total=config.steps,
            initial=self.step,
            desc="train",
            unit="step",
            disable=not progress_bar,
            dynamic_ncols=True,
        )
        last_log, steps_since = time.perf_counter(), 0
        deadline = None if config.time_budget is None else time.perf_counter() + config.time_budget
        stopped = "steps"
        while self.step < config.steps:
            logged = (self.step + 1) % 10 == 0 or self.step + 1 == config.steps  # the scalars below
            stats = self.train_step(stats=logged)
            self.step += 1
            steps_since += 1
            out_of_time = deadline is not None and time.perf_counter() >= deadline
            if self.step % 10 == 0 or self.step == config.steps:
                now = time.perf_counter()
                rate = steps_since / max(1e-9, now - last_log)
                last_log, steps_since = now, 0
                for k, v in stats.items():
                    writer.add_scalar(f"train/{k}", v, self.step)
                writer.add_scalar("train/lr", self.optimizer.param_groups[0]["lr"], self.step)
                writer.add_scalar("train/steps_per_s", rate, self.step)
                bar.set_postfix({k: f"{stats[k]:.3f}" for k in (self.loss.name, "mse")}, refresh=False)
            if self.step % config.val_every == 0 or self.step == config.steps or out_of_time:
                val = self.validate()
                for k, v in val.items():
                    writer.add_scalar(f"val/{k}", v, self.step)
                if val[self.loss.select] < self.best_val:
                    self.best_val = val[self.loss.select]
                    save_weights(run_dir / "best.safetensors", self.model)
                self.save_last()
                writer.flush()
            bar.update(1)
            if out_of_time:
                stopped = "time_budget"
                break
        bar.close()

        metrics = self.test_metrics()
        for k, v in metrics.items():
            if isinstance(v, float):
                writer.add_scalar(f"test/{k.removeprefix('test_')}", v, self.step)
        metrics["stopped"] = stopped  # what ended the training: its steps or --time-budget
        metrics["wall_seconds"] = self.clock.total()  # every call's, data loading included (None: not known)
        write_hparams(writer, config, metrics, self.step)
        writer.close()
        atomic_write_json(run_dir / "metrics.json", metrics)
        return metrics

    def test_metrics(self) -> dict[str, Any]:
        """Test-split accuracy of the best checkpoint, beside hFF's and LM-cut's; writes the run's
        confidence files (`agents.confidence`)."""
        from agents.confidence import write_run_confidence

        config = self.config
        test = load_split(config.data / config.domain / config.test_split)
        load_weights(self.run_dir / "best.safetensors", self.model)
        model_metrics = evaluate_split(
            self.model, self.head, self.spec.training_inputs(test), test, self.device
        )
        write_run_confidence(
            self.run_dir, self.model, self.head, self.spec, self.train, test, self.device, config.seed
        )
        if isinstance(self.loss, RankLoss) and test.siblings is not None:  # what a ranking run is for
            ranked = self.loss.prepare(test)
            inputs = self.spec.training_inputs(ranked)
            ranking = self.loss.validate(self.model, self.head, inputs, ranked, self.device)
            model_metrics |= {k: ranking[k] for k in ("pair_accuracy", "rank_loss")}
        return {
            "test_states": len(test),
            "test_problems": len(test.problems),
            **{f"test_{k}": v for k, v in model_metrics.items()},
            **{f"test_{k}": v for k, v in baseline_mse(test).items()},
            f"best_val_{self.loss.select}": self.best_val,
            "steps": self.step,
        }


def hparams_table(config: SupervisedConfig) -> str:
    """The configuration as a markdown table (TensorBoard's text tab)."""
    rows = "\n".join(f"|{k}|{v}|" for k, v in sorted(dataclasses.asdict(config).items()))
    return "|param|value|\n|-|-|\n" + rows


def write_hparams(writer: SummaryWriter, config: SupervisedConfig, metrics: dict, step: int) -> None:
    """The configuration and final metrics for TensorBoard's HParams tab (comparing runs).

    Written into the run's own event file: ``SummaryWriter.add_hparams`` would put them into a
    timestamped subdirectory, which TensorBoard shows as a second run. The metrics are also
    scalars ``hparams/<name>`` at the last step (the plugin reads their values from there)."""
    from torch.utils.tensorboard.summary import hparams

    flags = {
        k: v if isinstance(v, int | float | str | bool) else str(v)
        for k, v in dataclasses.asdict(config).items()
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
