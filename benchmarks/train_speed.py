"""Benchmark: supervised training steps per second per model at batch 256 on the ferry train set.

    python benchmarks/train_speed.py [--data data/small] [--steps 30] [--threads 2] [--models hgn ...]

Builds `agents.training.supervised.Trainer` (TN head, learned sigma, hFF residual, the paper's
optimiser settings) for each model on the same training split and times full training steps
(batch assembly, forward, NLL, backward, gradient clipping, AdamW), after warm-up steps that
absorb JIT compilation. The small ferry dataset is created if absent. Reference in the same
process: the linear model, whose step is pure overhead (data + head + optimiser).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from agents.registries import MODELS
from agents.training import SupervisedConfig
from agents.training.datasets import ensure_dataset
from agents.training.supervised import Trainer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("data/small"))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=256)
    models = list(MODELS)
    parser.add_argument("--models", nargs="+", default=models, choices=models, help="(linear always runs)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    ensure_dataset(SupervisedConfig(data=args.data))
    print(f"ferry train split of {args.data}, batch {args.batch_size}, {args.threads} threads")
    print(f"{'model':<8} {'steps/s':>9} {'ms/step':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in ("linear", *(m for m in args.models if m != "linear")):  # the reference first
            config = SupervisedConfig(model=model, data=args.data, batch_size=args.batch_size, device="cpu")
            trainer = Trainer(config, Path(tmp) / model)
            for _ in range(args.warmup):
                trainer.train_step()
                trainer.step += 1
            start = time.perf_counter()
            for _ in range(args.steps):
                trainer.train_step()
                trainer.step += 1
            seconds = (time.perf_counter() - start) / args.steps
            print(f"{model:<8} {1 / seconds:>9.1f} {1000 * seconds:>9.1f}")


if __name__ == "__main__":
    main()
