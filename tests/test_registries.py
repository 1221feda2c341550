"""Every list of domains, models and heuristic names derives from one registry: the specs are
consistent, and the derived lists (env ids, plan defaults, presets, CLI choices, report order,
configs) say what the specs say."""

from __future__ import annotations

from pathlib import Path

import yaml

import domains
from agents.apps.presets import main as presets_main
from agents.apps.report.collect import display_order, model_label
from agents.apps.sweep.grid import grid_axes
from agents.heads import BOUNDS, RESIDUALS
from agents.models import MODELS
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


def test_light_choice_lists_equal_the_registries():
    """`agents.choices` repeats the torch-using registries' names for fast ``--help``; they must agree."""
    from agents import choices, heads
    from agents.apps.evaluate import PRUNE_CHOICES
    from agents.confidence import THRESHOLD_KINDS
    from agents.losses import LOSSES
    from agents.ood import NOISES

    assert tuple(MODELS) == choices.MODEL_NAMES
    assert tuple(LOSSES) == choices.LOSS_NAMES
    assert tuple(NOISES) == choices.NOISE_NAMES
    assert choices.UPPERS == heads.UPPERS
    assert (choices.DISTS, choices.SIGMAS, choices.BOUNDS) == (heads.DISTS, heads.SIGMAS, heads.BOUNDS)
    assert ("none", *THRESHOLD_KINDS) == PRUNE_CHOICES
