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
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np

import pddlgym_sl  # noqa: F401  (registers the pddl/<domain>-v<N> ids)
from pddlgym_sl.arguments import check_ranges
from pddlgym_sl.cli import Command, tyro_parse
from pddlgym_sl.envs.problems import resolve_problems
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.extras import require_extra


@dataclass
class Args:
    """MaskablePPO on PDDL problems: one problem with an MLP, or a split with a relational GNN."""

    policy: Literal["flat", "relational"] = "flat"
    """flat: one problem, fact vectors, MLP; relational: a split, ILG graphs, GNN"""
    domain: str = "ferry"
    """paper domain (blocksworld, ferry, gripper, visitall)"""
    problem: str = "ferry-l3-c3-s1"
    """flat: a PDDL problem file, or the name of a problem of the domain's train split"""
    split: str = "train"
    """relational: the split to train on"""
    train_problems: int | None = None
    """relational: train on this many problems spread over the split's sizes (default: all)"""
    eval_split: str = "val"
    """relational: the held-out split the greedy policy is evaluated on"""
    eval_problems: int | None = None
    """relational: evaluate on this many problems spread over the held-out split (default: all)"""
    eval_max_steps: int = 200
    """relational: a greedy episode that has not reached the goal after this many steps failed"""
    load: Path | None = None
    """relational: evaluate the policy of this run directory instead of training one"""
    total_timesteps: int = 50_000
    """environment steps of training (all environments together)"""
    num_envs: int = 4
    """parallel environments (SB3 DummyVecEnv)"""
    max_episode_steps: int = 100
    """episode truncation during training"""
    seed: int = 1
    """seed of the policy, the environments and PyTorch"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    n_steps: int = 128
    """rollout steps per environment per update"""
    batch_size: int = 64
    """minibatch size"""
    n_epochs: int = 10
    """optimisation epochs per update"""
    gamma: float = 0.99
    """discount factor"""
    ent_coef: float = 0.01
    """entropy bonus"""
    hidden: int = 64
    """relational: embedding width"""
    layers: int = 4
    """relational: message-passing layers"""
    eval_episodes: int = 10
    """flat: greedy (deterministic, masked) evaluation episodes after training"""
    threads: int = 1
    """torch threads"""
    log_dir: Path = Path("runs")
    """root directory of the run directories"""
    name: str | None = None
    """run directory name (default: rl__<domain>__<problem or split>__<label>__s<seed>__<time>)"""
    device: str = "cpu"
    """torch device"""
    quiet: bool = False
    """no progress bar"""

    def __post_init__(self) -> None:
        check_ranges(
            self,
            positive=(
                "train_problems",
                "eval_problems",
                "eval_max_steps",
                "total_timesteps",
                "num_envs",
                "max_episode_steps",
                "learning_rate",
                "n_steps",
                "batch_size",
                "n_epochs",
                "hidden",
                "layers",
                "eval_episodes",
                "threads",
            ),
            non_negative=("ent_coef",),
            unit_interval=("gamma",),
        )


# --------------------------------------------------------------------------- shared
RUN_LABELS = {"flat": "maskableppo", "relational": "relational-maskableppo"}
"""The policy's part of a run directory's name."""


def _progress_callback(total: int, quiet: bool):
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


def _ppo(policy: Any, venv: Any, args: Args, run_dir: Path, **kwargs: Any):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure

    model = MaskablePPO(
        policy,
        venv,
        learning_rate=args.learning_rate,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        ent_coef=args.ent_coef,
        seed=args.seed,
        device=args.device,
        verbose=0,
        **kwargs,
    )
    model.set_logger(configure(str(run_dir), ["tensorboard", "csv"]))
    return model


def _writer(run_dir: Path, args: Args):
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(run_dir))
    table = "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in asdict(args).items())
    writer.add_text("hyperparameters", table)
    return writer


def _finish(writer, path: Path, metrics: dict[str, Any], step: int) -> None:
    from pddlgym_sl.io import atomic_write_json

    for key, value in metrics.items():
        if isinstance(value, int | float):
            writer.add_scalar(f"eval/{key}", value, step)
    writer.close()
    atomic_write_json(path, metrics)
    run_dir = path.parent
    print(f"run: {run_dir}")
    print(" ".join(f"{k}={v if not isinstance(v, float) else round(v, 3)}" for k, v in metrics.items()))


def _run_dir(args: Args, what: str) -> Path:
    from agents.training.configs import run_stamp
    from pddlgym_sl.io import atomic_write_json

    label = RUN_LABELS[args.policy]
    run_dir = args.log_dir / (args.name or f"rl__{args.domain}__{what}__{label}__s{args.seed}__{run_stamp()}")
    if args.name is not None and run_dir.exists():
        raise ConfigError(f"{run_dir} exists: choose another --name")
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(run_dir / "args.json", json.loads(json.dumps(asdict(args), default=str)))
    return run_dir


# --------------------------------------------------------------------------- flat: one problem
def make_env(args: Args, rank: int) -> gym.Env:
    """One monitored environment pinned to the problem (flat observations, no heuristics)."""
    from stable_baselines3.common.monitor import Monitor

    path = Path(args.problem)
    where = {"problems": [path]} if path.is_file() else {"split": "train", "problem": args.problem}
    env = gym.make(
        f"pddl/{args.domain}-v1",
        obs="flat",
        heuristics=(),
        max_episode_steps=args.max_episode_steps,
        **where,
    )
    env = Monitor(env)
    env.reset(seed=args.seed + rank)
    return env


def evaluate(model, args: Args) -> dict[str, float | None]:
    """Greedy masked rollouts: success rate, mean episode length and mean length of successes."""
    env = make_env(args, rank=10_000)
    lengths, solved = [], []
    for episode in range(args.eval_episodes):
        obs, _ = env.reset(seed=args.seed + 10_000 + episode)
        done, steps, terminated = False, 0, False
        while not done:
            action, _ = model.predict(
                obs, action_masks=env.get_wrapper_attr("action_masks")(), deterministic=True
            )
            obs, _, terminated, truncated, _ = env.step(int(action))
            steps += 1
            done = terminated or truncated
        lengths.append(steps)
        solved.append(bool(terminated))
    env.close()
    ok = [n for n, s in zip(lengths, solved, strict=True) if s]
    return {
        "success_rate": float(np.mean(solved)),
        "mean_length": float(np.mean(lengths)),
        "mean_plan_length": float(np.mean(ok)) if ok else None,
    }


def check_problem(args: Args) -> None:
    """`ConfigError` (naming close names) unless ``--problem`` is a file or a train-split problem;
    checked before the run directory is made."""
    if not Path(args.problem).is_file():
        resolve_problems(args.domain, split="train", problem=args.problem)


def train_flat(args: Args) -> dict[str, Any]:
    from stable_baselines3.common.vec_env import DummyVecEnv

    check_problem(args)
    run_dir = _run_dir(args, Path(args.problem).stem)
    venv = DummyVecEnv([lambda rank=rank: make_env(args, rank) for rank in range(args.num_envs)])
    model = _ppo("MlpPolicy", venv, args, run_dir)
    writer = _writer(run_dir, args)
    start = time.perf_counter()
    model.learn(
        total_timesteps=args.total_timesteps, callback=_progress_callback(args.total_timesteps, args.quiet)
    )
    train_seconds = time.perf_counter() - start
    model.save(run_dir / "model.zip")
    metrics: dict[str, Any] = evaluate(model, args)
    metrics["train_seconds"] = train_seconds
    metrics["timesteps"] = int(model.num_timesteps)
    venv.close()
    _finish(writer, run_dir / "metrics.json", metrics, model.num_timesteps)
    return metrics


# --------------------------------------------------------------------------- relational: a split
def _split_files(args: Args, split: str, n: int | None) -> list[Path]:
    from pddlgym_sl.envs.problems import split_files, spread

    return spread(split_files(args.domain, split), n)


def optimal_lengths(domain_file: Path, problems: list[Path]) -> dict[str, int | None]:
    """Optimal plan length of each problem: A* with LM-cut (admissible), None when unsolvable."""
    from pddlgym_sl import load_task
    from pddlgym_sl.search import astar

    out = {}
    for path in problems:
        result = astar(load_task(domain_file, path), "lmcut")
        out[path.name] = len(result.plan) if result.solved else None
    return out


def evaluate_relational(net, args: Args) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Greedy episodes on the held-out split against the optimal plan lengths."""
    import domains
    from agents.policies.greedy import greedy_episodes

    files = _split_files(args, args.eval_split, args.eval_problems)
    domain_file = domains.domain_file(args.domain)
    episodes = greedy_episodes(net, domain_file, files, args.eval_max_steps)
    optimal = optimal_lengths(domain_file, files)
    rows = [{**asdict(e), "optimal": optimal[e.problem]} for e in episodes]
    solved = [r for r in rows if r["solved"] and r["optimal"] is not None]
    metrics: dict[str, Any] = {
        "eval_split": args.eval_split,
        "eval_problems": len(rows),
        "success_rate": len(solved) / len(rows),
        "mean_plan_length": float(np.mean([r["length"] for r in solved])) if solved else None,
        "mean_optimal_length": float(np.mean([r["optimal"] for r in solved])) if solved else None,
        "mean_length_ratio": float(np.mean([r["length"] / r["optimal"] for r in solved])) if solved else None,
        "optimal_solved": sum(r["length"] == r["optimal"] for r in solved),
    }
    return metrics, rows


