"""`DomainSpec`: everything the project knows about one planning domain, in one record.

Every registry of domain facts derives from the specs of `domains.registry.DOMAINS`: the Table 3
splits (`domains.splits`), the Gymnasium ids (`pddlgym_sl.envs.ENV_IDS`), the problem that
``python -m pddlgym_sl.plan <domain>`` generates (`pddlgym_sl.plan.DEFAULT_PARAMS`), the
``test-reduced`` preset (`pddlgym_sl.data.presets`), the report's display order
(`agents.apps.report`) and the training presets (``configs/<domain>-<model>.yaml``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["DomainSpec", "SplitGrid", "bundled", "grid"]

Params = Mapping[str, int | float]


@dataclass(frozen=True)
class SplitGrid:
    """A problem set: every parameter setting of ``params`` with every seed of ``seeds``."""

    seeds: range
    params: Sequence[Params]


def grid(**axes: Sequence[int | float]) -> list[dict[str, int | float]]:
    """Every combination of the axes' values, e.g. ``grid(locations=(2, 3), cars=(2, 3))``."""
    names = list(axes)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*axes.values())]


@dataclass(frozen=True)
class DomainSpec:
    """One domain of the registry.

    Attributes:
        name: registry key: the ``--domain`` value, the generator key in problem file names.
        domain_file: the PDDL domain file.
        generate: the problem generator, a pure ``generate(**params, seed, split=None) -> str``.
        parameters: the generator's parameters in order, each with its one-letter tag in problem
            file names (``{"locations": "l", "cars": "c"}`` gives ``ferry-l10-c15-s3.pddl``).
        splits: the ``train``, ``val`` and ``test`` problem sets (Table 3 of the paper);
            ``plan`` is a fixed sample of ``test`` (`domains.splits`).
        reduced_test: the ``test-reduced`` preset (`pddlgym_sl.data.presets`): problems larger
            than the training ones that A* + LM-cut still solves in minutes; None: no such preset.
        plan_defaults: the generator parameters of ``python -m pddlgym_sl.plan <name>`` without
            ``--param``.
        env_versions: the versions ``N`` of its Gymnasium ids ``pddl/<name>-v<N>`` (a version bump
            adds an id and never removes one; see `PDDLEnv`'s Version History).

    The registry's order is the display order (tables, plots, ``--domain all``).
    """

    name: str
    domain_file: Path
    generate: Callable[..., str]
    parameters: Mapping[str, str]
    splits: Mapping[str, SplitGrid]
    plan_defaults: Params
    reduced_test: SplitGrid | None = None
    env_versions: tuple[int, ...] = (0, 1)

    @property
    def env_ids(self) -> tuple[str, ...]:
        """The Gymnasium ids, e.g. ``("pddl/ferry-v0", "pddl/ferry-v1")``."""
        return tuple(f"pddl/{self.name}-v{v}" for v in self.env_versions)


def bundled(name: str, generator: ModuleType, splits: Mapping[str, SplitGrid], **facts: Any) -> DomainSpec:
    """The spec of a domain bundled in this package: ``domains/<name>/`` holds ``domain.pddl`` beside
    its ``generator`` module, whose ``generate`` and ``ABBREVIATIONS`` (the parameters) it takes;
    ``facts`` are the other fields of `DomainSpec`."""
    domain_file = Path(generator.__file__).resolve().parent / "domain.pddl"
    parameters = generator.ABBREVIATIONS
    return DomainSpec(name, domain_file, generator.generate, parameters, splits, **facts)
