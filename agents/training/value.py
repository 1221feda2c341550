"""Value learning without optimal labels: `ValueLearner`, configured by a `ValueConfig`.

    learner = ValueLearner(ValueConfig(dist="tn", steps=20_000), "runs/rlv-ferry")
    learner.learn()                                # -> metrics (also in metrics.json)
    ValueLearner.load("runs/rlv-ferry", steps=40_000).learn()   # continue it

The agent learns V(s) ≈ h*(s) for a domain's problems by interacting with the Gymnasium
environment (``pddl/<domain>-v1`` over a split, or ``pddl/custom-v1`` over ``tasks``), with
``num_envs`` environments stepped together, a replay buffer (`agents.training.replay`) and a target
network: the paper's future-work setting (section 6) and the residual value learning of Gehring et
al. (ICAPS 2022). The targets (`agents.value_targets`) need no optimal planner: the bootstrapped
``y(s) = 1 + min V̄(s')`` (0 at a goal, inf at a proven dead end), the admissible bound ``l`` of
``info["bounds"]`` (``bound``, LM-cut by default) and the best cost-to-go ``u`` observed from ``s``
on a goal-reaching trajectory. Heads: ``dist="n"`` (N over the raw ``y``; ``σ`` fixed by default,
so the loss is the squared error, as Gehring et al.), ``dist="n", clip=True`` (``y`` clipped to
``[l, u]``: the ablation; search with ``agents.evaluate --clip``) and ``dist="tn"`` (``y`` clipped to
``[l, u]``, the NLL of TN(μ, σ, l − 0.1, ∞) with ``upper="clip"``, the default, or of
TN(μ, σ, l − 0.1, u + 0.1) with ``upper="observed"``, ``u = inf`` until known: docs/rl.md says
why the default). μ is a residual over hFF (``residual``).

Acting: ε-greedy one-step lookahead, ``argmin_a 1 + V(succ(s, a))`` with the online network (ε
decays linearly from ``epsilon_start`` to ``epsilon_end`` over ``epsilon_steps`` env steps).
Why not GBFS episodes with the current V: the lookahead evaluates exactly the successors a target
needs, each env step costs one forward pass whatever the problem's size, and an episode is one
trajectory, so every episode that reaches the goal gives an upper bound ``u`` for each state on it;
a GBFS episode jumps between open-list nodes (its states are not a trajectory: only its final plan's
states would get a ``u``) and its cost per episode grows with the search effort.

The run directory has the layout of a supervised run, so ``python -m agents.evaluate --run DIR``
plans with it: ``args.json`` (`agents.training.records`), ``model.json``, ``best.safetensors`` (the
latest weights: there are no labels to select on), ``last.pt`` (the whole learning state, loaded
with ``weights_only=True``), TensorBoard events and ``metrics.json`` (and with ``snapshot_every``,
``snapshots/step-<steps>.safetensors`` for the learning curves of ``agents.rl_value_curves``). A
run continued with `ValueLearner.load` ends, on the CPU, as an uninterrupted run with the same
seed (episodes are replayed into the environments).
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

import domains
import pddlgym_sl  # noqa: F401  (registers the pddl/<domain>-v<N> ids)
from agents.checkpoint import (
    CheckpointError,
    RunClock,
    check_run_files,
    load_training_state,
    save_model_config,
    save_training_state,
    save_weights,
)
from agents.devices import resolve_device
from agents.heads import make_head
from agents.models import make_model, model_spec
from agents.training.configs import ValueConfig
from agents.training.contexts import (
    ProblemContext,
    contiguous_groups,
    merge_by_problem,
    model_config_from_tasks,
    playable,
)
from agents.training.records import resumed_config, write_record
from agents.training.replay import Episode, ReplayBuffer
from agents.value_targets import (
    UpperBounds,
    bootstrap_targets,
    state_key,
    successor_values,
    target_mode,
    value_loss,
)
from pddlgym_sl.envs.problems import problem_files, resolve_problems, spread
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.io import atomic_write_json
from pddlgym_sl.task import State

__all__ = ["SNAPSHOTS", "ValueLearner", "make_envs", "problem_files_of"]

SNAPSHOTS = "snapshots"
"""Run subdirectory of the ``snapshot_every`` weights, ``step-<env steps>.safetensors``."""


def problem_files_of(config: ValueConfig) -> tuple[list[Path], Path | None]:
    """The problem files played and the custom domain file (None: the bundled domain's)."""
    if config.tasks is not None:
        pset = resolve_problems(problems=config.tasks, domain_file=_tasks_domain_file(config))
        return spread(list(pset.files), config.train_problems), pset.domain_file
    if config.domain not in domains.DOMAIN_NAMES:
        known = ", ".join(domains.DOMAIN_NAMES)
        raise ConfigError(f"unknown domain {config.domain!r}; expected one of {known} (or --tasks DIR)")
    return spread(problem_files(config.domain, config.split, config.data), config.train_problems), None


def _tasks_domain_file(config: ValueConfig) -> Path:
    if config.domain_file is not None:
        return config.domain_file
    assert config.tasks is not None
    for candidate in (config.tasks / "domain.pddl", config.tasks.parent / "domain.pddl"):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"no domain.pddl in {config.tasks} or its parent: pass --domain-file")