def load_policy(run_dir: Path):
    """The `RelationalActorCritic` of a run directory (``policy.json`` + ``policy.safetensors``)."""
    from agents.checkpoint import load_model_config, load_weights
    from agents.policies.relational import RelationalActorCritic

    net = RelationalActorCritic(**load_model_config(run_dir / "policy.json"))
    load_weights(run_dir / "policy.safetensors", net)
    return net


def train_relational(args: Args) -> tuple[Path, Any, dict[str, Any]]:
    """Train the relational policy on the split: (run directory, network, training metrics)."""
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from agents.checkpoint import save_model_config, save_weights
    from agents.policies.maskable import RelationalMaskablePolicy

    files = _split_files(args, args.split, args.train_problems)
    run_dir = _run_dir(args, args.split)
    env_kwargs = {
        "domain": args.domain,
        "problems": files,
        "obs": "ilg",
        "padded": True,
        "action_table": True,
        "heuristics": (),
        "max_episode_steps": args.max_episode_steps,
        "render_mode": None,  # make_vec_env would ask for "rgb_array"
    }
    venv = make_vec_env(
        f"pddl/{args.domain}-v1",
        n_envs=args.num_envs,
        seed=args.seed,
        env_kwargs=env_kwargs,
        vec_env_cls=DummyVecEnv,
    )
    # Returns of -1 per step reach -100: scaled to unit size, the critic's loss no longer swamps
    # the actor's gradients in the GNN they share (the logged episode returns stay unscaled).
    venv = VecNormalize(venv, norm_obs=False, norm_reward=True, gamma=args.gamma)
    policy_kwargs = {"hidden": args.hidden, "layers": args.layers}
    model = _ppo(RelationalMaskablePolicy, venv, args, run_dir, policy_kwargs=policy_kwargs)
    start, cpu_start = time.perf_counter(), time.process_time()
    model.learn(
        total_timesteps=args.total_timesteps, callback=_progress_callback(args.total_timesteps, args.quiet)
    )
    net = model.policy.net
    save_weights(run_dir / "policy.safetensors", net)
    save_model_config(run_dir / "policy.json", net.config())
    venv.close()
    return (
        run_dir,
        net,
        {
            "train_seconds": time.perf_counter() - start,
            "train_cpu_seconds": time.process_time() - cpu_start,
            "timesteps": int(model.num_timesteps),
            "train_problems": len(files),
        },
    )


