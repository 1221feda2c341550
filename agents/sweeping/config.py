"""`SweepConfig`, the flags of ``python -m agents.sweep``: which part of the grid to train, evaluate and
report, and how."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agents.registries import BOUNDS, DISTS, MODEL_NAMES, RESIDUALS, SIGMAS
from pddlgym_sl.arguments import check_ranges
from pddlgym_sl.parallel import BACKENDS, Backend

__all__ = ["SweepConfig"]


@dataclass
class SweepConfig:
    """Train, evaluate and report a subset of the paper's grid with local subprocesses (or Ray tasks)."""

    grid: Path = Path("configs/grid.yaml")
    """grid axes (domains, models, dists, sigmas, residuals, seeds; optional bounds)"""
    domains: list[str] | None = None
    """restrict the grid's domains"""
    models: list[Literal[MODEL_NAMES]] | None = None
    """restrict the grid's models"""
    dists: list[Literal[DISTS]] | None = None
    """restrict the grid's distributions"""
    sigmas: list[Literal[SIGMAS]] | None = None
    """restrict the grid's sigma settings"""
    residuals: list[Literal[RESIDUALS]] | None = None
    """restrict the grid's residuals"""
    bounds: list[Literal[BOUNDS]] | None = None
    """lower bounds l of TN (default: the grid's, else lmcut)"""
    seeds: list[int] | None = None
    """restrict the grid's seeds"""
    steps: int | None = None
    """training steps (default: the preset's, else the trainer's)"""
    data: Path | None = None
    """dataset root (default: the preset's, else data/small)"""
    val_every: int | None = None
    """steps between validations (default: the preset's, else the trainer's)"""
    test_split: str | None = None
    """labelled split of the final test metrics (default: the trainer's, test)"""
    batch_size: int | None = None
    """states per training step (default: the preset's, else the trainer's)"""
    device: str | None = None
    """training device (default: the trainer's, auto)"""
    presets: bool = True
    """train with configs/<domain>-<model>.yaml (beside --grid) when it exists"""
    out: Path = Path("runs/sweep")
    """sweep directory: runs, baselines/, logs/, report/"""
    jobs: int = 2
    """subprocesses at once (each on one thread; local backend)"""
    backend: Literal[BACKENDS] = "local"
    """where jobs run: local subprocesses, or ray (Ray tasks on a cluster; the [cluster] extra)"""
    address: str | None = None
    """--backend ray: the cluster's address (auto, or HOST:PORT; default: $RAY_ADDRESS, else a Ray
    instance of this machine)"""
    split: str = "plan"
    """evaluation split"""
    limit: int = 10_000
    """node-evaluation budget per problem"""
    problems: int | None = None
    """evaluate only N problems, evenly spread over the sorted split"""
    eval: bool = True
    """evaluate the runs and the hFF baseline (--no-eval: train only)"""
    report: bool = True
    """write the report to <out>/report/ at the end"""
    dry_run: bool = False
    """print the jobs that would run, run nothing"""
    quiet: bool = False
    """no progress bar, job messages or tables"""

    def __post_init__(self) -> None:
        check_ranges(self, positive=("steps", "val_every", "batch_size", "jobs", "limit", "problems"))
        Backend(self.backend, self.jobs, self.address)  # --address without --backend ray
