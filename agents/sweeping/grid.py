"""The grid of a sweep: its cells (domain × model × dist × σ × residual × bound × seed), each
cell's training preset and dataset."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agents.config_files import resolve_config
from agents.registries import BOUNDS, DISTS, RESIDUALS, SIGMAS
from agents.sweeping.config import SweepConfig
from pddlgym_sl.errors import ConfigError

__all__ = ["DEFAULT_DATA", "Cell", "data_root", "grid_axes", "grid_cells", "preset"]

DEFAULT_DATA = Path("data/small")  # agents.apps.supervised's default dataset


def grid_axes() -> dict[str, tuple[Any, ...] | None]:
    """Each axis of the grid and its valid values (None: any), from the registries (the live
    `MODELS`: imported here, not at module level, so that ``--help`` loads no torch)."""
    from agents.registries import MODELS

    return {
        "domains": None,
        "models": tuple(MODELS),
        "dists": DISTS,
        "sigmas": SIGMAS,
        "residuals": RESIDUALS,
        "bounds": BOUNDS,
        "seeds": None,
    }


@dataclass(frozen=True)
class Cell:
    """One training run: a grid cell and a seed."""

    domain: str
    model: str
    dist: str
    sigma: str
    residual: str
    bound: str
    seed: int

    @property
    def name(self) -> str:
        bound = f"__{self.bound}" if self.bound != "lmcut" else ""
        return f"{self.domain}__{self.model}__{self.dist}__{self.sigma}__{self.residual}{bound}__s{self.seed}"


def grid_cells(args: SweepConfig) -> list[Cell]:
    """The cells of the grid file restricted by the command line, seed-major (seed 0 of every cell
    first, so that an interrupted sweep still covers the whole grid)."""
    try:
        grid = yaml.safe_load(resolve_config(args.grid).read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the grid: {exc}", file=args.grid) from None
    axes: dict[str, list[Any]] = {}
    for axis, allowed in grid_axes().items():
        chosen = getattr(args, axis)
        values = list(chosen) if chosen is not None else list(grid.get(axis) or [])
        if axis == "bounds" and not values:
            values = ["lmcut"]
        if not values:
            raise ConfigError(f"no {axis}: give --{axis} or list them in the grid", file=args.grid)
        bad = [v for v in values if allowed is not None and v not in allowed]
        if bad:
            raise ConfigError(f"unknown {axis} {bad} (valid: {list(allowed)})", file=args.grid)
        axes[axis] = list(dict.fromkeys(values))
    cells = [
        Cell(d, m, dist, s, r, b, int(seed))
        for seed in axes["seeds"]
        for d, m, s, r, b, dist in itertools.product(
            axes["domains"], axes["models"], axes["sigmas"], axes["residuals"], axes["bounds"], axes["dists"]
        )
    ]
    return cells


def preset(args: SweepConfig, cell: Cell) -> Path | None:
    """The training preset ``configs/<domain>-<model>.yaml`` beside the grid file, if it exists and
    presets are on."""
    path = resolve_config(args.grid).parent / f"{cell.domain}-{cell.model}.yaml"
    return path if args.presets and path.is_file() else None


def data_root(args: SweepConfig, cell: Cell) -> Path:
    """The dataset a cell trains on: --data, else its preset's, else the trainer's default."""
    if args.data is not None:
        return args.data
    path = preset(args, cell)
    if path is not None:
        values = yaml.safe_load(path.read_text()) or {}
        if values.get("data"):
            return Path(values["data"])
    return DEFAULT_DATA