def run_relational(args: Args) -> dict[str, Any]:
    """Train (or ``--load``) the relational policy, then evaluate it on the held-out split."""
    from agents.checkpoint import load_json_object
    from pddlgym_sl.io import atomic_write_json

    if args.load is None:
        run_dir, net, metrics = train_relational(args)
        out = run_dir / "metrics.json"
    else:
        run_dir, net, metrics = args.load, load_policy(args.load), {}
        args = replace(args, domain=load_json_object(run_dir / "args.json")["domain"])
        out = run_dir / f"metrics-{args.eval_split}.json"
    writer = _writer(run_dir, args)
    evaluation, rows = evaluate_relational(net, args)
    atomic_write_json(run_dir / f"episodes-{args.eval_split}.json", rows)
    _finish(writer, out, {**evaluation, **metrics}, int(metrics.get("timesteps", 0)))
    return {**evaluation, **metrics}


def main(args: Args) -> dict[str, Any]:
    """Train (or load), evaluate, and write the run directory; return the evaluation metrics."""
    require_extra("rl", "agents.rl (MaskablePPO)")
    import torch

    from agents.devices import resolve_device

    args = replace(args, device=str(resolve_device(args.device)))  # SB3 would fall back to the CPU silently
    torch.set_num_threads(args.threads)
    if args.policy == "relational":
        return run_relational(args)
    return train_flat(args)


def _run(args: Args) -> None:
    main(args)


COMMAND = Command("python -m agents.rl", tyro_parse(Args, __doc__), _run, extra="rl")


def cli(argv: list[str] | None = None) -> int:
    """``python -m agents.rl``: parse, run; a bad input (`PDDLError`: an unknown problem, a missing
    extra, a device that is not there, ...) is one line on stderr and exit status 2."""
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(cli())
