"""A trained run's accuracy on a labelled split (Table 1): MSE, MSE+clip and NLL of its best
checkpoint beside hFF's and LM-cut's MSE; ``python -m agents.evaluate --run R --accuracy``."""

from __future__ import annotations

from pathlib import Path

from agents.devices import resolve_device
from agents.evaluation.config import EvaluationConfig
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.io import atomic_write_json

__all__ = ["accuracy", "run_accuracy"]


def run_accuracy(config: EvaluationConfig) -> dict[str, float]:
    """``--accuracy``: the run's accuracy on the split it tested on (`accuracy`), written to
    ``<run>/eval/accuracy.json``; `ConfigError` when there is no run or no test split."""
    from agents.training.records import run_args

    if config.run is None or not (config.run / "model.json").exists():
        raise ConfigError("--accuracy needs a trained run: --run DIR (with model.json)")
    record = run_args(config.run)[1]
    data, domain = config.data or record.data, config.domain or record.domain
    split = getattr(record, "test_split", "test")  # the split its training tested on
    if data is None or not (data / domain / split).is_dir():
        where = data / domain / split if data is not None else "its dataset (the run records none)"
        raise ConfigError(
            f"--accuracy needs the test split of the run's data: {where} is missing (--data DIR)"
        )
    metrics = accuracy(config.run, data, domain, config.device, split)
    atomic_write_json(config.run / "eval" / "accuracy.json", metrics)
    return metrics


def accuracy(run: Path, data: Path, domain: str, device: str, split: str = "test") -> dict[str, float]:
    """Accuracy of a run's best checkpoint on a labelled split beside hFF and LM-cut (Table 1)."""
    from agents.learned_heuristic import TrainedModel
    from agents.metrics import baseline_mse, evaluate_split
    from agents.models import model_spec
    from pddlgym_sl.data.dataset import load_split

    trained = TrainedModel.load(run, device=device)
    test = load_split(data / domain / split)
    inputs = model_spec(trained.name).training_inputs(test)
    metrics = evaluate_split(trained.model, trained.head, inputs, test, resolve_device(device))
    return {
        **{f"test_{k}": v for k, v in metrics.items()},
        **{f"test_{k}": v for k, v in baseline_mse(test).items()},
    }
