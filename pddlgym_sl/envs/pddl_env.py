"""`PDDLEnv`: a classical planning problem as a Gymnasium environment."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from pddlgym_sl import successors as _k
from pddlgym_sl.envs.encoders import ENCODERS, Schema, make_encoder
from pddlgym_sl.envs.problems import ProblemSet, count_objects, resolve_problems
from pddlgym_sl.errors import ActionTypeError, ConfigError, PDDLError
from pddlgym_sl.task import CompiledTask, State, load_task

__all__ = ["ALL_HEURISTICS", "PDDLEnv"]

ALL_HEURISTICS = ("lmcut", "hmax", "blind", "hff", "hadd", "goal_count")
"""Default of the ``heuristics`` kwarg: the three admissible bounds, then the three others."""


class PDDLEnv(gym.Env):
    """
    ## Description

    A classical planning problem (STRIPS with typing, negative preconditions and equality) as an
    episodic environment: the agent applies ground actions of a PDDL problem until the goal holds.
    Registered ids: ``pddl/blocksworld-v1``, ``pddl/ferry-v1``, ``pddl/gripper-v1`` and
    ``pddl/visitall-v1`` (the four domains of Núñez-Molina et al., IJCAI 2024, and the same with
    ``-v0``), each playing a split of generated problems; any domain of your own plays through
    ``domain_file`` and ``problems``.

    ```python
    env = gym.make("pddlgym_sl:pddl/ferry-v1", split="train", obs="ilg")
    obs, info = env.reset(seed=0)
    action = np.flatnonzero(info["action_mask"])[0]
    obs, reward, terminated, truncated, info = env.step(action)
    ```

    Each episode plays one problem, drawn uniformly with ``self.np_random`` from the
    environment's problems unless pinned (``problem=`` kwarg, or ``reset(options={"problem": ...})``).
    Problems are compiled on first draw and kept.

    ## Action Space

    ``Discrete(n)`` over the ground actions of the *current* problem, in ``task.actions`` order
    (sorted by name; actions that can never apply or change nothing are not ground actions).
    ``n`` differs between problems, so ``action_space`` is replaced on `reset` when the drawn
    problem changes (one space object per problem, so a seeded space stays seeded); vectorised
    training wants a single problem.
    ``info["action_mask"]`` (int8, 1 = applicable) and the `action_masks` method (bool, for
    sb3-contrib's MaskablePPO) give the applicable actions. An action that is not applicable, or
    not an action of the current problem at all (out of range), is a **no-op**: the state stays,
    the reward is -1 and ``info["invalid_action"]`` is True. An action that is not an integer
    (``9.9``, ``"9"``, an array of several values) raises `pddlgym_sl.errors.ActionTypeError` (a
    `TypeError`): Python and numpy integers and 0-d integer arrays are actions, as for
    Gymnasium's ``Discrete.contains``; nothing is truncated or parsed.

    ## Observation Space

    Chosen by ``obs`` (each encoder's module docstring in `pddlgym_sl.envs.encoders` specifies
    the exact format). Static atoms (``not-eq``, ``connected``, type atoms, ...) are part of every
    observation even though the grounder removes them from the search state.

    - ``"ilg"`` (default): the Instance Learning Graph, ``spaces.Graph(Discrete(1 + 3P),
      Discrete(max_arity))``: object nodes, then atom nodes labelled predicate x {achieved goal,
      unachieved goal, non-goal}; edges atom -> argument labelled with the argument position.
    - ``"nlm"``: ``spaces.Dict`` of per-arity int8 tensors ``(N,)*k + (2 P_k,)`` (state and goal
      channel per predicate) and an ``object_mask``; ``N`` is the largest object count of the
      environment's problems (smaller problems are zero-padded).
    - ``"hypergraph"``: the STRIPS-HGN delete-relaxed hypergraph as a bipartite ``spaces.Graph``
      (fact and action nodes with float32 features, precondition and add-effect edges).
    - ``"flat"``: ``spaces.MultiBinary`` fact vector of one fixed problem (needs a single problem).

    ## Rewards

    -1 for every step (unit action costs), invalid actions included; the return of an episode is
    minus its length, so maximising it finds short plans.

    ## Starting State

    The initial state of the drawn problem.

    ## Episode End

    - Termination: the goal holds.
    - Truncation: after ``max_episode_steps`` steps (500 for the registered ids; a `TimeLimit`
      added by `gym.make`).

    ## Info

    ``action_mask`` (int8 array), ``problem`` (file name), ``invalid_action`` (bool; False after
    `reset`), ``bounds`` (admissible heuristics among those requested: ``lmcut``, ``hmax``,
    ``blind``) and ``heuristics`` (the others: ``hff``, ``hadd``, ``goal_count``), each a dict of
    Python floats (``inf`` for a dead end) computed on the returned state by
    `pddlgym_sl.heuristics`.

    ## Arguments

    - ``domain``: paper domain name (set by the registered id).
    - ``split``: ``"train"`` (default), ``"val"``, ``"test"`` or ``"plan"``: the paper's problem
      sets, generated on first use into ``$PDDLGYM_SL_CACHE`` (default ``~/.cache/pddlgym_sl/problems``).
    - ``problems``: your own problems instead of a split: a directory (its ``*.pddl`` problem
      files) or a list of files.
    - ``domain_file``: your own STRIPS domain file (needs ``problems``).
    - ``problem``: pin one problem (index or file name) of the split or of ``problems``.
    - ``limit``: use only the first ``limit`` problems (split order: sorted by parameters, then
      seed; directories: file-name order).
    - ``obs``: ``"ilg"``, ``"nlm"``, ``"hypergraph"`` or ``"flat"``; ``obs_kwargs``: options of the
      encoder (``flat``: ``static``, ``goal``; ``hypergraph``: ``static``; ``nlm``: ``n_objects``).
    - ``heuristics``: names of the heuristics computed for ``info`` on every `reset`/`step`
      (default all six; ``()`` for a fast RL loop).
    - ``render_mode``: None or ``"ansi"`` (true atoms and goal as text).

    Bad arguments raise `pddlgym_sl.errors.ConfigError` (a ``ValueError``) naming the problem.

    ## Version History

    - v1: the core grounds with Fast Downward's translator (core version 2): actions that can never
      apply or that change nothing (gripper's ``move rooma rooma``), and atoms that never change
      (they become static atoms) or cannot influence the goal, are gone, so the action and fact
      numbering changed on blocksworld, gripper and visitall (ferry's is unchanged); negative
      preconditions and equality are supported; the heuristic values in ``info`` are Fast
      Downward's.
    - v0: initial version (pyperplan's grounding). Kept as an id; since core version 2 it plays
      on the same grounding as v1.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        domain: str | None = None,
        *,
        split: str | None = None,
        problems: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
        domain_file: str | os.PathLike | None = None,
        problem: str | int | None = None,
        limit: int | None = None,
        obs: str = "ilg",
        obs_kwargs: dict[str, Any] | None = None,
        heuristics: Sequence[str] | str = ALL_HEURISTICS,
        render_mode: str | None = None,
    ) -> None:
        if obs not in ENCODERS:
            raise ConfigError(f"unknown observation type {obs!r}; expected one of {', '.join(ENCODERS)}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"unknown render_mode {render_mode!r}; expected None or 'ansi'")
        self.problem_set: ProblemSet = resolve_problems(
            domain, split=split, problems=problems, domain_file=domain_file, problem=problem, limit=limit
        )
        if obs == "flat" and len(self.problem_set) > 1:
            raise ConfigError(
                "obs='flat' is a fact vector of ONE problem, but this environment has "
                f"{len(self.problem_set)}; "
                "select one with problem=<index or file name>, problems=[file] or limit=1"
            )
        self.heuristic_names = _check_heuristics(heuristics)
        self.render_mode = render_mode
        self.obs_type = obs
        self._obs_kwargs = dict(obs_kwargs or {})
        try:
            self.schema = Schema.from_domain_file(self.problem_set.domain_file)
        except PDDLError as exc:
            raise ConfigError(f"cannot read the domain: {exc}") from None
        if obs == "nlm" and "n_objects" not in self._obs_kwargs:
            self._obs_kwargs["n_objects"] = max(
                count_objects(f, self.schema.n_constants) for f in self.problem_set.files
            )

        self._tasks: dict[int, CompiledTask] = {}
        self._encoders: dict[int, Any] = {}
        self._evaluators: dict[int, tuple[tuple[str, str, Any], ...]] = {}
        self._action_spaces: dict[int, spaces.Discrete] = {}

        # Compile the first problem now: it fixes the initial action space and checks that the
        # observation encoder accepts the options.
        self._select(0)
        self.observation_space = self._encoder.space
        self._words: np.ndarray | None = None

    # ----------------------------------------------------------------- problems
    @property
    def problem_names(self) -> tuple[str, ...]:
        """File names of the environment's problems (what ``options={"problem": ...}`` takes)."""
        return self.problem_set.names

    def task_of(self, index: int) -> CompiledTask:
        """The compiled task of problem `index` (compiled on first use and kept)."""
        task = self._tasks.get(index)
        if task is None:
            path = self.problem_set.files[index]
            task = load_task(self.problem_set.domain_file, path)
            if self.obs_type == "nlm" and len(task.objects) > self._obs_kwargs["n_objects"]:
                raise PDDLError(
                    f"problem has {len(task.objects)} objects, more than the {self._obs_kwargs['n_objects']} "
                    "object slots of the nlm observation space",
                    file=path,
                )
            self._tasks[index] = task
        return task

    def _select(self, index: int) -> None:
        """Make problem `index` current: task, encoder, heuristics, action space, kernel arrays."""
        task = self.task_of(index)
        if index not in self._encoders:
            self._encoders[index] = make_encoder(self.obs_type, self.schema, task, **self._obs_kwargs)
            self._action_spaces[index] = spaces.Discrete(max(1, task.n_actions))
        self._index = index
        self.task = task
        self._encoder = self._encoders[index]
        self._encode = self._encoder.encode
        self.action_space = self._action_spaces[index]
        self._problem_name = self.problem_set.names[index]
        self._pre = (task.pre_ptr, task.pre_idx, task.neg_ptr, task.neg_idx)
        self._eff = (task.add_ptr, task.add_idx, task.del_ptr, task.del_idx)
        self._goal = (task.goal, task.goal_neg)
        self._solvable = task.solvable
        self._n_actions = task.n_actions

    def _heuristics(self) -> tuple[tuple[str, str, Any], ...]:
        """(info group, name, heuristic) for the current task, built on first use."""
        ev = self._evaluators.get(self._index)
        if ev is None:
            from pddlgym_sl.heuristics import HEURISTICS, make_heuristic

            ev = tuple(
                (
                    "bounds" if HEURISTICS[name].admissible else "heuristics",
                    name,
                    make_heuristic(name, self.task),
                )
                for name in self.heuristic_names
            )
            self._evaluators[self._index] = ev
        return ev

    # ----------------------------------------------------------------- gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        pinned = options.pop("problem", None)
        if options:
            raise ConfigError(f"unknown reset option(s) {', '.join(map(repr, options))}; known: 'problem'")
        if pinned is not None:
            index = self.problem_set.index(pinned)
        elif len(self.problem_set) > 1:
            index = int(self.np_random.integers(len(self.problem_set)))
        else:
            index = 0
        if index != self._index:
            self._select(index)
        words = np.array(self.task.init.words)  # writeable copy
        self._words = words
        self._mask = _k.action_mask(words, *self._pre)
        self._terminated = self._solvable and bool(_k.satisfies(words, *self._goal))
        return self._encode(words), self._info(words, False)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        words = self._words
        if words is None:
            raise ResetNeeded("call reset() before step()")
        a = _action_index(action)
        if 0 <= a < self._n_actions and self._mask[a]:
            words = _k.apply_action(words, a, *self._eff)
            self._words = words
            self._mask = _k.action_mask(words, *self._pre)
            self._terminated = self._solvable and bool(_k.satisfies(words, *self._goal))
            invalid = False
        else:
            invalid = True
        return self._encode(words), -1.0, self._terminated, False, self._info(words, invalid)

    def _info(self, words: np.ndarray, invalid: bool) -> dict[str, Any]:
        info: dict[str, Any] = {
            "action_mask": self._mask.copy(),
            "problem": self._problem_name,
            "invalid_action": invalid,
            "bounds": {},
            "heuristics": {},
        }
        if self.heuristic_names:
            batch = words.reshape(1, -1)
            for group, name, h in self._heuristics():
                info[group][name] = float(h.batch(batch)[0])
        return info

    def action_masks(self) -> np.ndarray:
        """Applicable actions of the current state as a bool vector (sb3-contrib's MaskablePPO)."""
        if self._words is None:
            raise ResetNeeded("call reset() before action_masks()")
        return self._mask.astype(bool)

    @property
    def state(self) -> State:
        """The current state (immutable `State` of ``self.task``)."""
        if self._words is None:
            raise ResetNeeded("call reset() first")
        return State(self._words.tobytes())

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' to gym.make")
            return None
        if self._words is None:
            return f"problem: {self._problem_name} (not reset)\n"
        task = self.task
        state = self.state
        true = [task.facts[f] for f in state.fact_indices()]
        goal = [f"  [{'x' if int(g) in state else ' '}] {task.facts[g]}" for g in task.goal]
        done = sum(int(g) in state for g in task.goal)
        lines = [
            f"problem: {self._problem_name} ({task.domain_name})",
            f"state ({len(true)} true atoms, {len(task.static_atoms)} static atoms not shown):",
            *(f"  {atom}" for atom in true),
            f"goal ({done}/{len(task.goal)} achieved):",
            *goal,
        ]
        return "\n".join(lines) + "\n"


def _check_heuristics(heuristics: Sequence[str] | str | None) -> tuple[str, ...]:
    if heuristics is None:
        return ()
    names = (heuristics,) if isinstance(heuristics, str) else tuple(heuristics)
    if not names:
        return ()
    from pddlgym_sl.heuristics import HEURISTICS

    unknown = [n for n in names if n not in HEURISTICS]
    if unknown:
        raise ConfigError(
            f"unknown heuristic(s) {', '.join(map(repr, unknown))}; "
            f"expected names from {', '.join(HEURISTICS)}"
        )
    return tuple(dict.fromkeys(names))


def _action_index(action: Any) -> int:
    """`action` as an int when it is one (Python or numpy integer, 0-d integer array), else
    `ActionTypeError`; the same test as Gymnasium's ``Discrete.contains`` minus the range."""
    if isinstance(action, int):
        return int(action)
    is_array = isinstance(action, np.generic | np.ndarray)
    if is_array and np.issubdtype(action.dtype, np.integer) and action.shape == ():
        return int(action)
    raise ActionTypeError(f"an action must be an integer, not {action!r} ({type(action).__name__})")
