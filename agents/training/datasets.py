"""The labelled dataset a supervised configuration names: created when it is the default small one,
else what to run to create it."""

from __future__ import annotations

import difflib
from pathlib import Path

import domains
from agents.training.configs import SupervisedConfig
from pddlgym_sl.errors import ConfigError

__all__ = ["DEFAULT_DATA", "ensure_dataset", "missing_dataset_message"]

DEFAULT_DATA = Path("data/small")
"""`SupervisedConfig.data`'s default: the small ferry dataset, created on first use."""


def _labelled(split_dir: Path) -> bool:
    return any((split_dir / "labels").glob("*.npz"))


def ensure_dataset(config: SupervisedConfig, progress: bool = True) -> None:
    """Create the small default dataset (``data/small``, ferry) when `config` asks for it and it is
    absent (with upper bounds when the head trains with them); `ConfigError` saying what to run for
    any other missing dataset."""
    root = config.data / config.domain
    if all(_labelled(root / s) for s in ("train", "val", config.test_split)):
        return
    if config.data == DEFAULT_DATA and config.domain == "ferry":
        from pddlgym_sl.data.generate import Args as GenerateArgs
        from pddlgym_sl.data.generate import run as generate

        print("creating the small ferry dataset in data/small (once; about a minute)")
        generate(
            GenerateArgs(preset="small", out=config.data, quiet=not progress, upper=config.upper == "plan")
        )
        return
    raise ConfigError(missing_dataset_message(config))


def missing_dataset_message(config: SupervisedConfig) -> str:
    """What to run when the dataset is absent: the generate commands of a bundled domain (its
    train and val splits, and the minutes-scale test-reduced preset rather than the paper's test
    split of 30 min per problem), or, for another name, the closest bundled domain and the
    command for one's own domain and problem files."""
    root = config.data / config.domain
    missing = [s for s in ("train", "val", config.test_split) if not _labelled(root / s)]
    where = f"no labelled {'/'.join(missing)} split in {root}"
    gen = "python -m pddlgym_sl.data.generate"
    if config.domain in domains.DOMAIN_NAMES:
        steps = [
            f"{gen} --domain {config.domain} --split {s} --out {config.data}"
            for s in missing
            if s in domains.SPLIT_NAMES
        ]
        if config.test_split in missing and config.test_split not in domains.SPLIT_NAMES:
            steps.append(f"{gen} --preset {config.test_split} --domain {config.domain} --out {config.data}")
        hint = (
            " (the paper's test split takes up to 30 min per problem: --test-split test-reduced, "
            f"built by {gen} --preset test-reduced --domain {config.domain} --out {config.data}, "
            "takes minutes)"
            if config.test_split == "test" and "test" in missing
            else ""
        )
        return f"{where}; create it with: {' && '.join(steps)}{hint}"
    close = difflib.get_close_matches(config.domain, domains.DOMAIN_NAMES, n=1)
    guess = f"did you mean --domain {close[0]}? " if close else ""
    return (
        f"{where}; {guess}{config.domain!r} is not a bundled domain ({', '.join(domains.DOMAIN_NAMES)}); "
        f"for your own domain: {gen} --domain-file DOMAIN.pddl --problems DIR --split train "
        f"--out {config.data} (then val and {config.test_split} likewise)"
    )
