"""Reinforcement learning with sb3-contrib's MaskablePPO on PDDL problems.

    python -m agents.rl --problem ferry-l3-c3-s1 --total-timesteps 50000          # one problem, MLP
    python -m agents.rl --policy relational --domain ferry --total-timesteps 100000 # a whole split
    tensorboard --logdir runs

Two policies (``--policy``):

- ``flat`` (default; the smallest example of the environment's RL door): one fixed small
  problem (a file, or the name of a problem of the domain's ``train`` split),
  ``gym.make("pddl/<domain>-v1", obs="flat", heuristics=())``, SB3's MLP policy, and a greedy
  evaluation on that problem.
- ``relational``: a whole split (``--split``, ``--train-problems`` of them spread over its sizes),
  each of ``--num-envs`` sub-environments drawing problems of different sizes; observations are
  padded ILGs with the action table (``obs="ilg", padded=True, action_table=True``) and the policy
  is `agents.policies.RelationalMaskablePolicy`, a GNN that scores every ground action from its
  schema and its argument objects. After training, the greedy policy plays the held-out problems
  of ``--eval-split`` (`agents.policies.greedy`) and each plan length is compared with the
  optimal one (A* + LM-cut, `pddlgym_sl.search.astar`).

Both pass the action mask to MaskablePPO through the environment's ``action_masks()`` method, so
the policy only picks applicable actions, and use ``--threads`` torch threads (default 1).

A run writes ``runs/rl__<domain>__<problem or split>__<label>__s<seed>__<time>/`` (label
``maskableppo`` or ``relational-maskableppo``): TensorBoard
events (SB3's ``rollout/`` and ``train/`` tags, ``eval/`` after training, the hyperparameters as
a text table), ``args.json``, the policy (``model.zip``, SB3's format, for ``flat``;
``policy.safetensors`` and ``policy.json`` for ``relational``, loaded without unpickling by
``--load``), ``metrics.json`` (success rate and mean plan length, and for ``relational`` the mean
optimal length of the solved problems) and, for ``relational``, ``episodes-<eval split>.json``
(per problem: solved, length, optimal length). ``--load RUN`` writes ``metrics-<eval split>.json``
and ``episodes-<eval split>.json`` into that run directory.

This module is the command line: `Args` is `agents.training.ppo.PPOConfig`, the library that does
the work (`agents.training.ppo.train_ppo`).
"""

from __future__ import annotations

import sys
from typing import Any

from agents.training.ppo import PPOConfig, train_ppo
from pddlgym_sl.cli import Command, tyro_parse

__all__ = ["COMMAND", "Args", "cli", "main"]

Args = PPOConfig
"""The command's flags (field docstrings are their help texts)."""


def main(args: Args) -> dict[str, Any]:
    """Train (or load), evaluate, write the run directory and print it with the metrics; return the
    metrics."""
    run_dir, metrics = train_ppo(args)
    print(f"run: {run_dir}")
    print(" ".join(f"{k}={v if not isinstance(v, float) else round(v, 3)}" for k, v in metrics.items()))
    return metrics


def _run(args: Args) -> None:
    main(args)


COMMAND = Command("python -m agents.rl", tyro_parse(Args, __doc__), _run, extra="rl")


def cli(argv: list[str] | None = None) -> int:
    """``python -m agents.rl``: parse, run; a bad input (`PDDLError`: an unknown problem, a missing
    extra, a device that is not there, ...) is one line on stderr and exit status 2."""
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(cli())
