"""The value-learning loop of ``python -m agents.rl_value`` (`agents.apps.rl_value`, whose docstring
describes it): environments, replay buffer, the learner, checkpoints and `train`. Kept apart from the
command's arguments so that ``--help`` imports no torch."""

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

import domains
import pddlgym_sl  # noqa: F401  (registers the pddl/<domain>-v<N> ids)
from agents.apps.rl_value import Args
from agents.apps.run_record import RL_VALUE_ADDED_LATER
from agents.checkpoint import (
    CheckpointError,
    RunClock,
    check_run_files,
    load_training_state,
    resumed_args,
    save_model_config,
    save_training_state,
    save_weights,
)
from agents.devices import resolve_device
from agents.heads import make_head
from agents.models import make_model, model_spec
from agents.value_targets import (
    UpperBounds,
    bootstrap_targets,
    state_key,
    successor_values,
    target_mode,
    value_loss,
)
from pddlgym_sl.data.dataset import LabelledSplit, facts_digest
from pddlgym_sl.envs.problems import problem_files, resolve_problems, spread
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.io import atomic_write_json
from pddlgym_sl.task import CompiledTask, State

DEFAULT_STEPS = 20_000
SNAPSHOTS = "snapshots"
"""Run subdirectory of the ``--snapshot-every`` weights, ``step-<env steps>.safetensors``."""


def run_name(args: Args) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return f"rlv__{args.domain}__{args.model}__{target_mode(args.dist, args.clip)}__s{args.seed}__{stamp}"


def _problem_files(args: Args) -> tuple[list[Path], Path | None]:
    """The problem files played and the custom domain file (None: the bundled domain's)."""
    if args.tasks is not None:
        pset = resolve_problems(problems=args.tasks, domain_file=_tasks_domain_file(args))
        return spread(list(pset.files), args.train_problems), pset.domain_file
    if args.domain not in domains.DOMAIN_NAMES:
        known = ", ".join(domains.DOMAIN_NAMES)
        raise ConfigError(f"unknown domain {args.domain!r}; expected one of {known} (or --tasks DIR)")
    return spread(problem_files(args.domain, args.split, args.data), args.train_problems), None


def _tasks_domain_file(args: Args) -> Path:
    if args.domain_file is not None:
        return args.domain_file
    assert args.tasks is not None
    for candidate in (args.tasks / "domain.pddl", args.tasks.parent / "domain.pddl"):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"no domain.pddl in {args.tasks} or its parent: pass --domain-file")


def make_envs(args: Args, files: list[Path], domain_file: Path | None) -> list[gym.Env]:
    """``--num-envs`` environments over the problems, reporting only the lower bound in ``info``."""
    kwargs = {
        "problems": [str(f) for f in files],
        "obs": "flat",  # the model reads the packed state itself; flat is the cheapest encoding
        "heuristics": (args.bound,),
        "max_episode_steps": args.max_episode_steps,
    }
    if domain_file is None:
        return [gym.make(f"pddl/{args.domain}-v1", **kwargs) for _ in range(args.num_envs)]
    return [gym.make("pddl/custom-v1", domain_file=str(domain_file), **kwargs) for _ in range(args.num_envs)]


def model_config_from_tasks(model: str, tasks: list[CompiledTask], domain_file: Path) -> dict:
    """A model's data-dependent config (NLM input channels, ...) from the tasks' initial states,
    through its `TrainingInputs` on an unlabelled split (there are no labels to read)."""
    n = len(tasks)
    split = LabelledSplit(
        split_dir=domain_file.parent,
        domain_file=domain_file,
        problems=[Path(t.problem_file or "") for t in tasks],
        states=[np.asarray(t.init.words)[None, :] for t in tasks],
        facts_digest=[facts_digest(t.facts) for t in tasks],
        problem_of=np.arange(n, dtype=np.int32),
        h_star=np.full(n, np.nan),
        values={},
        features=np.zeros((n, 4)),
    )
    split._tasks.update(enumerate(tasks))
    return model_spec(model).training_inputs(split).model_config()


