"""Benchmark: the value-learning loop of ``python -m agents.rl_value`` beside the plain environment.

    python benchmarks/rl_value_speed.py [--domain ferry --train-problems 20 --num-envs 4 --seconds 10]
    python benchmarks/rl_value_speed.py --tasks DIR          # your own problem files

On the same ``--num-envs`` environments over the same problems (``agents.training.value.make_envs``:
``pddl/<domain>-v1``, the lower bound LM-cut in ``info``), in one process, four rates:

- ``env (random)``: env steps/s of a uniformly random policy over the applicable actions, the plain
  environment rate (``info["bounds"]`` included, as the learner needs it);
- ``act``: env steps/s of the learner's acting (`ValueLearner.act`: the successors of every
  environment's state, one forward pass of the online network per problem among them, ε-greedy
  choice, the step, the replay buffer);
- ``update``: learner updates/s (`ValueLearner.update`: a replay batch of ``--batch-size`` states,
  their successors through the target network, the loss and one AdamW step);
- ``loop``: env steps/s of the whole loop with one update per ``--train-every`` env steps (what a
  run does after ``--learning-starts``).

Ratios are against ``env (random)``. A warm-up (acting and updating for ``--warmup`` rounds)
excludes JIT compilation. Torch runs on ``--threads`` threads (default 1).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from agents.training import ValueConfig
from agents.training.value import ValueLearner


def _timed(fn, seconds: float, count) -> float:
    """Rate of ``count()`` growth per second while calling ``fn`` for about ``seconds``."""
    start, before = time.perf_counter(), count()
    while time.perf_counter() - start < seconds:
        fn()
    return (count() - before) / (time.perf_counter() - start)


def random_env_rate(learner: ValueLearner, seconds: float, seed: int) -> float:
    """Env steps/s of a uniformly random policy on the learner's environments (resets excluded)."""
    rng = np.random.default_rng(seed)
    envs = learner.envs
    masks = []
    for env in envs:
        _, info = env.reset(options={"problem": int(rng.integers(len(learner.tasks)))})
        masks.append(info["action_mask"])
    steps, busy = 0, 0.0
    while busy < seconds:
        for i, env in enumerate(envs):
            action = int(rng.choice(np.flatnonzero(masks[i])))
            t = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            busy += time.perf_counter() - t
            steps += 1
            masks[i] = info["action_mask"]
            if terminated or truncated or not masks[i].any():
                _, info = env.reset(options={"problem": int(rng.integers(len(learner.tasks)))})
                masks[i] = info["action_mask"]
    return steps / busy


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--domain", default="ferry")
    parser.add_argument("--tasks", type=Path, default=None)
    parser.add_argument("--train-problems", type=int, default=20)
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--model", default="nlm")
    parser.add_argument("--dist", default="tn", choices=("n", "tn"))
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--train-every", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    torch.set_num_threads(opts.threads)
    config = ValueConfig(
        dist=opts.dist,
        model=opts.model,
        domain=opts.domain,
        tasks=opts.tasks,
        train_problems=opts.train_problems,
        num_envs=opts.num_envs,
        batch_size=opts.batch_size,
        train_every=opts.train_every,
        learning_starts=0,
        seed=opts.seed,
        device="cpu",
    )
    learner = ValueLearner(config, Path(tempfile.mkdtemp()) / "run")  # nothing is written there
    for _ in range(opts.warmup):  # JIT compilation and a filled buffer
        learner.act()
        learner.update()

    def loop() -> None:
        learner.act()
        for _ in range(learner.updates_due()):
            learner.update()

    learner.updates = learner.step // opts.train_every + 1  # the loop starts with no update owed
    rows = {
        "env (random)": random_env_rate(learner, opts.seconds, opts.seed),
        "act": _timed(learner.act, opts.seconds, lambda: learner.step),
        "update": _timed(learner.update, opts.seconds, lambda: learner.updates),
    }
    learner.updates = learner.step // opts.train_every + 1
    rows["loop"] = _timed(loop, opts.seconds, lambda: learner.step)
    where = opts.tasks or f"{opts.domain} train ({opts.train_problems} problems)"
    print(
        f"{where}: {opts.num_envs} envs, {opts.model} {opts.dist}, batch {opts.batch_size}, "
        f"{opts.threads} torch thread(s)"
    )
    units = {"update": "updates/s"}
    base = rows["env (random)"]
    for name, rate in rows.items():
        ratio = "" if name == "update" else f"  ({rate / base:.3f} x env)"
        print(f"  {name:<14} {rate:>10.1f} {units.get(name, 'env steps/s')}{ratio}")


if __name__ == "__main__":
    main()
