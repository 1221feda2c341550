"""A run's confidence: its training-data thresholds and its Table 1 metrics (Heller et al., SoCS 2022).

At the end of training (`agents.apps.supervised`) three files join the run directory:

- ``confidence.npz``: for every training state its label, the search value ĥ and the confidence
  of the best checkpoint (`agents.heads.Head.confidence`), computed by the same numpy path search
  uses (`Head.heuristic_values`, `Head.confidence_values`);
- ``thresholds.json``: the mean and adaptive thresholds (`pddlgym_sl.search.thresholds`) for the
  paper's fractions X = 5, 20, 40, 80 (any other X is computed from ``confidence.npz`` on demand,
  `run_threshold`);
- ``confidence.json``: the paper's Table 1 on the test split: mean in-distribution confidence,
  mean confidence on uniform and on weighted noise states (fresh noise of the training problems,
  `agents.ood`, `NOISE_STATES` of each shared out over the problems; only states with a finite
  admissible bound, the states search would evaluate), Kendall's τ_b between labels and
  predictions, and the reliability diagram (confidence against the fraction of states whose
  label falls in the unit bucket ``[ĥ − ½, ĥ + ½]``, in ten bins) with its expected calibration
  error.

A run trained before these files existed gets ``confidence.npz`` when `run_threshold` first needs
it (from its args.json: the same training problems); `refresh_run_confidence` (``agents.evaluate
--confidence``) rewrites all three files of a run.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.devices import resolve_device
from agents.heads import Head
from agents.inputs import TrainingInputs
from agents.micro_batches import evaluation_chunks
from agents.models.spec import ModelSpec
from agents.ood import NOISES, noise_split, pool_counts
from pddlgym_sl.data.dataset import LabelledSplit, load_split
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.io import atomic_save_npz, atomic_write_json
from pddlgym_sl.search.thresholds import THRESHOLDS, AdaptiveThreshold, MeanThreshold

__all__ = [
    "PAPER_PERCENTS",
    "THRESHOLD_KINDS",
    "confidence_metrics",
    "predict",
    "refresh_run_confidence",
    "reliability",
    "run_threshold",
    "threshold_of",
    "write_run_confidence",
]

TABLE_FILE, THRESHOLDS_FILE, METRICS_FILE = "confidence.npz", "thresholds.json", "confidence.json"
PAPER_PERCENTS = (5, 20, 40, 80)
"""The pruned fractions X of the paper's Table 2."""
THRESHOLD_KINDS = tuple(THRESHOLDS)
NOISE_STATES = 2000
RELIABILITY_BINS = 10


@torch.no_grad()
def predict(
    model: torch.nn.Module,
    head: Head,
    inputs: TrainingInputs,
    split: LabelledSplit,
    device: torch.device,
    rows: np.ndarray | None = None,
    batch_size: int = 1024,
) -> tuple[np.ndarray, np.ndarray]:
    """Search values ĥ and confidences (float64) of `rows` (default: all) of `split`, as search
    computes them (`agents.learned_heuristic.LearnedHeuristic`: float32 bounds, numpy head path)."""
    rows = np.arange(len(split)) if rows is None else np.asarray(rows)
    was_training = model.training
    model.eval()
    values, confidences = [], []
    for chunk in evaluation_chunks(model, inputs.sizes(), rows, batch_size):
        raw = model(inputs.batch(chunk, device))
        lower = split.values[head.lower_key][chunk].astype(np.float32)
        key = head.residual_key
        base = split.values[key][chunk].astype(np.float32) if key else None
        v = head.heuristic_values(raw, lower, base)
        values.append(v)
        confidences.append(head.confidence_values(raw, lower, base, v))
    model.train(was_training)
    if not values:
        return np.zeros(0), np.zeros(0)
    return np.concatenate(values), np.concatenate(confidences)


def threshold_of(
    table: dict[str, np.ndarray], kind: str, percent: float
) -> MeanThreshold | AdaptiveThreshold:
    """The `kind` threshold (``mean`` or ``adaptive``) pruning `percent`% of a training table."""
    if kind not in THRESHOLDS:
        raise ConfigError(f"unknown threshold kind {kind!r}; choose one of {', '.join(THRESHOLDS)}")
    return THRESHOLDS[kind](table["values"], table["confidences"], percent)


def _write_table(run_dir: Path, split: LabelledSplit, values: np.ndarray, confidences: np.ndarray) -> dict:
    table = {"labels": split.h_star, "values": values, "confidences": confidences}
    atomic_save_npz(run_dir / TABLE_FILE, **table)
    thresholds = {
        kind: {str(x): threshold_of(table, kind, x).to_dict() for x in PAPER_PERCENTS}
        for kind in THRESHOLD_KINDS
    }
    atomic_write_json(run_dir / THRESHOLDS_FILE, thresholds)
    return table