class ProblemContext:
    """One problem's model inputs and symbolic heuristics (the lower bound and the residual base)."""

    def __init__(self, task: CompiledTask, spec, head, device: torch.device, schema) -> None:
        self.task = task
        self.inputs = spec.search_inputs(task, device, schema)
        self.lower = make_heuristic(head.lower_key, task)
        self.residual = make_heuristic(head.residual_key, task) if head.residual_key else None

    def bounds(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        base = self.residual.batch(states) if self.residual is not None else None
        return self.lower.batch(states), base


class ReplayBuffer:
    """A ring buffer of visited states: problem index, packed words (padded to the widest problem)
    and the admissible bound the environment reported."""

    def __init__(self, capacity: int, n_words: int) -> None:
        self.problem = np.zeros(capacity, dtype=np.int64)
        self.words = np.zeros((capacity, n_words), dtype=np.uint64)
        self.lower = np.zeros(capacity, dtype=np.float64)
        self.size = self.pos = 0

    def add(self, problem: int, words: np.ndarray, lower: float) -> None:
        self.problem[self.pos] = problem
        self.words[self.pos] = 0
        self.words[self.pos, : len(words)] = words
        self.lower[self.pos] = lower
        self.pos = (self.pos + 1) % len(self.problem)
        self.size = min(self.size + 1, len(self.problem))

    def state(self) -> dict:
        return {
            "problem": torch.from_numpy(self.problem.copy()),
            "words": torch.from_numpy(self.words.view(np.int64).copy()),
            "lower": torch.from_numpy(self.lower.copy()),
            "size": self.size,
            "pos": self.pos,
        }

    def restore(self, state: dict) -> None:
        self.problem[:] = state["problem"].numpy()
        self.words[:] = state["words"].numpy().view(np.uint64)
        self.lower[:] = state["lower"].numpy()
        self.size, self.pos = int(state["size"]), int(state["pos"])


@dataclass
class Episode:
    """One environment's current episode: its problem, the actions taken, the states' keys."""

    problem: int
    actions: list[int]
    keys: list


class ValueLearner:
    """The learning loop: environments, networks, replay, targets, optimiser (see the module docstring)."""

    def __init__(self, args: Args, device: torch.device) -> None:
        self.args, self.device = args, device
        files, domain_file = _problem_files(args)
        if not files:
            raise ConfigError("no problems to play")
        self.envs = make_envs(args, files, domain_file)
        first = self.envs[0].unwrapped
        self.tasks = [first.task_of(i) for i in range(len(files))]
        self.schema = first.schema
        sigma = args.sigma or ("fixed" if args.dist == "n" else "learn")
        upper = "plan" if args.dist == "tn" else "none"  # u given in training; 1e5 where search has none
        self.head = make_head(args.dist, sigma=sigma, residual=args.residual, bound=args.bound, upper=upper)
        self.mode = target_mode(args.dist, args.clip)
        if not any(_playable(t, self.head.lower_key) for t in self.tasks):  # else no step would ever be taken
            raise ConfigError("every problem starts at a goal or a proven dead end: nothing to learn from")
        self.spec = model_spec(args.model)
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
        lr = args.lr if args.lr is not None else self.spec.lr
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
        merged, back = _merge_by_problem(groups)
        raw, lower, base = self.raw_outputs(net, merged)
        raw, lower = raw[torch.from_numpy(back).to(raw.device)], lower[back]
        base = None if base is None else base[back]
        live = np.isfinite(lower) if base is None else np.isfinite(lower) & np.isfinite(base)
        values = np.full(len(lower), np.inf)
        if live.any():
            keep = torch.from_numpy(live).to(raw.device)
            b = None if base is None else base[live].astype(np.float32)
            values[live] = self.head.heuristic_values(
                raw[keep], lower[live].astype(np.float32), b, clip=self.args.clip
            )
        return successor_values(values, goals, lower)

    # ------------------------------------------------------------------ acting
    def epsilon(self) -> float:
        a = self.args
        frac = min(1.0, self.step / a.epsilon_steps)
        return a.epsilon_start + frac * (a.epsilon_end - a.epsilon_start)

    def _reset(self, i: int) -> None:
        problem = int(self.rng.integers(len(self.tasks)))
        _, info = self.envs[i].reset(options={"problem": problem})
        words = self.envs[i].unwrapped.state.words
        self.episodes_now[i] = Episode(problem, [], [state_key(problem, words)])
        self.buffer.add(problem, words, info["bounds"][self.args.bound])
        self._maybe_end(i, info, terminated=self.tasks[problem].is_goal(State(words.tobytes())))

    def _maybe_end(self, i: int, info: dict, terminated: bool, truncated: bool = False) -> bool:
        """End episode ``i`` at the goal, at truncation or at a proven dead end; say whether it ended."""
        episode = self.episodes_now[i]
        assert episode is not None
        dead = np.isinf(info["bounds"][self.args.bound])
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
                self._maybe_end(i, {"bounds": {self.args.bound: np.inf}}, terminated=False)
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
        self.buffer.add(episode.problem, words, info["bounds"][self.args.bound])
        self.step += 1
        self._maybe_end(i, info, terminated, truncated)

    # ------------------------------------------------------------------ learning
    def update(self) -> None:
        """One AdamW step on a replay batch, with targets from the target network."""
        rows = self.rng.integers(self.buffer.size, size=self.args.batch_size)
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
        groups = _contiguous_groups(problems, states)
        raw, _, base = self.raw_outputs(self.model, groups)
        truncate = self.args.upper == "observed"
        loss, count = value_loss(self.head, raw, y, lower, base, upper, self.mode, truncate_upper=truncate)
        self.optimizer.zero_grad(set_to_none=True)
        if count:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.grad_clip)
            self.optimizer.step()
        self.updates += 1
        if self.updates % self.args.target_every == 0:
            self.target.load_state_dict(self.model.state_dict())
        self.last_loss = loss.item()
        finite = np.isfinite(y)
        self.last_target = float(y[finite].mean()) if finite.any() else float("nan")

    def updates_due(self) -> int:
        a = self.args
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
            if len(entry[1]) > self.args.max_episode_steps:
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


