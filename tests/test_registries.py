"""Every list of domains, models and heuristic names derives from one registry: the specs are
consistent, and the derived lists (env ids, plan defaults, presets, CLI choices, report order,
configs) say what the specs say."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import domains
from agents.apps.presets import main as presets_main
from agents.heads import BOUNDS, RESIDUALS
from agents.models import MODELS
from agents.reporting.collect import display_order, model_label
from agents.sweeping.grid import grid_axes
from pddlgym_sl.data.labels import BOUND_NAMES, INFORMATIVE_NAMES
from pddlgym_sl.data.presets import REDUCED_TEST_GRIDS
from pddlgym_sl.envs import ENV_IDS
from pddlgym_sl.heuristics import HEURISTICS
from pddlgym_sl.plan import DEFAULT_PARAMS

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def test_registry_keys_are_the_specs_names():
    assert all(name == spec.name for name, spec in domains.DOMAINS.items())
    assert all(name == spec.name for name, spec in MODELS.items())
    assert domains.DOMAIN_NAMES == tuple(domains.DOMAINS) == ("blocksworld", "ferry", "gripper", "visitall")


def test_domain_lists_derive_from_the_specs():
    assert {i: name for name, spec in domains.DOMAINS.items() for i in spec.env_ids} == ENV_IDS
    assert {name: dict(spec.plan_defaults) for name, spec in domains.DOMAINS.items()} == DEFAULT_PARAMS
    assert set(REDUCED_TEST_GRIDS) == {n for n, s in domains.DOMAINS.items() if s.reduced_test is not None}
    assert display_order("domain") == domains.DOMAIN_NAMES
    for spec in domains.DOMAINS.values():
        assert spec.domain_file.is_file()
        assert set(spec.plan_defaults) == set(spec.parameters)
        assert set(spec.splits) == {"train", "val", "test"}


def test_model_lists_derive_from_the_specs():
    assert display_order("model") == tuple(MODELS) == grid_axes()["models"]
    assert [model_label(m) for m in MODELS] == [
        "NLM",
        "STRIPS-HGN",
        "linear regression (LR)",
        "MLP on facts (NFD)",
        "WL",
    ]


def test_heuristic_names_derive_from_admissibility():
    assert BOUND_NAMES == ("lmcut", "hmax", "blind") == BOUNDS
    assert INFORMATIVE_NAMES == ("hff", "hadd", "goal_count")
    assert {n for n, h in HEURISTICS.items() if h.admissible} == set(BOUND_NAMES)
    assert RESIDUALS == ("none", "hff", "lmcut")


def test_config_presets_are_the_rendered_specs():
    """``configs/<domain>-<model>.yaml`` is what `agents.apps.presets` renders, one per registered
    pair, and the grid names registered domains and models only."""
    assert presets_main(["--check", "--out", str(CONFIGS)]) == 0
    presets = {p.name for p in CONFIGS.glob("*-*.yaml")}
    assert presets == {f"{d}-{m}.yaml" for d in domains.DOMAINS for m in MODELS}
    grid = yaml.safe_load((CONFIGS / "grid.yaml").read_text())
    assert set(grid["domains"]) <= set(domains.DOMAINS) and set(grid["models"]) <= set(MODELS)


def test_cli_choices_are_the_registries_names():
    """The command lines' ``Literal`` choices are the light registries' names (`agents.registries`):
    no second list to keep in step, and every entry resolves to what its name says."""
    from typing import get_args, get_type_hints

    from agents import heads, registries
    from agents.confidence import THRESHOLD_KINDS
    from agents.evaluation import PRUNE_CHOICES
    from agents.losses import LOSSES
    from agents.ood import NOISES
    from agents.training import SupervisedConfig

    assert MODELS is registries.MODELS and LOSSES is registries.LOSSES and NOISES is registries.NOISES
    hints = get_type_hints(SupervisedConfig)
    assert get_args(hints["model"]) == tuple(MODELS) == ("nlm", "hgn", "linear", "mlp", "wl")
    assert get_args(hints["loss"]) == tuple(LOSSES) and get_args(hints["ood"]) == ("none", *NOISES)
    assert all(LOSSES[name].name == name for name in LOSSES)
    assert all(callable(NOISES[name]) for name in NOISES)
    assert registries.UPPERS == heads.UPPERS == get_args(hints["upper"])
    assert (registries.DISTS, registries.SIGMAS, registries.BOUNDS) == (
        heads.DISTS,
        heads.SIGMAS,
        heads.BOUNDS,
    )
    assert ("none", *THRESHOLD_KINDS) == PRUNE_CHOICES


def test_a_model_is_one_module_and_one_registry_line(monkeypatch):
    """A model registered by its module path is listed without importing it, imported on first
    use, and an unknown name is an error naming the registered ones."""
    import sys

    from agents.errors import AgentError
    from agents.models import model_spec

    monkeypatch.setitem(MODELS, "toy", "tests.toy_model:SPEC")
    monkeypatch.delitem(sys.modules, "tests.toy_model", raising=False)
    assert "toy" in MODELS.names and "tests.toy_model" not in sys.modules
    assert model_spec("toy").name == "toy" and "tests.toy_model" in sys.modules
    with pytest.raises(AgentError, match="unknown model 'nope'; choose one of nlm, hgn"):
        model_spec("nope")