def reliability(confidences: np.ndarray, correct: np.ndarray, bins: int = RELIABILITY_BINS) -> dict[str, Any]:
    """Reliability diagram data: per equal-width confidence bin its states, mean confidence and
    accuracy; and the expected calibration error (sum over bins of |accuracy − confidence|, weighted)."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, confidences, side="right") - 1, 0, bins - 1)
    rows, ece = [], 0.0
    for b in range(bins):
        inside = which == b
        n = int(inside.sum())
        conf = float(confidences[inside].mean()) if n else None
        acc = float(correct[inside].mean()) if n else None
        if n:
            ece += n / len(confidences) * abs(acc - conf)
        rows.append(
            {
                "low": float(edges[b]),
                "high": float(edges[b + 1]),
                "states": n,
                "confidence": conf,
                "accuracy": acc,
            }
        )
    return {"bins": rows, "ece": ece}


def confidence_metrics(
    model: torch.nn.Module,
    head: Head,
    spec: ModelSpec,
    train: LabelledSplit,
    test: LabelledSplit,
    device: torch.device,
    seed: int,
) -> dict[str, Any]:
    """The paper's Table 1 for one run (see the module docstring)."""
    from scipy.stats import kendalltau

    values, confidences = predict(model, head, spec.training_inputs(test), test, device)
    correct = np.abs(test.h_star - values) <= 0.5
    tau = kendalltau(test.h_star, values).statistic if len(test) > 1 else math.nan
    out: dict[str, Any] = {
        "states": len(test),
        "confidence_in": float(confidences.mean()),
        "accuracy_in": float(correct.mean()),
        "kendall_tau": float(tau) if math.isfinite(tau) else None,  # None: constant predictions
        "reliability": reliability(confidences, correct),
    }
    counts = pool_counts(train, 1, NOISE_STATES)
    for kind in NOISES:  # fresh noise: another seed than training's
        pool = noise_split(train, kind, counts, seed + 1, head, spec.reads_features, finite_bound=True)
        _, noise_conf = predict(model, head, spec.training_inputs(pool), pool, device)
        out[f"confidence_{kind}"] = float(noise_conf.mean())
        out[f"noise_states_{kind}"] = len(pool)
    return out


def write_run_confidence(
    run_dir: Path,
    model: torch.nn.Module,
    head: Head,
    spec: ModelSpec,
    train: LabelledSplit,
    test: LabelledSplit,
    device: torch.device,
    seed: int,
) -> dict[str, Any]:
    """Write ``confidence.npz``, ``thresholds.json`` and ``confidence.json`` of a trained run (its best
    weights loaded in `model`); return the Table 1 metrics."""
    values, confidences = predict(model, head, spec.training_inputs(train), train, device)
    _write_table(run_dir, train, values, confidences)
    metrics = confidence_metrics(model, head, spec, train, test, device, seed)
    atomic_write_json(run_dir / METRICS_FILE, metrics)
    return metrics


def _run_splits(run_dir: Path) -> tuple[dict[str, Any], LabelledSplit]:
    """A run's args.json and its training split (the same problems as in training)."""
    from agents.checkpoint import load_json_object

    args = load_json_object(run_dir / "args.json")
    split_dir = Path(args["data"]) / args["domain"] / "train"
    return args, load_split(split_dir, max_problems=args.get("train_problems"), seed=args["seed"])


def refresh_run_confidence(run_dir: Path, device: str = "cpu") -> dict[str, Any]:
    """(Re)write a finished run's confidence files from its best checkpoint; return Table 1's metrics."""
    from agents.learned_heuristic import TrainedModel
    from agents.models import model_spec

    args, train = _run_splits(run_dir)
    test = load_split(Path(args["data"]) / args["domain"] / args.get("test_split", "test"))
    trained = TrainedModel.load(run_dir, device=device)
    spec = model_spec(trained.name)
    return write_run_confidence(
        run_dir, trained.model, trained.head, spec, train, test, resolve_device(device), args["seed"]
    )


def _training_table(run_dir: Path, device: str) -> dict[str, np.ndarray]:
    path = run_dir / TABLE_FILE
    if path.is_file():
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    from agents.learned_heuristic import TrainedModel
    from agents.models import model_spec

    _, train = _run_splits(run_dir)
    trained = TrainedModel.load(run_dir, device=device)
    inputs = model_spec(trained.name).training_inputs(train)
    values, confidences = predict(trained.model, trained.head, inputs, train, resolve_device(device))
    return _write_table(run_dir, train, values, confidences)


def run_threshold(
    run_dir: Path, kind: str, percent: float, device: str = "cpu"
) -> MeanThreshold | AdaptiveThreshold:
    """The `kind` threshold pruning `percent`% of the run's training states (computing and storing the
    run's ``confidence.npz`` first if it has none)."""
    return threshold_of(_training_table(Path(run_dir), device), kind, percent)
