"""What both MaskablePPO runs share: the model, the progress bar, the run directory, the TensorBoard
writer with the hyperparameters, and the end of a run (the ``eval/`` scalars and the metrics file)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agents.training.ppo.config import RUN_LABELS, PPOConfig
from pddlgym_sl.errors import ConfigError

__all__ = ["finish", "hyperparameter_writer", "make_ppo", "make_run_dir", "progress_callback"]


def progress_callback(total: int, quiet: bool):
    """A tqdm progress bar over environment steps (SB3's own needs ``rich``)."""
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm import tqdm

    class TqdmCallback(BaseCallback):
        def _on_training_start(self) -> None:
            self.bar = tqdm(total=total, unit="step", desc="MaskablePPO", disable=quiet)

        def _on_step(self) -> bool:
            self.bar.update(self.training_env.num_envs)
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    return TqdmCallback()


def make_ppo(policy: Any, venv: Any, config: PPOConfig, run_dir: Path, **kwargs: Any):
    """SB3-contrib's MaskablePPO with the config's hyperparameters, logging to the run directory."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure

    model = MaskablePPO(
        policy,
        venv,
        learning_rate=config.learning_rate,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        ent_coef=config.ent_coef,
        seed=config.seed,
        device=config.device,
        verbose=0,
        **kwargs,
    )
    model.set_logger(configure(str(run_dir), ["tensorboard", "csv"]))
    return model


def hyperparameter_writer(run_dir: Path, config: PPOConfig):
    """A TensorBoard writer into the run directory, its hyperparameters written as a text table."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(run_dir))
    table = "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in asdict(config).items())
    writer.add_text("hyperparameters", table)
    return writer


def finish(writer, path: Path, metrics: dict[str, Any], step: int) -> None:
    """End a run: its numeric metrics as ``eval/`` scalars at `step`, and the metrics file at `path`."""
    from pddlgym_sl.io import atomic_write_json

    for key, value in metrics.items():
        if isinstance(value, int | float):
            writer.add_scalar(f"eval/{key}", value, step)
    writer.close()
    atomic_write_json(path, metrics)


def make_run_dir(config: PPOConfig, what: str) -> Path:
    """The new run directory (``--name``, or ``rl__<domain>__<what>__<label>__s<seed>__<time>``) with
    its ``args.json``; `ConfigError` when a named one exists."""
    from agents.training.configs import run_stamp
    from pddlgym_sl.io import atomic_write_json

    label = RUN_LABELS[config.policy]
    run_dir = config.log_dir / (
        config.name or f"rl__{config.domain}__{what}__{label}__s{config.seed}__{run_stamp()}"
    )
    if config.name is not None and run_dir.exists():
        raise ConfigError(f"{run_dir} exists: choose another --name")
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(run_dir / "args.json", json.loads(json.dumps(asdict(config), default=str)))
    return run_dir
