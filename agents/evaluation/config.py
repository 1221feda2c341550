"""What an evaluation does, by keyword: `EvaluationConfig`, the flags of ``python -m agents.evaluate``.

``EvaluationConfig(run=Path("runs/x"), split="plan", limit=10_000)`` is ``python -m agents.evaluate
--run runs/x``; the field docstrings are the flags' help texts. Importing this module imports no
torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agents.evaluation.searches import DEFAULT_SEARCH, PRUNE_CHOICES, SEARCH_NAMES
from agents.registries import SEARCH_BOUNDS
from pddlgym_sl.arguments import check_ranges
from pddlgym_sl.errors import ConfigError
from pddlgym_sl.lifted.mode import GROUNDINGS, LIFTED_SEARCHES
from pddlgym_sl.parallel import BACKENDS, Backend

__all__ = ["EvaluationConfig"]


@dataclass
class EvaluationConfig:
    """Evaluate a trained run (or a symbolic heuristic) with GBFS under an evaluation budget."""

    run: Path | None = None
    """run directory of agents.supervised (model.json + best.safetensors)"""
    heuristic: str | None = None
    """symbolic baseline instead of a run: hff, lmcut, hadd, hmax, goal_count, blind"""
    domain: str | None = None
    """domain of the problems (default: the run's)"""
    split: str = "plan"
    """problem set: plan (the paper's 100 problems), test, val, train"""
    data: Path | None = None
    """dataset root whose <domain>/<split>/problems to use (default: the run's --data)"""
    limit: int = 10_000
    """node-evaluation budget per problem"""
    problems: int | None = None
    """evaluate only N problems, evenly spread over the sorted split (so every size is kept)"""
    tasks: Path | None = None
    """plan on the task files of this directory instead of a split (an IPC domain's testing-easy)"""
    domain_file: Path | None = None
    """domain file of --tasks (default: DIR/domain.pddl or DIR/../domain.pddl)"""
    time_limit: float | None = None
    """wall-clock limit of each search in seconds (default: none)"""
    limits_cover_grounding: bool = False
    """--time-limit and the memory limit cover loading and grounding each task too, as in the IPC:
    the task is loaded in a child process under them (a task not grounded in time ends with status
    time_limit, one whose grounding runs out of memory with memory_limit; ended_in says which
    phase), and its search gets the time left after the heuristic's setup; one search at a time
    (no --lockstep). Compiling the kernels, once per process before its first task (compile_seconds),
    is not counted"""
    memory_limit: float | None = None
    """memory limit of each search's process in MB: a search that would pass it ends with status
    memory_limit (default: 3/4 of the machine's memory, shared by the --jobs processes); not for
    --search dual or --prune (their queues are Python's)"""
    clip: bool = False
    """N+clip: clip mu below by the admissible bound"""
    search_bound: Literal[SEARCH_BOUNDS] = "trained"
    """the bound a learned value reads at search (TN, N+clip): the run's own on every evaluated state
    (trained), lmcut or hmax instead, screened (the trained bound only where mu - hFF < 6 sigma: the
    value is the same to 6e-9 sigma), lazy (the trained bound when a state is expanded, mu until then:
    the same search but among equal values), or none (the value is mu); screened and lazy: --model wl"""
    grounding: Literal[GROUNDINGS] = "auto"
    """ground each task (Fast Downward's translator), keep it lifted (pddlgym_sl.lifted: GBFS only, with a
    --model wl run or goal_count, blind, hmax, hadd, hff), or auto: lifted when grounding is estimated
    beyond the memory limit, or (with --limits-cover-grounding) runs past half the time limit or out of
    memory; each record says which (grounding)"""
    lifted_search: Literal[LIFTED_SEARCHES] = "eager"
    """how a task loaded lifted is searched: eager GBFS (each successor evaluated when generated) or
    lazy GBFS (each state when expanded, queued under its parent's value until then: one evaluation
    per expansion, for tasks with hundreds of successors per state); its records say which
    (lifted_search)"""
    search: Literal[SEARCH_NAMES] = DEFAULT_SEARCH
    """gbfs; dual (dual-queue GBFS with the learned heuristic and hFF, round robin); astar; anytime
    (restarting GBFS with u = C - g(s)); anytime-no-u (its ablation without u); every search stops
    at --limit evaluations (10,000 by default)"""
    jobs: int = 1
    """parallel processes (each runs its own copy of the model on one thread; local backend)"""
    backend: Literal[BACKENDS] = "local"
    """where problems are searched: local processes, or ray (a Ray cluster; the [cluster] extra)"""
    address: str | None = None
    """--backend ray: the cluster's address (auto, or HOST:PORT; default: $RAY_ADDRESS, else a Ray
    instance of this machine)"""
    lockstep: int | None = None
    """GBFS searches advanced together in one process (agents.lockstep): each round one forward pass
    over the new states of all of them, their bounds on both cores; every search is node for node the
    one it would be alone, its seconds count the wall time it was open. Default: 8 for plain GBFS with
    a learned heuristic (torch path), --jobs 1 and the local backend, else 1 (one search at a time)"""
    device: str = "cpu"
    """device of the forward passes: cpu (GBFS evaluates one expansion's successors at a time, batches
    too small to pay a GPU's transfers), auto (cuda when available), cuda, ..."""
    compiled: bool = True
    """a --model wl run (N or TN head) evaluates with its compiled numba heuristic, the same values as
    the torch forward pass (not for the dual / --prune searches, which need confidences);
    --no-compiled forces the torch path"""
    out: Path | None = None
    """result directory (default: <run>/eval/<split>[-clip] or runs/baselines/...)"""
    accuracy: bool = False
    """instead of planning: print (and write to <run>/eval/accuracy.json) the run's accuracy on its
    dataset's test split (Table 1: MSE, MSE+clip, NLL, beside hFF and LM-cut); needs --run"""
    confidence: bool = False
    """first (re)write the run's confidence files (training-data thresholds, Table 1 of Heller et al.)"""
    prune: Literal[PRUNE_CHOICES] = "none"
    """confidence threshold of the learned heuristic (from its training data): mean or adaptive; states
    below it are pruned (dual: from the learned queue only); needs --threshold"""
    prioritize: bool = False
    """dual only: the --prune threshold decides the turns instead of pruning (stay on the learned queue
    after a confident expansion, else one hFF expansion)"""
    threshold: float | None = None
    """X: the threshold puts X% of the training states below it (the paper: 5, 20, 40, 80)"""
    quiet: bool = False
    """no progress bar"""

    def __post_init__(self) -> None:
        check_ranges(self, positive=("limit", "problems", "jobs", "time_limit", "memory_limit", "lockstep"))
        if self.limits_cover_grounding and self.time_limit is None:
            raise ConfigError("--limits-cover-grounding needs --time-limit")
        Backend(self.backend, self.jobs, self.address)  # --address without --backend ray
