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
``--upper observed``, ``u = inf`` until known: the README says why the default).
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
learning curves of `agents.apps.rl_value_curves`). ``--resume DIR [--steps N]`` continues it; on CPU
the result equals an uninterrupted run with the same seed (episodes are replayed into the
environments).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tyro

from agents.choices import BOUNDS, DISTS, MODEL_NAMES, RESIDUALS, SIGMAS
from pddlgym_sl.arguments import check_ranges
from pddlgym_sl.errors import ConfigError

VALUE_DISTS = tuple(d for d in DISTS if d in ("n", "tn"))  # == those in value_targets.TARGET_MODES (a test)
"""The heads with a bootstrapped target (n, tn; cat's costs 0..H need a known largest cost)."""
TN_UPPERS = ("observed", "clip")
MAX_BATCH_SIZE = 1 << 20
"""Most states per update: a larger batch is a typo, and allocating it would exhaust memory."""
MAX_BUFFER_SIZE = 100_000_000
"""Most states in the replay buffer (its arrays are allocated at the start: 8 bytes per state and
fact word, and more)."""
MAX_ENVS = 4096
"""Most environments stepped together."""


@dataclass
class Args:
    """Learn a value function V(s) ≈ h*(s) by interaction, with an N or TN head and no optimal labels."""

    dist: Literal[VALUE_DISTS] = "tn"
    """head: Gaussian (n) or truncated Gaussian with lower bound l - 0.1 (tn; its upper end: --upper)"""
    clip: bool = False
    """n only: clip the bootstrapped targets to [l, u] (the ablation; tn always does)"""
    upper: Literal[TN_UPPERS] = "clip"
    """tn only: clip: u only clips the target, the NLL is TN(mu, sigma, l - 0.1, inf)'s, as in search,
    which knows no u; observed: TN(mu, sigma, l - 0.1, u + 0.1) with u the observed cost-to-go (where u
    is close to l the NLL hardly depends on mu, and the search value without u goes astray: README)"""
    model: Literal[MODEL_NAMES] = "nlm"
    """network (its model config is read from the problems' initial states)"""
    domain: str = "ferry"
    """paper domain whose split is played (with --tasks: the domain name recorded for evaluation)"""
    split: str = "train"
    """split whose problems are played"""
    data: Path | None = None
    """dataset root whose <domain>/<split>/problems are played (default: the domain's Table 3 split)"""
    tasks: Path | None = None
    """play the problem files of this directory instead (pddl/custom-v1)"""
    domain_file: Path | None = None
    """domain file of --tasks (default: DIR/domain.pddl or DIR/../domain.pddl)"""
    train_problems: int | None = None
    """play this many problems spread over the split's sizes (default: all)"""
    sigma: Literal[SIGMAS] | None = None
    """learn sigma or fix it (default: fixed for n, so its NLL is the squared error; learn for tn)"""
    residual: Literal[RESIDUALS] = "hff"
    """mu = model output + this heuristic (Gehring et al.: hFF)"""
    bound: Literal[BOUNDS] = "lmcut"
    """admissible lower bound l (read from the env's info["bounds"])"""
    steps: int | None = None
    """environment steps, all environments together (default 20,000; when resuming, the stored value)"""
    num_envs: int = 4
    """environments stepped together (one forward pass per problem among them per step)"""
    max_episode_steps: int = 100
    """episode truncation"""
    epsilon_start: float = 1.0
    """exploration rate at the first step"""
    epsilon_end: float = 0.1
    """exploration rate after --epsilon-steps"""
    epsilon_steps: int = 10_000
    """environment steps of the linear decay of epsilon"""
    buffer_size: int = 50_000
    """replay buffer capacity (states)"""
    batch_size: int = 64
    """states per update"""
    learning_starts: int = 500
    """environment steps before the first update"""
    train_every: int = 4
    """environment steps per update"""
    target_every: int = 250
    """updates between copies of the online network into the target network"""
    lr: float | None = None
    """AdamW learning rate (default: the model's, 1e-2 for nlm)"""
    weight_decay: float = 1e-2
    """AdamW weight decay"""
    grad_clip: float = 0.1
    """gradient-norm clipping"""
    checkpoint_every: int = 2000
    """environment steps between checkpoints (last.pt, best.safetensors)"""
    snapshot_every: int | None = None
    """also keep the weights every this many environment steps, as snapshots/step-<steps>.safetensors
    (what python -m agents.apps.rl_value_curves plots; default: none)"""
    seed: int = 0
    """seed of initialisation, problems, exploration and replay"""
    device: str = "auto"
    """torch device: auto (cuda when available), cpu, cuda, ... (a resumed run equals an uninterrupted one
    on the CPU; CUDA kernels need not be deterministic)"""
    runs: Path = Path("runs")
    """parent directory of run directories"""
    name: str | None = None
    """run directory name (default: rlv__<domain>__<model>__<dist>[+clip]__s<seed>__<time>)"""
    resume: Path | None = None
    """continue the run in this directory (its args.json is used; --steps may extend it)"""
    quiet: bool = False
    """no progress bar"""

    def __post_init__(self) -> None:
        check_ranges(
            self,
            positive=(
                "steps",
                "num_envs",
                "max_episode_steps",
                "epsilon_steps",
                "buffer_size",
                "batch_size",
                "train_every",
                "target_every",
                "lr",
                "grad_clip",
                "checkpoint_every",
                "snapshot_every",
                "train_problems",
            ),
            non_negative=("weight_decay", "learning_starts", "epsilon_end"),
            unit_interval=("epsilon_start",),
            at_most={"batch_size": MAX_BATCH_SIZE, "buffer_size": MAX_BUFFER_SIZE, "num_envs": MAX_ENVS},
        )
        if self.epsilon_end > self.epsilon_start:
            raise ConfigError("--epsilon-end must not exceed --epsilon-start")
        if self.clip and self.dist != "n":
            raise ConfigError("--clip is the N ablation (--dist n); --dist tn always clips its targets")


def __getattr__(name: str) -> Any:
    """The learner's names (`agents.apps.rl_value_learner`), imported on first use."""
    if name in ("ValueLearner", "train", "make_envs", "_merge_by_problem"):
        from agents.apps import rl_value_learner

        return getattr(rl_value_learner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = tyro.cli(Args, args=argv, description=__doc__)
        from agents.apps.rl_value_learner import train  # torch: only once the arguments are parsed

        run_dir = train(args)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    m = json.loads((run_dir / "metrics.json").read_text())
    print(f"run: {run_dir}")
    print(
        f"{m['steps']} env steps, {m['updates']} updates, {m['episodes']} episodes "
        f"({m['solved_episodes']} reached the goal), u known for {m['states_with_upper_bound']} states"
    )
    print(f"plan with it: python -m agents.evaluate --run {run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