def make_envs(config: ValueConfig, files: list[Path], domain_file: Path | None) -> list[gym.Env]:
    """``--num-envs`` environments over the problems, reporting only the lower bound in ``info``."""
    kwargs = {
        "problems": [str(f) for f in files],
        "obs": "flat",  # the model reads the packed state itself; flat is the cheapest encoding
        "heuristics": (config.bound,),
        "max_episode_steps": config.max_episode_steps,
    }
    if domain_file is None:
        return [gym.make(f"pddl/{config.domain}-v1", **kwargs) for _ in range(config.num_envs)]
    return [
        gym.make("pddl/custom-v1", domain_file=str(domain_file), **kwargs) for _ in range(config.num_envs)
    ]


class ValueLearner:
    """Value learning by interaction (see the module docstring): environments, online and target
    networks, replay, targets, optimiser, checkpoints.

    Args:
        config: every hyperparameter (`ValueConfig`); ``sigma=None`` and ``lr=None`` become the
            head's and the model's defaults.
        run_dir: the run directory; it must not exist yet (`ValueLearner.load` continues a run).
    """

    def __init__(self, config: ValueConfig, run_dir: str | Path, *, _resuming: bool = False) -> None:
        self.clock = RunClock()
        self.run_dir = Path(run_dir)
        if not _resuming and self.run_dir.exists():
            raise ConfigError(f"{self.run_dir} exists: pass --resume {self.run_dir} to continue it")
        self.device = device = resolve_device(config.device)
        self.spec = model_spec(config.model)
        sigma = config.sigma or ("fixed" if config.dist == "n" else "learn")
        lr = config.lr if config.lr is not None else self.spec.lr
        self.config = args = dataclasses.replace(config, sigma=sigma, lr=lr)
        files, domain_file = problem_files_of(args)
        if not files:
            raise ConfigError("no problems to play")
        self.envs = make_envs(args, files, domain_file)
        first = self.envs[0].unwrapped
        self.tasks = [first.task_of(i) for i in range(len(files))]
        self.schema = first.schema
        upper = "plan" if args.dist == "tn" else "none"  # u given in training; 1e5 where search has none
        self.head = make_head(args.dist, sigma=sigma, residual=args.residual, bound=args.bound, upper=upper)
        self.mode = target_mode(args.dist, args.clip)
        if not any(playable(t, self.head.lower_key) for t in self.tasks):  # else no step would ever be taken
            raise ConfigError("every problem starts at a goal or a proven dead end: nothing to learn from")
        torch.manual_seed(args.seed)
        model_config = {
            "name": args.model,
            **model_config_from_tasks(args.model, self.tasks, Path(first.problem_set.domain_file)),
            "n_outputs": self.head.n_outputs,
        }
        self.model = make_model(**model_config).to(device)
        self.target = make_model(**model_config).to(device)
        self.target.load_state_dict(self.model.state_dict())
        self.model_config = {"model": model_config, "head": self.head.config, "domain": args.domain}
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr, weight_decay=args.weight_decay)
        self.contexts: dict[int, ProblemContext] = {}
        self.buffer = ReplayBuffer(args.buffer_size, max(t.n_words for t in self.tasks))
        self.uppers = UpperBounds()
        self.rng = np.random.default_rng(args.seed)
        self.step = self.updates = self.episodes = self.solved = 0
        self.episodes_now: list[Episode | None] = [None] * len(self.envs)
        self.last_loss = float("nan")
        self.last_target = float("nan")

    # ------------------------------------------------------------------ networks
    def context(self, problem: int) -> ProblemContext:
        ctx = self.contexts.get(problem)
        if ctx is None:
            ctx = ProblemContext(self.tasks[problem], self.spec, self.head, self.device, self.schema)
            self.contexts[problem] = ctx
        return ctx

    def raw_outputs(self, net, groups: list[tuple[int, np.ndarray]]):
        """The network's raw outputs, lower bounds and residual bases of groups of one problem's states
        (``(problem, (n, n_words) states)``), concatenated in the groups' order."""
        raws, lowers, bases = [], [], []
        for problem, states in groups:
            ctx = self.context(problem)
            lower, base = ctx.bounds(states)
            raws.append(net(ctx.inputs(states)))
            lowers.append(lower)
            bases.append(base if base is not None else np.zeros(len(states)))
        base = np.concatenate(bases) if self.head.residual_key else None
        return torch.cat(raws), np.concatenate(lowers), base

    @torch.no_grad()
    def values(self, net, groups: list[tuple[int, np.ndarray]], goals: np.ndarray) -> np.ndarray:
        """V of the states of ``groups`` under ``net`` (0 at a goal, inf at a proven dead end), with one
        forward pass per problem among the groups."""
        merged, back = merge_by_problem(groups)
        raw, lower, base = self.raw_outputs(net, merged)
        raw, lower = raw[torch.from_numpy(back).to(raw.device)], lower[back]
        base = None if base is None else base[back]
        live = np.isfinite(lower) if base is None else np.isfinite(lower) & np.isfinite(base)
        values = np.full(len(lower), np.inf)
        if live.any():
            keep = torch.from_numpy(live).to(raw.device)
            b = None if base is None else base[live].astype(np.float32)
            values[live] = self.head.heuristic_values(
                raw[keep], lower[live].astype(np.float32), b, clip=self.config.clip
            )
        return successor_values(values, goals, lower)

    # ------------------------------------------------------------------ acting
    def epsilon(self) -> float:
        a = self.config
        frac = min(1.0, self.step / a.epsilon_steps)
        return a.epsilon_start + frac * (a.epsilon_end - a.epsilon_start)

    def _reset(self, i: int) -> None:
        problem = int(self.rng.integers(len(self.tasks)))
        _, info = self.envs[i].reset(options={"problem": problem})
        words = self.envs[i].unwrapped.state.words
        self.episodes_now[i] = Episode(problem, [], [state_key(problem, words)])
        self.buffer.add(problem, words, info["bounds"][self.config.bound])
        self._maybe_end(i, info, terminated=self.tasks[problem].is_goal(State(words.tobytes())))

    def _maybe_end(self, i: int, info: dict, terminated: bool, truncated: bool = False) -> bool:
        """End episode ``i`` at the goal, at truncation or at a proven dead end; say whether it ended."""
        episode = self.episodes_now[i]
        assert episode is not None
        dead = np.isinf(info["bounds"][self.config.bound])
        if not (terminated or truncated or dead):
            return False
        self.uppers.record(episode.keys, reached_goal=terminated)
        self.episodes += 1
        self.solved += int(terminated)
        self.episodes_now[i] = None
        return True

    def act(self) -> None:
        """One step of every environment: ε-greedy one-step lookahead with the online network."""
        for i in range(len(self.envs)):
            if self.episodes_now[i] is None:
                self._reset(i)
        expansions = []
        for i, env in enumerate(self.envs):
            episode = self.episodes_now[i]
            if episode is None:  # the reset state ended the episode already (goal or dead end)
                expansions.append(None)
                continue
            acts, succ, goals = self.tasks[episode.problem].expand(env.unwrapped.state.words)
            expansions.append((acts, succ, goals))
        groups = [(self.episodes_now[i].problem, e[1]) for i, e in enumerate(expansions) if e and len(e[0])]
        goals = np.concatenate([e[2] for e in expansions if e and len(e[0])]) if groups else np.zeros(0)
        values = self.values(self.model, groups, goals) if groups else np.zeros(0)
        epsilon = self.epsilon()
        offset = 0
        for i in range(len(self.envs)):
            if expansions[i] is None:
                continue
            episode = self.episodes_now[i]
            acts = expansions[i][0]
            if len(acts) == 0:  # no applicable action: a dead end
                self._maybe_end(i, {"bounds": {self.config.bound: np.inf}}, terminated=False)
                continue
            v = values[offset : offset + len(acts)]
            offset += len(acts)
            explore = self.rng.random() < epsilon
            j = int(self.rng.integers(len(acts))) if explore else int(np.argmin(v))
            self._step(i, int(acts[j]))

    def _step(self, i: int, action: int) -> None:
        episode = self.episodes_now[i]
        assert episode is not None
        _, _, terminated, truncated, info = self.envs[i].step(action)
        words = self.envs[i].unwrapped.state.words
        episode.actions.append(action)
        episode.keys.append(state_key(episode.problem, words))
        self.buffer.add(episode.problem, words, info["bounds"][self.config.bound])
        self.step += 1
        self._maybe_end(i, info, terminated, truncated)

    # ------------------------------------------------------------------ learning
    def update(self) -> None:
        """One AdamW step on a replay batch, with targets from the target network."""
        rows = self.rng.integers(self.buffer.size, size=self.config.batch_size)
        rows.sort()  # groups of one problem stay contiguous after the stable sort below
        rows = rows[np.argsort(self.buffer.problem[rows], kind="stable")]
        problems, lower = self.buffer.problem[rows], self.buffer.lower[rows]
        states = [self.buffer.words[r, : self.tasks[p].n_words] for r, p in zip(rows, problems, strict=True)]
        pairs = list(zip(problems, states, strict=True))
        is_goal = np.array([self.tasks[p].is_goal(State(w.tobytes())) for p, w in pairs])
        succ_groups, goal_flags, counts = [], [], []
        for p, w in zip(problems, states, strict=True):
            _, succ, goals = self.tasks[p].expand(w)
            counts.append(len(succ))
            if len(succ):
                succ_groups.append((int(p), succ))
                goal_flags.append(goals)
        succ_values = (
            self.values(self.target, succ_groups, np.concatenate(goal_flags)) if succ_groups else np.zeros(0)
        )
        offsets = np.concatenate([[0], np.cumsum(counts)])
        y = bootstrap_targets(is_goal, lower, succ_values, offsets)
        upper = self.uppers.lookup(state_key(p, w) for p, w in zip(problems, states, strict=True))
        groups = contiguous_groups(problems, states)
        raw, _, base = self.raw_outputs(self.model, groups)
        truncate = self.config.upper == "observed"
        loss, count = value_loss(self.head, raw, y, lower, base, upper, self.mode, truncate_upper=truncate)
        self.optimizer.zero_grad(set_to_none=True)
        if count:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
            self.optimizer.step()
        self.updates += 1
        if self.updates % self.config.target_every == 0:
            self.target.load_state_dict(self.model.state_dict())
        self.last_loss = loss.item()
        finite = np.isfinite(y)
        self.last_target = float(y[finite].mean()) if finite.any() else float("nan")

    def updates_due(self) -> int:
        a = self.config
        if self.step < a.learning_starts or self.buffer.size == 0:
            return 0
        return max(0, (self.step - a.learning_starts) // a.train_every + 1 - self.updates)

    # ------------------------------------------------------------------ checkpoints
    def state(self) -> dict:
        return {
            "model": self.model.state_dict(),
            "target": self.target.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "counters": [self.step, self.updates, self.episodes, self.solved],
            "rng": json.dumps(self.rng.bit_generator.state),
            "torch_rng": torch.get_rng_state(),
            "buffer": self.buffer.state(),
            "uppers": self.uppers.to_plain(),
            "episodes": [None if e is None else [e.problem, list(e.actions)] for e in self.episodes_now],
        }

    STATE_FIELDS = (
        "model",
        "target",
        "optimizer",
        "counters",
        "rng",
        "torch_rng",
        "buffer",
        "uppers",
        "episodes",
    )

    def check_state(self, state: dict, path: Path, max_step: int) -> None:
        """Every field of a ``last.pt`` of this run (`agents.run_files`): a `CheckpointError`
        naming the file and the field, before anything is restored."""
        from agents.run_files import check_number, check_optimizer_state, check_state_dict

        required, optional = set(self.STATE_FIELDS), {RunClock.KEY}
        if not required <= set(state) <= required | optional:
            missing, unknown = sorted(required - set(state)), sorted(set(state) - required - optional)
            raise CheckpointError(
                f"not a learning state of agents.rl_value (missing fields {missing}, unknown {unknown})",
                file=path,
            )
        if state.get(RunClock.KEY) is not None:
            check_number(state[RunClock.KEY], path, RunClock.KEY, low=0)
        check_state_dict(state["model"], self.model.state_dict(), path, "model")
        check_state_dict(state["target"], self.target.state_dict(), path, "target")
        check_optimizer_state(state["optimizer"], self.optimizer, path)
        counters = state["counters"]
        if not isinstance(counters, list) or len(counters) != 4:
            raise CheckpointError("field 'counters' must be [step, updates, episodes, solved]", file=path)
        step, updates, episodes, solved = counters
        check_number(step, path, "counters[0] (step)", integer=True, low=0, high=max_step)
        check_number(updates, path, "counters[1] (updates)", integer=True, low=0, high=step)
        check_number(episodes, path, "counters[2] (episodes)", integer=True, low=0)
        check_number(solved, path, "counters[3] (solved)", integer=True, low=0, high=episodes)
        try:
            json_rng = json.loads(state["rng"]) if isinstance(state["rng"], str) else None
            np.random.default_rng().bit_generator.state = json_rng  # a scratch generator: refuses bad ones
        except (TypeError, ValueError, KeyError) as exc:
            raise CheckpointError(f"field 'rng' is not a generator state ({exc})", file=path) from None
        reference = torch.get_rng_state()
        rng = state["torch_rng"]
        if not isinstance(rng, torch.Tensor) or rng.dtype != reference.dtype or rng.shape != reference.shape:
            raise CheckpointError(
                f"field 'torch_rng' must be a {reference.dtype} tensor of {len(reference)}", file=path
            )
        self._check_buffer(state["buffer"], path)
        n_problems = len(self.tasks)
        uppers = state["uppers"]
        if not isinstance(uppers, list):
            raise CheckpointError("field 'uppers' must be a list of [problem, state hex, cost]", file=path)
        for k, row in enumerate(uppers):
            where = f"uppers[{k}]"
            if not (isinstance(row, list) and len(row) == 3 and isinstance(row[1], str)):
                raise CheckpointError(f"field {where!r} must be [problem, state hex, cost]", file=path)
            check_number(row[0], path, f"{where}[0]", integer=True, low=0, high=n_problems - 1)
            check_number(row[2], path, f"{where}[2]", low=0)
            try:
                bytes.fromhex(row[1])
            except ValueError:
                raise CheckpointError(f"field '{where}[1]' is not a hex state", file=path) from None
        saved = state["episodes"]
        if not isinstance(saved, list) or len(saved) != len(self.envs):
            raise CheckpointError(
                f"field 'episodes' must be a list of {len(self.envs)} (one per environment)", file=path
            )
        for i, entry in enumerate(saved):
            if entry is None:
                continue
            where = f"episodes[{i}]"
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], list)):
                raise CheckpointError(f"field {where!r} must be null or [problem, actions]", file=path)
            problem = check_number(entry[0], path, f"{where}[0]", integer=True, low=0, high=n_problems - 1)
            if len(entry[1]) > self.config.max_episode_steps:
                raise CheckpointError(
                    f"field '{where}[1]' has more actions than an episode's steps", file=path
                )
            n_actions = max(1, self.tasks[problem].n_actions)
            for a in entry[1]:
                check_number(a, path, f"{where}[1][]", integer=True, low=0, high=n_actions - 1)

    def _check_buffer(self, buffer: object, path: Path) -> None:
        from agents.run_files import check_number

        fields = {"problem", "words", "lower", "size", "pos"}
        if not isinstance(buffer, dict) or set(buffer) != fields:
            raise CheckpointError(f"field 'buffer' must hold {sorted(fields)}", file=path)
        ours = self.buffer
        capacity = len(ours.problem)
        for name, like in (
            ("problem", ours.problem),
            ("words", ours.words.view(np.int64)),
            ("lower", ours.lower),
        ):
            value = buffer[name]
            expected = torch.from_numpy(like[:0]).dtype
            if (
                not isinstance(value, torch.Tensor)
                or value.dtype != expected
                or tuple(value.shape) != like.shape
            ):
                raise CheckpointError(
                    f"field 'buffer.{name}' must be a {expected} tensor of shape {like.shape}", file=path
                )
        size = check_number(buffer["size"], path, "buffer.size", integer=True, low=0, high=capacity)
        check_number(buffer["pos"], path, "buffer.pos", integer=True, low=0, high=capacity - 1)
        problems = buffer["problem"][:size]
        if size and (int(problems.min()) < 0 or int(problems.max()) >= len(self.tasks)):
            raise CheckpointError(
                f"field 'buffer.problem' must hold problems 0..{len(self.tasks) - 1}", file=path
            )
        if bool(torch.isnan(buffer["lower"][:size]).any()):
            raise CheckpointError("field 'buffer.lower' holds NaN", file=path)

    def restore(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.target.load_state_dict(state["target"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.step, self.updates, self.episodes, self.solved = (int(c) for c in state["counters"])
        self.rng.bit_generator.state = json.loads(state["rng"])
        torch.set_rng_state(state["torch_rng"])
        self.buffer.restore(state["buffer"])
        self.uppers = UpperBounds.from_plain(state["uppers"])
        if len(state["episodes"]) != len(self.envs):
            raise ValueError(f"{len(state['episodes'])} environments were saved, not {len(self.envs)}")
        for i, saved in enumerate(state["episodes"]):
            self.episodes_now[i] = None if saved is None else self._replay(i, int(saved[0]), saved[1])

    def _replay(self, i: int, problem: int, actions: list[int]) -> Episode:
        """Put environment ``i`` back into its saved episode by replaying its actions."""
        env = self.envs[i]
        env.reset(options={"problem": problem})
        keys = [state_key(problem, env.unwrapped.state.words)]
        for action in actions:
            env.step(int(action))
            keys.append(state_key(problem, env.unwrapped.state.words))
        return Episode(problem, [int(a) for a in actions], keys)

    # ------------------------------------------------------------------ continuing a run
    @classmethod
    def load(cls, run_dir: str | Path, steps: int | None = None) -> ValueLearner:
        """The learner of the run in `run_dir`, restored from its ``last.pt`` (networks, optimiser,
        replay buffer, upper bounds, RNG, the environments' episodes), with `steps` as its new
        budget when given; `CheckpointError` naming the file and the field when a file of the run
        does not hold what it should."""
        run_dir = Path(run_dir)
        stored, config = resumed_config(run_dir, "rl_value", steps)
        check_run_files(run_dir)
        learner = cls(config, run_dir, _resuming=True)
        last = run_dir / "last.pt"
        if last.exists() or last.is_symlink():
            state = load_training_state(last)
            learner.check_state(state, last, max(stored.steps, config.steps))
            learner.clock.restore(state)
            try:
                learner.restore(state)
            except (KeyError, RuntimeError, ValueError, TypeError, IndexError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise CheckpointError(
                    f"the learning state does not fit this run ({first})", file=last
                ) from None
        return learner

    # ------------------------------------------------------------------ the loop
    def learn(self, progress_bar: bool = True) -> dict[str, Any]:
        """Act and update until ``config.steps`` environment steps, checkpointing every
        ``checkpoint_every`` steps (and keeping snapshots every ``snapshot_every``); returns the
        metrics, also written to ``metrics.json``."""
        config, run_dir = self.config, self.run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        last = run_dir / "last.pt"
        write_record(run_dir, config)
        save_model_config(run_dir / "model.json", self.model_config)
        writer = SummaryWriter(str(run_dir), purge_step=self.step if self.step else None)

        def checkpoint() -> None:
            save_weights(run_dir / "best.safetensors", self.model)
            save_training_state(last, {**self.state(), RunClock.KEY: self.clock.total()})
            writer.flush()

        bar = tqdm(
            total=config.steps, initial=self.step, desc="rl_value", unit="step", disable=not progress_bar
        )
        clock, steps_at, updates_at = time.perf_counter(), self.step, self.updates
        while self.step < config.steps:
            before = self.step
            self.act()
            for _ in range(self.updates_due()):
                self.update()
            bar.update(self.step - before)
            if self.step // 100 != before // 100:
                now = time.perf_counter()
                elapsed = max(1e-9, now - clock)
                scalars = {
                    "loss": self.last_loss,
                    "mean_target": self.last_target,
                    "epsilon": self.epsilon(),
                    "episodes": self.episodes,
                    "solved_fraction": self.solved / max(1, self.episodes),
                    "states_with_upper_bound": len(self.uppers),
                    "env_steps_per_s": (self.step - steps_at) / elapsed,
                    "updates_per_s": (self.updates - updates_at) / elapsed,
                }
                for k, v in scalars.items():
                    writer.add_scalar(f"train/{k}", v, self.step)
                clock, steps_at, updates_at = now, self.step, self.updates
                bar.set_postfix(loss=f"{self.last_loss:.3f}", solved=self.solved, refresh=False)
            every = config.snapshot_every
            if every is not None and self.step // every != before // every:
                save_weights(run_dir / SNAPSHOTS / f"step-{self.step}.safetensors", self.model)
            if self.step // config.checkpoint_every != before // config.checkpoint_every:
                checkpoint()
        bar.close()
        checkpoint()
        writer.close()
        metrics = {
            "steps": self.step,
            "updates": self.updates,
            "episodes": self.episodes,
            "solved_episodes": self.solved,
            "states_with_upper_bound": len(self.uppers),
            "wall_seconds": self.clock.total(),  # every call's (None: not known)
        }
        atomic_write_json(run_dir / "metrics.json", metrics)
        return metrics
