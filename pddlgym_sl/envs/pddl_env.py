"""`PDDLEnv`: a classical planning problem as a Gymnasium environment (and `PDDLEnvV0`, the
``-v0`` ids' version of it)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from numba import njit

from pddlgym_sl import successors as _k
from pddlgym_sl.envs.actions import action_table, action_table_space
from pddlgym_sl.envs.encoders import ENCODERS, Schema, make_encoder
from pddlgym_sl.envs.problems import ProblemSet, count_objects, load_shared, resolve_problems
from pddlgym_sl.errors import ActionTypeError, ConfigError, EpisodeEndedError, PDDLError
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.task import CompiledTask, State

__all__ = ["ALL_HEURISTICS", "PDDLEnv", "PDDLEnvV0"]

ALL_HEURISTICS = ("lmcut", "hmax", "blind", "hff", "hadd", "goal_count")
"""Default of the ``heuristics`` kwarg: the three admissible bounds, then the three others."""


class PDDLEnv(gym.Env):
    """
    ## Description

    A classical planning problem (STRIPS with typing, negative preconditions and equality) as an
    episodic environment: the agent applies ground actions of a PDDL problem until the goal holds.
    Registered ids: ``pddl/blocksworld-v1``, ``pddl/ferry-v1``, ``pddl/gripper-v1`` and
    ``pddl/visitall-v1`` (the four domains of Núñez-Molina et al., IJCAI 2024), each playing a
    split of generated problems, and ``pddl/custom-v1``, which plays any domain through
    ``domain_file`` and ``problems``. The ``-v0`` ids are `PDDLEnvV0` (see Version History).

    ```python
    env = gym.make("pddlgym_sl:pddl/ferry-v1", split="train", obs="ilg")
    obs, info = env.reset(seed=0)
    action = np.flatnonzero(info["action_mask"])[0]
    obs, reward, terminated, truncated, info = env.step(action)
    env = gym.make("pddl/custom-v1", domain_file="domain.pddl", problems="problems/")
    ```

    Each episode plays one problem, drawn uniformly with ``self.np_random`` from the
    environment's problems unless pinned (``problem=`` kwarg, or ``reset(options={"problem": ...})``).
    Problems are compiled once and shared by the environments of the process
    (`pddlgym_sl.envs.problems.load_shared`).

    ## Action Space

    ``Discrete(max_actions)``, the same for every problem of the environment: ``max_actions`` is
    the largest ground-action count over its problems (every problem is compiled at construction
    to count them, and kept), or the ``max_actions`` kwarg (then problems compile on first draw, and
    one with more actions raises `PDDLError`). Action ``a < n`` is the current problem's ground action
    ``a`` in ``task.actions`` order (sorted by name; actions that can never apply or change nothing
    are not ground actions), where ``n = task.n_actions``; actions ``n .. max_actions - 1`` belong
    to no ground action and are never applicable.
    ``info["action_mask"]`` (int8, length ``max_actions``, 1 = applicable, zero past ``n``) and the
    `action_masks` method (bool, for sb3-contrib's MaskablePPO) give the applicable actions. An
    action that is not applicable, or not an action of the current problem at all (``n`` or more,
    or out of range), is a **no-op**: the state stays, the reward is -1 and
    ``info["invalid_action"]`` is True. An action that is not an integer (``9.9``, ``"9"``, an
    array of several values) raises `pddlgym_sl.errors.ActionTypeError` (a `TypeError`): Python
    and numpy integers and 0-d integer arrays are actions, as for Gymnasium's ``Discrete.contains``;
    nothing is truncated or parsed.

    What each action is, independently of the problem, is the **action table**
    (`pddlgym_sl.envs.actions`): row ``a`` holds the schema id (position of the action schema in
    the domain, ``self.schema.actions``) and the object indices of the arguments (into
    ``task.objects``: the ``ilg`` object nodes and ``nlm`` object slots), -1 padded; int64,
    ``(max_actions, 1 + max action arity)``. It is the `action_table` attribute, and part of the
    observation with ``action_table=True``.

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
    - ``"flat"``: ``spaces.MultiBinary`` fact vector of one problem, zero-padded to the longest
      vector over the environment's problems (its positions mean different atoms in different
      problems: a policy reading it plays one problem).

    ``padded=True`` turns the graph observations into fixed-size `spaces.Dict` s of Boxes
    (`pddlgym_sl.envs.encoders.padding`: ``nodes``, ``edges``, ``edge_links``, ``n_nodes``,
    ``n_edges``, sized for the largest graph of the environment's problems): the form that
    Stable-Baselines3 and the shared memory of Gymnasium's `AsyncVectorEnv` accept.
    ``action_table=True`` adds the action table under the key ``"actions"``: the observation
    becomes ``{"state": <observation>, "actions": table}``, or, when the observation already is a
    `spaces.Dict` (``nlm``, padded graphs), that dict with an ``"actions"`` key more.

    ## Rewards

    -1 for every step (unit action costs), invalid actions included; the return of an episode is
    minus its length, so maximising it finds short plans.

    ## Starting State

    The initial state of the drawn problem.

    ## Episode End

    - Termination: the goal holds, or the state is a *dead end*: no action applies in it
      (``info["dead_end"]`` True; the action mask is all zeros). Gymnasium's ``terminated`` marks a
      terminal state of the MDP, and a state without actions is one: nothing can ever change it,
      so the episode is over inside the MDP (``truncated`` is for limits from outside it, as the
      step limit below). A learner that bootstraps should give a dead end the cost it has in
      planning, infinite, where its ``terminated`` would give 0 (`info["dead_end"]` tells them
      apart; the rewards are unchanged: -1 for the step into it).
    - Truncation: after ``max_episode_steps`` steps (500 for the registered ids; a `TimeLimit`
      added by `gym.make`).

    Once a step has returned ``terminated=True``, the next `step` without a `reset` raises
    `pddlgym_sl.errors.EpisodeEndedError` (a Gymnasium `ResetNeeded`, as a step before the first
    reset is): nothing is applied after the goal or a dead end. A problem whose initial state
    satisfies the goal (an empty goal, ``(:goal (and))``, or one the grounding proves true), or
    is a dead end (``info["dead_end"]`` at `reset`), is over at `reset`: the `terminated`
    attribute says so. Its first `step` is accepted, since vector environments and RL loops learn
    of termination from a step: it applies nothing and returns the same observation, reward 0
    (nothing was done) and ``terminated=True``; steps after it raise.

    ## Info

    ``action_mask`` (int8 array), ``problem`` (file name), ``invalid_action`` (bool; False after
    `reset`), ``dead_end`` (bool: no action applies, see Episode End), ``bounds`` (admissible
    heuristics among those requested: ``lmcut``, ``hmax``, ``blind``) and ``heuristics`` (the
    others: ``hff``, ``hadd``, ``goal_count``), each a dict of Python floats (``inf`` for a state
    from which the goal is unreachable, with actions or not) computed on the returned state by
    `pddlgym_sl.heuristics`.

    ## Vector Environments

    ``gym.make_vec("pddl/ferry-v1", num_envs=4, vectorization_mode="sync" | "async", ...)`` works
    for every observation type, each sub-environment drawing its own problems (all share the
    action space). Gymnasium's async mode passes observations through shared memory, which has no
    room for variable-size graphs: for ``ilg`` and ``hypergraph`` pass
    ``vector_kwargs={"shared_memory": False}`` or ``padded=True``. SB3's ``make_vec_env`` works
    with the observation types SB3 supports (``flat``, ``nlm``, padded graphs).

    ## Arguments

    - ``domain``: paper domain name (set by the registered id; None for ``pddl/custom-v1``).
    - ``split``: ``"train"`` (default), ``"val"``, ``"test"`` or ``"plan"``: the paper's problem
      sets, generated on first use into ``$PDDLGYM_SL_CACHE`` (default ``~/.cache/pddlgym_sl/problems``).
    - ``problems``: your own problems instead of a split: a directory (its ``*.pddl`` problem
      files) or a list of files.
    - ``domain_file``: your own STRIPS domain file (needs ``problems``).
    - ``problem``: pin one problem (index or file name) of the split or of ``problems``.
    - ``limit``: use only the first ``limit`` problems (split order: sorted by parameters, then
      seed; directories: file-name order).
    - ``obs``: ``"ilg"``, ``"nlm"``, ``"hypergraph"`` or ``"flat"``; ``obs_kwargs``: options of the
      encoder (``flat``: ``static``, ``goal``, ``size``; ``hypergraph``: ``static``; ``nlm``:
      ``n_objects``; ``ilg`` and ``hypergraph``: ``max_nodes``, ``max_edges``). Sizes not given
      are the largest over the environment's problems.
    - ``padded``: fixed-size graph observations (``ilg``, ``hypergraph``; see above).
    - ``max_actions``: the size of the action space (default: the largest action count of the
      problems); ``action_table``: add the action table to the observation.
    - ``heuristics``: names of the heuristics computed for ``info`` on every `reset`/`step`
      (default all six; ``()`` for a fast RL loop).
    - ``render_mode``: None or ``"ansi"`` (true atoms and goal as text). Other modes follow
      Gymnasium's convention: a warning, and `render` returns None (SB3's ``make_vec_env`` passes
      ``"rgb_array"``).

    Bad arguments raise `pddlgym_sl.errors.ConfigError` (a ``ValueError``) naming the problem.

    ## Version History

    - v1: one action space per environment, ``Discrete(max_actions)`` over all its problems (the
      mask zero-padded), so vector environments and SB3 can draw different problems; the action
      table (`action_table` attribute, ``action_table=True``); ``padded=True``; ``flat`` over
      several problems (zero-padded). The core grounds with Fast Downward's translator (core
      version 2): actions that can never apply or that change nothing (gripper's ``move rooma
      rooma``), and atoms that never change (they become static atoms) or cannot influence the
      goal, are gone, so the action and fact numbering changed on blocksworld, gripper and
      visitall (ferry's is unchanged); negative preconditions and equality are supported; the
      heuristic values in ``info`` are Fast Downward's. Later within v1 (issue 29; nothing changes
      for an episode that starts away from the goal and is reset once it ends): a step after the
      goal raises `EpisodeEndedError`, and a problem whose initial state is a goal is over at
      `reset` (before, its first step applied the action and the episode went on unless the goal
      still held; an empty goal failed to compile); a task without facts has a one-entry
      ``flat`` vector. Later within v1 (issue 59; both ids): a state where no action applies ends
      the episode (``terminated``, ``info["dead_end"]``), at `reset` too; before, its mask was all
      zeros and the episode went on, so a masked policy had nothing to sample.
    - v0: initial version (pyperplan's grounding), kept as an id (`PDDLEnvV0`): ``Discrete(n)``
      over the current problem's actions, replaced on `reset` when the drawn problem changes (so
      vector environments need a single problem), ``flat`` on one problem only, no action table.
      Since core version 2 it plays on the same grounding as v1.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}
    fixed_action_space: ClassVar[bool] = True
    """True: ``Discrete(max_actions)`` for every problem (v1); False: per problem (v0)."""

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
        padded: bool = False,
        max_actions: int | None = None,
        action_table: bool = False,
        heuristics: Sequence[str] | str = ALL_HEURISTICS,
        render_mode: str | None = None,
    ) -> None:
        if obs not in ENCODERS:
            raise ConfigError(f"unknown observation type {obs!r}; expected one of {', '.join(ENCODERS)}")
        encoder = ENCODERS[obs]  # what it is (graph, width) decides below, never its name
        if padded and not encoder.graph:
            graphs = ", ".join(name for name, cls in ENCODERS.items() if cls.graph)
            raise ConfigError(f"padded=True pads graph observations ({graphs}), not {obs!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            gym.logger.warn(
                f"render_mode={render_mode!r} is not supported ({self.metadata['render_modes']}); "
                "render() will return None"
            )
        self.problem_set: ProblemSet = resolve_problems(
            domain, split=split, problems=problems, domain_file=domain_file, problem=problem, limit=limit
        )
        if not self.fixed_action_space:
            if max_actions is not None or action_table:
                raise ConfigError("max_actions= and action_table= need the -v1 ids (pddl/<domain>-v1)")
            if encoder.width == "facts" and len(self.problem_set) > 1:
                raise ConfigError(
                    f"obs={obs!r} is a fact vector of ONE problem in -v0, but this environment has "
                    f"{len(self.problem_set)}; select one with problem=<index or file name>, "
                    "problems=[file] or limit=1, or use the -v1 id"
                )
        self.heuristic_names = _check_heuristics(heuristics)
        self.render_mode = render_mode
        self.obs_type = obs
        try:
            self.schema = Schema.from_domain_file(self.problem_set.domain_file)
        except PDDLError as exc:
            raise ConfigError(f"cannot read the domain: {exc}") from None

        self._tasks: dict[int, CompiledTask] = {}
        self._encoders: dict[int, Any] = {}
        self._evaluators: dict[int, tuple[tuple[str, str, Any], ...]] = {}
        self._action_spaces: dict[int, spaces.Discrete] = {}
        self._tables: dict[int, np.ndarray] = {}
        self.max_actions: int | None = None  # task_of checks it once set
        self._obs_kwargs: dict[str, Any] = {}  # task_of checks nlm's n_objects once set
        self._obs_kwargs = self._observation_options(dict(obs_kwargs or {}), padded)
        if self.fixed_action_space:
            self.max_actions = self._resolve_max_actions(max_actions)
        self._with_table = bool(action_table)

        # Compile the first problem now: it fixes the initial action space (v0) and checks that the
        # observation encoder accepts the options.
        self._select(0)
        self.observation_space = self._observation_space()
        if self.fixed_action_space:
            self.action_space = spaces.Discrete(self.max_actions)
        self._words: np.ndarray | None = None
        # at the goal or a dead end; a step has returned terminated=True; no action applies
        self._terminated = self._ended = self._dead_end = False

    # ----------------------------------------------------------------- construction
    def _all_tasks(self) -> list[CompiledTask]:
        """Every problem compiled (each once; kept)."""
        return [self.task_of(i) for i in range(len(self.problem_set))]

    def _observation_options(self, options: dict[str, Any], padded: bool) -> dict[str, Any]:
        """The encoder options with the sizes that make one observation space fit every problem,
        unless given: an encoder of ``width="objects"`` gets the most objects of the problem files
        (a scan, nothing compiled); one of ``width="facts"`` over several problems, and a graph
        encoder with ``padded=True``, what its ``padding`` gives over the compiled problems."""
        cls = ENCODERS[self.obs_type]
        if cls.width == "objects":
            consts = self.schema.n_constants
            most = max(count_objects(f, consts) for f in self.problem_set.files)
            return {**dict.fromkeys(cls.size_options, most), **options}
        wanted: tuple[str, ...] = ()
        if (cls.width == "facts" and len(self.problem_set) > 1) or (padded and cls.graph):
            wanted = cls.size_options
        missing = [k for k in wanted if k not in options]
        if missing:
            given = {k: v for k, v in options.items() if k not in wanted}
            try:
                sizes = [cls.padding(self.schema, task, **given) for task in self._all_tasks()]
            except TypeError as exc:
                raise ConfigError(f"bad obs_kwargs {given}: {exc}") from None
            options.update({k: max(s[k] for s in sizes) for k in missing})
        return options

    def _resolve_max_actions(self, max_actions: int | None) -> int:
        if max_actions is None:
            return max(1, *(task.n_actions for task in self._all_tasks()))
        if isinstance(max_actions, bool) or not isinstance(max_actions, int | np.integer) or max_actions < 1:
            raise ConfigError(f"max_actions must be a positive int or None, got {max_actions!r}")
        return int(max_actions)

    def _observation_space(self) -> spaces.Space:
        space = self._encoder.space
        if not self._with_table:
            return space
        scanned = [count_objects(f, self.schema.n_constants) for f in self.problem_set.files]
        n_objects = max(*scanned, *(len(t.objects) for t in self._tasks.values()))
        table = action_table_space(self.schema, self.max_actions, n_objects)
        if isinstance(space, spaces.Dict):
            return spaces.Dict({**space.spaces, "actions": table})
        return spaces.Dict({"state": space, "actions": table})

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
            task = load_shared(self.problem_set.domain_file, path)
            cls = ENCODERS[self.obs_type]
            slots = self._obs_kwargs.get(cls.size_options[0], np.inf) if cls.width == "objects" else np.inf
            if len(task.objects) > slots:
                raise PDDLError(
                    f"problem has {len(task.objects)} objects, more than the {slots} "
                    f"object slots of the {self.obs_type} observation space",
                    file=path,
                )
            if self.max_actions is not None and task.n_actions > self.max_actions:
                raise PDDLError(
                    f"problem has {task.n_actions} ground actions, more than max_actions={self.max_actions}",
                    file=path,
                )
            self._tasks[index] = task
        return task

    @property
    def action_table(self) -> np.ndarray:
        """The current problem's action table (see Action Space; a fresh int64 array)."""
        if not self.fixed_action_space:
            raise ConfigError("the action table needs the -v1 ids (pddl/<domain>-v1)")
        return self._table.copy()

    def _select(self, index: int) -> None:
        """Make problem `index` current: task, encoder, heuristics, action space, kernel arrays."""
        task = self.task_of(index)
        if index not in self._encoders:
            self._encoders[index] = make_encoder(self.obs_type, self.schema, task, **self._obs_kwargs)
            if self.fixed_action_space:
                self._tables[index] = action_table(self.schema, task, self.max_actions)
            else:
                self._action_spaces[index] = spaces.Discrete(max(1, task.n_actions))
        self._index = index
        self.task = task
        self._encoder = self._encoders[index]
        self._encode = self._encoder.encode
        if self.fixed_action_space:
            self._table = self._tables[index]
            self._mask_size = self.max_actions
            if self._with_table:
                self._encode = _with_table(self._encoder.encode, self._table)
        else:
            self.action_space = self._action_spaces[index]
            self._mask_size = task.n_actions
        self._problem_name = self.problem_set.names[index]
        self._pre = (task.pre_ptr, task.pre_idx, task.neg_ptr, task.neg_idx)
        # The mask kernel and its arguments: padding costs a second call only when there is any.
        if task.n_actions == self._mask_size:
            self._mask_of, self._mask_args = _k.action_mask, self._pre
        else:
            self._mask_of, self._mask_args = _padded_action_mask, (*self._pre, self._mask_size)
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
        self._mask = self._mask_of(words, *self._mask_args)
        self._update_end(words)
        self._ended = False
        return self._encode(words), self._info(words, False)

    def _update_end(self, words: np.ndarray) -> None:
        """Whether the episode is over at `words`: the goal holds, or no action applies."""
        goal = self._solvable and bool(_k.satisfies(words, *self._goal))
        self._dead_end = not goal and not self._mask.any()
        self._terminated = goal or self._dead_end

    @property
    def terminated(self) -> bool:
        """Whether the current state satisfies the goal or is a dead end (the episode is over; see
        Episode End)."""
        if self._words is None:
            raise ResetNeeded("call reset() first")
        return self._terminated

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        words = self._words
        if words is None:
            raise ResetNeeded("call reset() before step()")
        a = _action_index(action)
        if self._terminated:
            if self._ended:
                where = "in a dead end" if self._dead_end else "at the goal"
                raise EpisodeEndedError(
                    f"step() after the episode ended {where} (terminated=True): call reset() first",
                    file=self.task.problem_file,
                )
            self._ended = True  # over at reset: this step reports it and applies nothing
            return self._encode(words), 0.0, True, False, self._info(words, False)
        if 0 <= a < self._n_actions and self._mask[a]:
            words = _k.apply_action(words, a, *self._eff)
            self._words = words
            self._mask = self._mask_of(words, *self._mask_args)
            self._update_end(words)
            self._ended = self._terminated
            invalid = False
        else:
            invalid = True
        return self._encode(words), -1.0, self._terminated, False, self._info(words, invalid)

    def _info(self, words: np.ndarray, invalid: bool) -> dict[str, Any]:
        info: dict[str, Any] = {
            "action_mask": self._mask.copy(),
            "problem": self._problem_name,
            "invalid_action": invalid,
            "dead_end": self._dead_end,
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
        if self.render_mode != "ansi":
            gym.logger.warn(
                f"render() with render_mode={self.render_mode!r} returns None; pass render_mode='ansi' "
                "to gym.make for text"
            )
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


class PDDLEnvV0(PDDLEnv):
    """The ``pddl/<domain>-v0`` ids: `PDDLEnv` with the action space of the current problem,
    ``Discrete(task.n_actions)``, replaced on `reset` when the drawn problem changes (one space
    object per problem, so a seeded space stays seeded), and the action mask of that length.
    Kept for compatibility (see `PDDLEnv`'s Version History); ``max_actions`` and
    ``action_table`` need v1, and so do vector environments over several problems."""

    fixed_action_space: ClassVar[bool] = False


@njit(cache=CACHE)
def _padded_action_mask(words, pre_ptr, pre_idx, neg_ptr, neg_idx, size):
    """`successors.action_mask` zero-padded to `size` entries (one compiled call per step)."""
    mask = _k.action_mask(words, pre_ptr, pre_idx, neg_ptr, neg_idx)
    out = np.zeros(size, dtype=np.int8)
    out[: mask.shape[0]] = mask
    return out


def _with_table(encode, table: np.ndarray):
    """An encode function adding the action table to the observation (see Observation Space)."""

    def encode_with_table(words: np.ndarray) -> dict[str, Any]:
        obs = encode(words)
        if isinstance(obs, dict):
            return {**obs, "actions": table.copy()}
        return {"state": obs, "actions": table.copy()}

    return encode_with_table


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