def _playable(task: CompiledTask, bound: str) -> bool:
    """Whether an episode of ``task`` takes a step: its initial state is neither a goal nor a dead end."""
    lower = make_heuristic(bound, task).batch(np.asarray(task.init.words)[None, :])[0]
    return not task.is_goal(task.init) and bool(np.isfinite(lower))


def _merge_by_problem(
    groups: list[tuple[int, np.ndarray]],
) -> tuple[list[tuple[int, np.ndarray]], np.ndarray]:
    """The groups' states merged per problem, and the index that puts the merged rows back in the
    groups' order."""
    order = sorted(range(len(groups)), key=lambda k: groups[k][0])
    sizes = np.array([len(groups[k][1]) for k in range(len(groups))], dtype=np.int64)
    start = np.zeros(len(groups), dtype=np.int64)
    start[order] = np.concatenate([[0], np.cumsum(sizes[order])[:-1]]) if groups else []
    back = np.concatenate([start[k] + np.arange(sizes[k]) for k in range(len(groups))] or [np.zeros(0, int)])
    merged: list[tuple[int, list[np.ndarray]]] = []
    for k in order:
        problem, states = groups[k]
        if merged and merged[-1][0] == problem:
            merged[-1][1].append(states)
        else:
            merged.append((problem, [states]))
    return [(p, np.concatenate(parts)) for p, parts in merged], back.astype(np.int64)


def _contiguous_groups(problems: np.ndarray, states: list[np.ndarray]) -> list[tuple[int, np.ndarray]]:
    """Runs of one problem in ``problems`` (sorted by problem) with their stacked states."""
    groups, start = [], 0
    for end in range(1, len(problems) + 1):
        if end == len(problems) or problems[end] != problems[start]:
            groups.append((int(problems[start]), np.stack(states[start:end])))
            start = end
    return groups


