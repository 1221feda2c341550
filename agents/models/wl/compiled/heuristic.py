"""`CompiledWLHeuristic`: a trained WL model as a heuristic computed by numba, batch or in-engine.

Per state, one compiled function (`wl_value`) computes what `agents.learned_heuristic.
LearnedHeuristic` computes with wlplan and torch: the admissible bound l and the residual base
(`symbolic`), and unless one of them is infinite (a dead end: ``inf``), the state's WL colour
counts (`kernels`, incremental from the previous state), the linear map (`export`) and the head's
value:

- N: ``μ = raw_0 (+ residual base)``; with ``clip``: ``min(max(μ, l), u)``;
- TN: ``E[x]`` of ``TN(μ, σ, l - 0.1, u)``, σ fixed at 1/√2 or ``0.1 + 10 sigmoid(raw_1)``; with
  an explicit ``u`` (anytime search): ``min(E[x], u)`` of ``TN(μ, σ, l - 0.1, u + 0.1)``
  (`agents.distributions.compiled.tn_value`); ``clip`` as for N;

u being the head's default (1e5, or inf for ``upper="inf"``) where none is given. N without clip
needs l only to spot dead ends, so it tests relaxed reachability there instead of computing l
(`symbolic.ReachArgs`: the same ``inf`` states); and inside the engine it tests only the states the
search expands (`pddlgym_sl.heuristics.compiled.value_on_expansion`), not every successor: the
same search, with the test once per expansion instead of once per evaluation (on blocksworld's
medium tasks the test costs ~20 times the WL update of a state).

**The bound at search** (``search_bound``, `SEARCH_BOUNDS`): where the value reads l (TN, or
clip), l is what makes each state dear (LM-cut costs 3 to 1,800 times WL's update per state on
the IPC 2023 tasks, docs/ipc23.md). The choices:

- ``trained``: the head's own bound, computed for every evaluated state (the values above);
- ``lmcut``, ``hmax``: that bound instead (hmax: a looser l at a fraction of LM-cut's cost);
- ``screened``: the trained bound computed only where it can move the value. Every bound here
  is at most h+ (the optimal delete-relaxed cost), and h+ ≤ hFF, so l ≤ hFF. Where
  ``μ − hFF ≥ k σ`` (``k = SCREEN_SIGMAS``), the TN's standardised lower end is α ≤ −k and its
  mean exceeds μ by at most ``σ φ(k) / Φ(k)`` (`SCREEN_TOLERANCE` σ, about 6e-9 σ), so the value
  is μ there and l is not computed (hFF is, unless it is the residual base already);
- ``lazy``: the trained bound computed when the search is about to expand a state, not when it
  evaluates it: the engine files a state under μ, a lower bound of E[x] and of ``max(μ, l)``,
  and files it again under its value if that is larger
  (`pddlgym_sl.heuristics.compiled.value_on_expansion`); the search expands the states the
  eager one does, in the same order but among equal values, with one bound per expansion instead
  of one per evaluated successor. ``batch`` gives the values themselves;
- ``none``: the value is μ, the bound is not used (a TN trained with it, searched without it);
  dead ends are found by relaxed reachability on expansion, as for N.

The arithmetic is the torch path's (`WLLinear` in eval mode, `agents.heads`): the linear map's
float32 terms summed in float64 and rounded to float32 once, N's head then in float32 and TN's in
float64, σ by the same compiled ``exp``. So the values equal the torch path's to the last bit,
but where a float64 sum falls within its rounding error (about 1e-16 of its terms) of a float32
rounding tie (tests/test_wl_compiled.py: over 99% bit-equal, all within 1e-6 of the sums'
terms), and searches with either are the same node for node.

Two ways in: ``batch(states[, upper])`` evaluates a batch in one compiled call (for Python
callers: the anytime search with its ``upper``, the tests), and ``engine_args()`` hands the arrays
to the search engine, which evaluates states inside its compiled loop (`pddlgym_sl.search.gbfs`) through
`pddlgym_sl.heuristics.compiled.state_values`, which this module overloads for `WLEngineArgs`.
Both use the same work arrays, so they may be mixed. Not thread-safe (one instance per thread).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from agents.distributions.compiled import inverse_mills, learned_sigma_one, tn_value_one
from agents.distributions.constants import FIXED_SIGMA
from agents.errors import AgentError
from agents.models.wl.compiled.export import WLExport, export_wl
from agents.models.wl.compiled.graph import task_graph
from agents.models.wl.compiled.kernels import counts_batch, linear_output, update, wl_arrays
from agents.models.wl.compiled.symbolic import symbolic_args, symbolic_value
from agents.registries import SEARCH_BOUNDS
from pddlgym_sl.heuristics import make_heuristic
from pddlgym_sl.heuristics.compiled import LAZY_VALUES, state_values, value_on_expansion
from pddlgym_sl.numba_cache import CACHE
from pddlgym_sl.task import CompiledTask, State

__all__ = [
    "SCREEN_SIGMAS",
    "SCREEN_TOLERANCE",
    "SEARCH_BOUNDS",
    "CompiledWLHeuristic",
    "WLEngineArgs",
    "screen_tolerance",
    "wl_value",
]

_JIT = {"cache": CACHE, "nogil": True, "error_model": "numpy"}
_INLINE = {**_JIT, "inline": "always"}
# fields of WLEngineArgs.head
_TN, _LEARN_SIGMA, _DEFAULT_UPPER, _CLIP, _SOLVABLE, _DEAD_ENDS_ONLY, _MODE, _SCREEN_BASE = range(8)
# _MODE: how the value gets its bound (`SEARCH_BOUNDS`)
_EAGER, _SCREENED, _LAZY = 0.0, 1.0, 2.0
SCREEN_SIGMAS = 6.0
"""k of the screening: the bound is skipped where ``μ − hFF ≥ k σ``."""


def screen_tolerance(k: float = SCREEN_SIGMAS) -> float:
    """The most, in units of σ, by which a TN mean exceeds μ where ``μ − l ≥ k σ``:
    ``φ(k) / Φ(k)`` (`agents.distributions.compiled.inverse_mills`; the default upper end, 1e5, adds
    nothing measurable for μ below 1e4)."""
    return inverse_mills(k)


SCREEN_TOLERANCE = screen_tolerance()
"""`screen_tolerance` at `SCREEN_SIGMAS`: 6.1e-9."""


class WLEngineArgs(NamedTuple):
    """Everything `wl_value` reads and writes: what ``engine_args()`` returns. ``ints``, ``words``,
    ``reals``, ``floats``: the model and the task's WL state (`kernels.WLArrays`); ``head``:
    float64 [TN (0/1), learned σ (0/1), default u, clip (0/1), task solvable (0/1), the value does
    not read the bound, which only recognises dead ends (0/1), the mode (eager, screened, lazy),
    the residual base is hFF and screens (0/1)]; ``lower``, ``residual``, ``screen``: the bound,
    the residual base and the screening hFF (`symbolic`; `symbolic.NoSymbolic` for none)."""

    ints: np.ndarray
    words: np.ndarray
    reals: np.ndarray
    floats: np.ndarray
    head: np.ndarray
    lower: Any
    residual: Any
    screen: Any


@njit(**_INLINE)
def wl_value(args, words, upper, has_upper, provisional):
    """The heuristic value of one state (the module docstring); `upper` is used when `has_upper`.
    With `provisional` (inside the engine), a bound that only recognises dead ends, or the bound
    of the lazy mode, is left to `_value_at_expansion`, and the value is then μ, a lower bound of
    the value (`pddlgym_sl.heuristics.compiled.value_on_expansion`)."""
    head = args.head
    if head[_SOLVABLE] == 0.0:
        return np.inf
    dead_ends_only = head[_DEAD_ENDS_ONLY] != 0.0
    mode = head[_MODE]
    deferred = provisional and (dead_ends_only or mode == _LAZY)
    if deferred or (mode == _SCREENED and not dead_ends_only):
        lower = 0.0  # not yet: at expansion, or after the screening
    else:
        lower = symbolic_value(args.lower, words)
    base = symbolic_value(args.residual, words)
    if lower == np.inf or base == np.inf:
        return np.inf
    ints, state, reals, floats = args.ints, args.words, args.reals, args.floats
    update(ints, state, reals, floats, words)
    # the outputs are float32, as `WLLinear`'s: the float64 sum rounded once (the torch path's
    # values to the last bit, but where a sum falls within its rounding error of a float32 tie)
    raw = np.float32(linear_output(ints, state, reals, 0))
    u = upper if has_upper else head[_DEFAULT_UPPER]
    if head[_TN] == 0.0:  # the torch head's float32 arithmetic: μ = raw + h, clipped to [l, u]
        mu = raw + np.float32(base)
        if head[_CLIP] != 0.0 and not dead_ends_only:
            if deferred:
                return np.float64(mu)  # at most max(μ, l)
            if mode == _SCREENED:
                lower = symbolic_value(args.lower, words)
                if lower == np.inf:
                    return np.inf
            mu = min(max(mu, np.float32(lower)), np.float32(u))
        return np.float64(mu)
    # agents.heads.TruncatedGaussianHead.heuristic_values: float64 from the float32 outputs (np.float64,
    # not float(), which numba types float32 for a float32, and the exp would be float32's)
    mu = np.float64(raw) + base
    if dead_ends_only or deferred:
        return mu  # `none`: the value is μ; lazy: at most E[x]
    if head[_LEARN_SIGMA] != 0.0:
        sigma = learned_sigma_one(np.float64(np.float32(linear_output(ints, state, reals, 1))))
    else:
        sigma = FIXED_SIGMA  # a module global: numba freezes it into the kernel
    if mode == _SCREENED:
        screen = base if head[_SCREEN_BASE] != 0.0 else symbolic_value(args.screen, words)
        if screen == np.inf:
            return np.inf
        if mu - screen >= SCREEN_SIGMAS * sigma and not has_upper and head[_CLIP] == 0.0:
            return mu  # l <= h+ <= hFF: E[x] - μ <= SCREEN_TOLERANCE σ
        lower = symbolic_value(args.lower, words)
        if lower == np.inf:
            return np.inf
    value = tn_value_one(mu, sigma, lower, u, has_upper)
    if head[_CLIP] != 0.0:
        value = min(max(value, lower), u)
    return value


@njit(**_JIT)
def _batch(args, states, upper, has_upper, out):
    for k in range(states.shape[0]):
        out[k] = wl_value(args, states[k], upper[k] if has_upper else 0.0, has_upper, False)


@njit(**_JIT)
def _engine_values(args, states, n, out):
    for k in range(n):
        out[k] = wl_value(args, states[k], 0.0, False, True)


@njit(**_JIT)
def _value_at_expansion(args, words, h):
    """The value of a state the engine is about to expand, whose evaluation in `_engine_values`
    gave `h`: inf for a dead end that evaluation left to this test (the bound only recognises
    dead ends: relaxed reachability), the value itself in the lazy mode, else `h`."""
    head = args.head
    if head[_DEAD_ENDS_ONLY] != 0.0:
        return np.inf if symbolic_value(args.lower, words) == np.inf else h
    if head[_MODE] == _LAZY:
        return wl_value(args, words, 0.0, False, False)
    return h


@overload(state_values, jit_options=_JIT)
def _state_values(args, states, n, out):
    if getattr(args, "instance_class", None) is WLEngineArgs:
        return lambda args, states, n, out: _engine_values(args, states, n, out)
    return None


@overload(value_on_expansion, jit_options=_JIT)
def _value_on_expansion(args, words, h):
    if getattr(args, "instance_class", None) is WLEngineArgs:
        return lambda args, words, h: _value_at_expansion(args, words, h)
    return None


LAZY_VALUES.add(WLEngineArgs)


class CompiledWLHeuristic:
    """A trained WL model (``--model wl``, N or TN head) as a compiled heuristic on one task.

    Args:
        trained: the restored model and head (`agents.learned_heuristic.TrainedModel`).
        task: the task whose states will be evaluated.
        clip: clip the value to the admissible bound (the paper's "+clip").
        schema, device: accepted for `LearnedHeuristic`'s signature and not used (the vocabulary
            comes from the task's domain file; the kernels run on the CPU).
        search_bound: which bound the value reads, and when (`SEARCH_BOUNDS`, the module
            docstring); ``trained`` by default.

    Raises `AgentError` for another model, the categorical head, an unknown ``search_bound``, or
    a colour table the kernels do not compute (see `table.colour_table`).
    """

    def __init__(
        self,
        trained: Any,
        task: CompiledTask,
        schema: Any = None,
        clip: bool = False,
        device: Any = None,
        search_bound: str = "trained",
    ) -> None:
        if trained.name != "wl":
            raise AgentError(f"CompiledWLHeuristic needs a --model wl run, not {trained.name!r}")
        if search_bound not in SEARCH_BOUNDS:
            raise AgentError(f"search_bound={search_bound!r}: choose one of {', '.join(SEARCH_BOUNDS)}")
        self.trained, self.task, self.clip, self.search_bound = trained, task, clip, search_bound
        self.export: WLExport = export_wl(trained.model, trained.head)
        e = self.export
        graph = task_graph(task, list(self.export.predicates))
        bound = search_bound if search_bound in ("lmcut", "hmax") else self.export.bound
        self.lower = make_heuristic(bound, task)
        self.residual = make_heuristic(self.export.residual, task) if self.export.residual else None
        model = (e.c0, e.weight, e.wz0, e.mean, e.inv_std)
        arrays = wl_arrays(e.table, graph, task.n_words, model, reference=np.array(task.init.words))
        # N without clip (and any head searched without its bound) needs the bound only where it
        # is infinite: relaxed reachability then, inside the engine only on the states it expands
        dead_ends_only = search_bound == "none" or not trained.head.bound_in_value(clip)
        mode = {"screened": _SCREENED, "lazy": _LAZY}.get(search_bound, _EAGER)
        screen_base = self.export.residual == "hff"
        screen = make_heuristic("hff", task) if mode == _SCREENED and not screen_base else None
        flags = [float(clip), float(task.solvable), float(dead_ends_only), mode, float(screen_base)]
        head = np.concatenate([e.head, flags])
        lower = symbolic_args(self.lower, dead_ends_only)
        self._args = WLEngineArgs(
            *arrays, head, lower=lower, residual=symbolic_args(self.residual), screen=symbolic_args(screen)
        )

    @property
    def n_features(self) -> int:
        return self.export.n_features

    def engine_args(self) -> WLEngineArgs:
        """The arrays a compiled search evaluates states with (`pddlgym_sl.heuristics.compiled`)."""
        return self._args

    def _states(self, states: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        if states.ndim != 2 or states.shape[1] != self.task.n_words:
            raise AgentError(
                f"expected a (n, {self.task.n_words}) uint64 state batch of task {self.task.name!r}, "
                f"got shape {states.shape}"
            )
        return np.ascontiguousarray(states, dtype=np.uint64)

    def batch(self, states: np.ndarray, upper: np.ndarray | None = None) -> np.ndarray:
        """Values (float64, inf for a dead end) of a (n, n_words) uint64 batch, given an upper bound
        per state in `upper` ((n,) floats, inf for none) or none at all (the module docstring)."""
        states = self._states(states)
        out = np.empty(len(states), dtype=np.float64)
        if upper is None:
            _batch(self._args, states, np.zeros(0), False, out)
        else:
            upper = np.ascontiguousarray(upper, dtype=np.float64).reshape(-1)
            if upper.shape != (len(states),):
                raise AgentError(f"upper has {upper.shape[0]} values for {len(states)} states")
            _batch(self._args, states, upper, True, out)
        return out

    def counts(self, states: np.ndarray) -> np.ndarray:
        """The WL colour counts of a batch, (n, n_features) int64: what wlplan's
        `WLFeaturizer.embed` gives (as float32) for the same states of this task."""
        states = self._states(states)
        out = np.empty((len(states), self.n_features), dtype=np.int64)
        a = self._args
        counts_batch(a.ints, a.words, a.reals, a.floats, states, out)
        return out

    def __call__(self, state: State | np.ndarray) -> float:
        words = state.words if isinstance(state, State) else np.asarray(state)
        return float(self.batch(words[None, :])[0])

    def __repr__(self) -> str:
        return f"CompiledWLHeuristic({self.task.name!r}, {self.n_features} features)"
