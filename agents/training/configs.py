"""The configurations of the training loops: every hyperparameter by keyword, with its range checked.

`SupervisedConfig` configures `agents.training.supervised.Trainer`, `ValueConfig`
`agents.training.value.ValueLearner`. Each is what a run directory's ``args.json`` records (with
the package version), and what the command lines build from their flags: ``python -m
agents.supervised --dist tn --steps 6000`` is ``SupervisedConfig(dist="tn", steps=6000)``. The
field docstrings are the flags' help texts. Importing this module imports no torch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Literal

from agents.registries import (
    BOUNDS,
    DISTS,
    LOSS_NAMES,
    MODEL_NAMES,
    NOISE_NAMES,
    RESIDUALS,
    SIGMAS,
    UPPERS,
    WL_HASHES,
    WL_PRUNING,
)
from pddlgym_sl.arguments import check_ranges
from pddlgym_sl.errors import ConfigError

__all__ = [
    "MAX_BATCH_SIZE",
    "MAX_BUFFER_SIZE",
    "MAX_ENVS",
    "OOD_CHOICES",
    "TN_UPPERS",
    "VALUE_DISTS",
    "SupervisedConfig",
    "ValueConfig",
    "run_stamp",
]

OOD_CHOICES = ("none", *NOISE_NAMES)
MAX_BATCH_SIZE = 1 << 20
"""Most states per step or update (the paper trains with 256): a larger batch is a typo, and
allocating it would exhaust memory before the first step."""
VALUE_DISTS = tuple(d for d in DISTS if d in ("n", "tn"))  # == those in value_targets.TARGET_MODES (a test)
"""The heads with a bootstrapped target (n, tn; cat's costs 0..H need a known largest cost)."""
TN_UPPERS = ("observed", "clip")
MAX_BUFFER_SIZE = 100_000_000
"""Most states in the replay buffer (its arrays are allocated at the start: 8 bytes per state and
fact word, and more)."""
MAX_ENVS = 4096
"""Most environments stepped together."""


def run_stamp() -> str:
    """The time part of every command's default run directory name (``20261207-153000``)."""
    return time.strftime("%Y%m%d-%H%M%S")


@dataclass
class SupervisedConfig:
    """Supervised training of a learned heuristic with an N, TN or categorical head (the paper's
    notation; defaults: the paper's optimiser settings and a budget of minutes on a CPU)."""

    dist: Literal[DISTS] = "tn"
    """distribution of h*: Gaussian (n; NLL = MSE with fixed sigma), truncated Gaussian (tn) or categorical
    over the costs 0..H (cat: cross-entropy, argmax; needs --residual none)"""
    model: Literal[MODEL_NAMES] = "nlm"
    """network: Neural Logic Machine, STRIPS-HGN, linear regression on 4 features, MLP on facts, or WL
    features"""
    domain: str = "ferry"
    """domain of the dataset: data/<domain>/{train,val,test} under --data"""
    data: Path = Path("data/small")
    """dataset root (data/small is created on first use: python -m pddlgym_sl.data.generate --preset small)"""
    loss: Literal[LOSS_NAMES] = "nll"
    """training loss: the head's NLL, rank (pairwise: plan states below their parents and siblings;
    needs labels with siblings; the best checkpoint has the lowest val ranking loss), or rank-nll (rank
    plus --nll-weight times the NLL of the plan states; the best checkpoint has the lowest val sum)"""
    nll_weight: float = 1.0
    """--loss rank-nll: the weight of the NLL beside the ranking loss"""
    rank_on: Literal["value", "mu"] = "value"
    """--loss rank / rank-nll: order the head's search value (TN: E[x], with the bound), or mu (for a TN
    searched without its bound: agents.evaluate --search-bound none)"""
    interval_split: str | None = None
    """a split of satisficing-plan labels under --data/--domain (python -m pddlgym_sl.data.generate
    --labels satisficing): its states join training, each known only to have l <= h* <= u (u its plan's
    remaining cost), with the interval-censored NLL"""
    sigma: Literal[SIGMAS] = "learn"
    """learn sigma (second model output) or fix it to 1/sqrt(2)"""
    residual: Literal[RESIDUALS] = "hff"
    """mu = model output + this heuristic"""
    bound: Literal[BOUNDS] = "lmcut"
    """admissible lower bound l of TN (also the +clip bound of N)"""
    upper: Literal[UPPERS] = "none"
    """upper bound u of TN: none (1e5, the paper), inf, or plan: the data's satisficing plan costs,
    TN(mu, sigma, l - 0.1, u + 0.1) (add them with python -m pddlgym_sl.data.upper)"""
    steps: int = 3000
    """training steps (the paper: 40,000, see configs/)"""
    batch_size: int = 256
    """states per step"""
    lr: float | None = None
    """AdamW learning rate (default: the model's, 1e-2; 1e-3 for hgn)"""
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
    time_budget: float | None = None
    """wall-clock seconds of training (steps and validations; loading the data not included): it
    stops at the first of --steps and the budget, validating once more, with its best checkpoint"""
    device: str = "auto"
    """auto (cuda when available), cpu, cuda, cuda:1, ... (refused when not there)"""
    memory_limit: float | None = None
    """MB the training process may use (default: three quarters of the machine's or its cgroup's):
    a batch whose forward pass would not fit is computed in parts (the NLM on large tasks), and a
    state that alone does not fit is an error, not an out-of-memory kill"""
    ood: Literal[OOD_CHOICES] = "none"
    """out-of-distribution training: mix uniform or weighted noise states into each batch and teach low
    confidence on them (agents/ood.py)"""
    ood_ratio: float = 0.5
    """fraction Y of noise states in a batch (B training states plus round(B*Y/(1-Y)) noise states)"""
    wl_iterations: int = 2
    """--model wl: WL refinement iterations of the colour table (GOOSE's released models: 2; the ECAI
    2025 study's best: 1)"""
    wl_pruning: Literal[WL_PRUNING] = "none"
    """--model wl: wlplan's colour pruning while fitting (i-mf: equivalent and rare colours dropped
    after each iteration, the ECAI 2025 study's best)"""
    wl_hash: Literal[WL_HASHES] = "set"
    """--model wl: a node's neighbour colours kept once (set) or counted (multiset)"""

    def __post_init__(self) -> None:
        check_ranges(
            self,
            positive=(
                "steps",
                "batch_size",
                "lr",
                "grad_clip",
                "train_problems",
                "val_every",
                "time_budget",
                "wl_iterations",
                "memory_limit",
                "nll_weight",
            ),
            non_negative=("weight_decay",),
            at_most={"batch_size": MAX_BATCH_SIZE},
        )
        if self.model != "wl" and any(
            getattr(self, f.name) != f.default for f in fields(self) if f.name.startswith("wl_")
        ):
            raise ConfigError("--wl-iterations, --wl-pruning and --wl-hash apply to --model wl only")
        if self.loss != "nll" and (self.ood != "none" or self.upper == "plan"):
            raise ConfigError(
                f"--loss {self.loss} takes neither --ood nor --upper plan (they extend the NLL)"
            )
        if self.nll_weight != 1.0 and self.loss != "rank-nll":
            raise ConfigError("--nll-weight weighs the NLL of --loss rank-nll only")
        if self.rank_on != "value" and self.loss == "nll":
            raise ConfigError("--rank-on says what a ranking loss orders: use --loss rank or rank-nll")
        if self.interval_split is not None and self.loss == "rank":
            raise ConfigError(
                "--interval-split trains the NLL of its intervals: use --loss nll or rank-nll, not rank"
            )

    def run_name(self) -> str:
        """The default run directory name:
        ``<domain>__<model>__<dist>__<sigma>__<residual>[__<loss>]__s<seed>__<time>``."""
        loss = f"__{self.loss}" if self.loss != "nll" else ""
        return (
            f"{self.domain}__{self.model}__{self.dist}__{self.sigma}__{self.residual}{loss}"
            f"__s{self.seed}__{run_stamp()}"
        )


@dataclass
class ValueConfig:
    """Value learning without optimal labels: V(s) ≈ h*(s) by interaction, with an N or TN head."""

    dist: Literal[VALUE_DISTS] = "tn"
    """head: Gaussian (n) or truncated Gaussian with lower bound l - 0.1 (tn; its upper end: --upper)"""
    clip: bool = False
    """n only: clip the bootstrapped targets to [l, u] (the ablation; tn always does)"""
    upper: Literal[TN_UPPERS] = "clip"
    """tn only: clip: u only clips the target, the NLL is TN(mu, sigma, l - 0.1, inf)'s, as in search,
    which knows no u; observed: TN(mu, sigma, l - 0.1, u + 0.1) with u the observed cost-to-go (where u
    is close to l the NLL hardly depends on mu, and the search value without u goes astray: docs/rl.md)"""
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
    steps: int = 20_000
    """environment steps, all environments together"""
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
    (what python -m agents.rl_value_curves plots; default: none)"""
    seed: int = 0
    """seed of initialisation, problems, exploration and replay"""
    device: str = "auto"
    """torch device: auto (cuda when available), cpu, cuda, ... (a resumed run equals an uninterrupted one
    on the CPU; CUDA kernels need not be deterministic)"""

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

    @property
    def target_mode(self) -> str:
        """``n``, ``n+clip`` or ``tn`` (`agents.value_targets.target_mode`)."""
        return f"{self.dist}+clip" if self.clip else self.dist

    def run_name(self) -> str:
        """The default run directory name: ``rlv__<domain>__<model>__<dist>[+clip]__s<seed>__<time>``."""
        return f"rlv__{self.domain}__{self.model}__{self.target_mode}__s{self.seed}__{run_stamp()}"