def _write_args(run_dir: Path, args: Args) -> None:
    """args.json without None values (`agents.evaluate` reads ``data`` as a path when present)."""
    stored = {k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(args).items()}
    stored = {k: v for k, v in stored.items() if v is not None and k != "resume"}
    atomic_write_json(run_dir / "args.json", {**stored, "app": "rl_value"})


def train(args: Args) -> Path:
    """Run (or resume) value learning; return the run directory (with metrics.json)."""
    run_clock = RunClock()
    if args.resume is not None:
        stored, args = resumed_args(
            args, "agents.rl_value", ignore=("app",), added_later=RL_VALUE_ADDED_LATER
        )
        run_dir = args.resume
        check_run_files(run_dir)
    else:
        sigma = args.sigma or ("fixed" if args.dist == "n" else "learn")
        lr = args.lr if args.lr is not None else model_spec(args.model).lr
        args = dataclasses.replace(args, steps=args.steps or DEFAULT_STEPS, lr=lr, sigma=sigma)
        run_dir = args.runs / (args.name or run_name(args))
        if run_dir.exists():
            raise ConfigError(f"{run_dir} exists: pass --resume {run_dir} to continue it")
    device = resolve_device(args.device)
    learner = ValueLearner(args, device)
    run_dir.mkdir(parents=True, exist_ok=True)
    last = run_dir / "last.pt"
    if args.resume is not None and (last.exists() or last.is_symlink()):
        state = load_training_state(last)
        learner.check_state(state, last, max(stored.steps, args.steps))
        run_clock.restore(state)
        try:
            learner.restore(state)
        except (KeyError, RuntimeError, ValueError, TypeError, IndexError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CheckpointError(f"the learning state does not fit this run ({first})", file=last) from None
    _write_args(run_dir, args)
    save_model_config(run_dir / "model.json", learner.model_config)
    writer = SummaryWriter(str(run_dir), purge_step=learner.step if learner.step else None)

    def checkpoint() -> None:
        save_weights(run_dir / "best.safetensors", learner.model)
        save_training_state(last, {**learner.state(), RunClock.KEY: run_clock.total()})
        writer.flush()

    bar = tqdm(total=args.steps, initial=learner.step, desc="rl_value", unit="step", disable=args.quiet)
    clock, steps_at, updates_at = time.perf_counter(), learner.step, learner.updates
    while learner.step < args.steps:
        before = learner.step
        learner.act()
        for _ in range(learner.updates_due()):
            learner.update()
        bar.update(learner.step - before)
        if learner.step // 100 != before // 100:
            now = time.perf_counter()
            elapsed = max(1e-9, now - clock)
            scalars = {
                "loss": learner.last_loss,
                "mean_target": learner.last_target,
                "epsilon": learner.epsilon(),
                "episodes": learner.episodes,
                "solved_fraction": learner.solved / max(1, learner.episodes),
                "states_with_upper_bound": len(learner.uppers),
                "env_steps_per_s": (learner.step - steps_at) / elapsed,
                "updates_per_s": (learner.updates - updates_at) / elapsed,
            }
            for k, v in scalars.items():
                writer.add_scalar(f"train/{k}", v, learner.step)
            clock, steps_at, updates_at = now, learner.step, learner.updates
            bar.set_postfix(loss=f"{learner.last_loss:.3f}", solved=learner.solved, refresh=False)
        every = args.snapshot_every
        if every is not None and learner.step // every != before // every:
            save_weights(run_dir / SNAPSHOTS / f"step-{learner.step}.safetensors", learner.model)
        if learner.step // args.checkpoint_every != before // args.checkpoint_every:
            checkpoint()
    bar.close()
    checkpoint()
    writer.close()
    metrics = {
        "steps": learner.step,
        "updates": learner.updates,
        "episodes": learner.episodes,
        "solved_episodes": learner.solved,
        "states_with_upper_bound": len(learner.uppers),
        "wall_seconds": run_clock.total(),  # every call's (None: not known)
    }
    atomic_write_json(run_dir / "metrics.json", metrics)
    return run_dir
