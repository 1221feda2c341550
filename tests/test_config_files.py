"""Presets and grids are found by name from any directory (and from a wheel install, where
``agents/configs`` is package data): ``--config ferry-nlm``."""

from __future__ import annotations

import pytest
import yaml

from agents.apps.supervised import load_config_defaults
from agents.config_files import bundled_configs, resolve_config
from agents.errors import AgentError
from agents.sweeping.config import SweepConfig as SweepArgs
from agents.sweeping.grid import grid_cells
from tests.problems import ROOT


def test_bundled_configs_are_the_repositorys() -> None:
    names = bundled_configs()
    assert {p.stem for p in (ROOT / "configs").glob("*.yaml")} == set(names)
    for name in names:
        assert resolve_config(name).read_text() == (ROOT / "configs" / f"{name}.yaml").read_text()


@pytest.mark.parametrize("value", ["ferry-nlm", "ferry-nlm.yaml", "configs/ferry-nlm.yaml"])
def test_config_by_name_from_another_directory(value, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = load_config_defaults(["--config", value])
    preset = yaml.safe_load((ROOT / "configs" / "ferry-nlm.yaml").read_text())
    assert args.steps == preset["steps"] and args.batch_size == preset["batch_size"]


def test_a_file_path_wins_over_a_bundled_name(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ferry-nlm").write_text("steps: 7\n")
    assert load_config_defaults(["--config", "ferry-nlm"]).steps == 7


def test_unknown_config_lists_the_bundled_ones(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AgentError, match=r"not a bundled config .*ferry-nlm"):
        resolve_config("ferry-nml")


def test_sweep_default_grid_from_another_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    cells = grid_cells(SweepArgs(domains=["ferry"], models=["nlm"], seeds=[0]))
    assert cells and {c.domain for c in cells} == {"ferry"}
