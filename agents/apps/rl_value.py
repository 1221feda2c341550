"""Value learning without optimal labels: ``python -m agents.rl_value --dist tn|n [--clip]``.

The agent learns V(s) ≈ h*(s) for a domain's problems by interacting with the Gymnasium
environment (``pddl/<domain>-v1`` over a split, or ``pddl/custom-v1`` over ``--tasks DIR``), with
``--num-envs`` environments stepped together, a replay buffer and a target network, the paper's
future-work setting (section 6) and the residual value learning of Gehring et al. (ICAPS 2022). The
targets (`agents.value_targets`) need no optimal planner: the bootstrapped ``y(s) = 1 + min V̄(s')``
(0 at a goal, inf at a proven dead end), the admissible bound ``l`` of ``info["bounds"]`` (``--bound``,
LM-cut by default) and the best cost-to-go ``u`` observed from ``s`` on a goal-reaching trajectory.
Heads: ``--dist n`` (N over the raw ``y``; ``σ`` fixed by default, so the loss is the squared error,
as Gehring et al.), ``--dist n --clip`` (``y`` clipped to ``[l, u]``: the ablation; search with
``agents.evaluate --clip``) and ``--dist tn`` (``y`` clipped to ``[l, u]``, the NLL of
TN(μ, σ, l − 0.1, ∞) with ``--upper clip``, the default, or of TN(μ, σ, l − 0.1, u + 0.1) with
``--upper observed``, ``u = inf`` until known: docs/rl.md says why the default).
μ is a residual over hFF (``--residual``).

Acting: ε-greedy one-step lookahead, ``argmin_a 1 + V(succ(s, a))`` with the online network (ε
decays linearly from ``--epsilon-start`` to ``--epsilon-end`` over ``--epsilon-steps`` env steps).
Why not GBFS episodes with the current V: the lookahead evaluates exactly the successors a target
needs, each env step costs one forward pass whatever the problem's size, and an episode is one
trajectory, so every episode that reaches the goal gives an upper bound ``u`` for each state on it;
a GBFS episode jumps between open-list nodes (its states are not a trajectory: only its final plan's
states would get a ``u``) and its cost per episode grows with the search effort.

The run directory ``runs/rlv__<domain>__<model>__<dist>[+clip]__s<seed>__<time>/`` has the layout of
a supervised run, so ``python -m agents.evaluate --run DIR`` plans with it: ``args.json``,
``model.json``, ``best.safetensors`` (the latest weights: there are no labels to select on),
``last.pt`` (the whole learning state: networks, optimiser, replay buffer, upper bounds, RNG and the
environments' current episodes, loaded with ``weights_only=True``), TensorBoard events and
``metrics.json`` (and with ``--snapshot-every N``, ``snapshots/step-<steps>.safetensors`` for the
learning curves of ``agents.rl_value_curves``). ``--resume DIR [--steps N]`` continues it; on CPU
the result equals an uninterrupted run with the same seed (episodes are replayed into the
environments).

This module is the command line: `Args` is `agents.training.ValueConfig` plus where the run goes
and how it is shown; the learning loop is `agents.training.value.ValueLearner`.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from agents.training.configs import VALUE_DISTS, ValueConfig
from pddlgym_sl.cli import Command, tyro_parse
from pddlgym_sl.errors import ConfigError

__all__ = ["VALUE_DISTS", "Args", "main", "train"]


@dataclass
class Args(ValueConfig):
    """Learn a value function V(s) ≈ h*(s) by interaction, with an N or TN head and no optimal labels."""

    steps: int | None = None
    """environment steps, all environments together (default 20,000; when resuming, the stored value)"""
    runs: Path = Path("runs")
    """parent directory of run directories"""
    name: str | None = None
    """run directory name (default: rlv__<domain>__<model>__<dist>[+clip]__s<seed>__<time>)"""
    resume: Path | None = None
    """continue the run in this directory (its args.json is used; --steps may extend it)"""
    quiet: bool = False
    """no progress bar"""

    def training_config(self) -> ValueConfig:
        """The learning loop's configuration: every field of `ValueConfig`, the default steps when
        none are given."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(ValueConfig)}
        return ValueConfig(**{**values, "steps": self.steps or ValueConfig.steps})


def train(args: Args) -> Path:
    """Run (or resume) the value learning `args` describe; return the run directory (with metrics.json)."""
    from agents.devices import resolve_device
    from agents.training.records import resumed_config
    from agents.training.value import ValueLearner

    if args.resume is not None:
        resolve_device(resumed_config(args.resume, "rl_value", args.steps)[1].device)
        learner = ValueLearner.load(args.resume, steps=args.steps)
    else:
        config = args.training_config()
        resolve_device(config.device)  # refused before any work
        run_dir = args.runs / (args.name or config.run_name())
        if run_dir.exists():
            raise ConfigError(f"{run_dir} exists: pass --resume {run_dir} to continue it")
        learner = ValueLearner(config, run_dir)
    learner.learn(progress_bar=not args.quiet)
    return learner.run_dir


def run(args: Args) -> int:
    """Learn, then print what happened and how to plan with the run."""
    run_dir = train(args)
    m = json.loads((run_dir / "metrics.json").read_text())
    print(f"run: {run_dir}")
    print(
        f"{m['steps']} env steps, {m['updates']} updates, {m['episodes']} episodes "
        f"({m['solved_episodes']} reached the goal), u known for {m['states_with_upper_bound']} states"
    )
    print(f"plan with it: python -m agents.evaluate --run {run_dir}")
    return 0


COMMAND = Command("python -m agents.rl_value", tyro_parse(Args, __doc__), run, extra="learn")


def main(argv: list[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
