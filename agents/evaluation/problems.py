"""Which problems an evaluation searches: a split of the run's dataset or of the paper's Table 3,
or the task files of a directory (``--tasks``), evenly thinned to ``--problems``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import domains
from agents.evaluation.config import EvaluationConfig
from pddlgym_sl.data.generate import given_domain_file
from pddlgym_sl.envs.problems import problem_dir_files, problem_files, resolve_problems, spread
from pddlgym_sl.errors import ConfigError

__all__ = ["ProblemSelection", "select_problems"]


class ProblemSelection(NamedTuple):
    """The problems of an evaluation: their domain's name and file, the split's name (a ``--tasks``
    directory's own name) and the problem files in order."""

    domain: str
    split: str
    domain_file: Path
    files: list[Path]


def select_problems(config: EvaluationConfig, record: Any = None) -> ProblemSelection:
    """The problems `config` names; `record` is the run's training config (None for a symbolic
    heuristic), whose domain and dataset are the defaults."""
    domain = config.domain or (record.domain if record is not None else None)
    data = config.data or (record.data if record is not None else None)
    if config.tasks is not None:
        domain_file = given_domain_file(config.tasks, config.domain_file, None)
        files = spread(
            list(resolve_problems(problems=config.tasks, domain_file=domain_file).files), config.problems
        )
        return ProblemSelection(
            domain or domain_file.resolve().parent.name, config.tasks.resolve().name, domain_file, files
        )
    if domain is None:
        raise ConfigError("--domain is needed with --heuristic")
    _check_known_split(domain, config.split, data)
    files = spread(problem_files(domain, config.split, data), config.problems)
    domain_file = (data / domain / config.split / "domain.pddl") if data is not None else None
    if domain_file is None or not domain_file.is_file():
        domain_file = domains.domain_file(domain)
    return ProblemSelection(domain, config.split, domain_file, files)


def _check_known_split(domain: str, split: str, data: Path | None) -> None:
    """`ConfigError` saying what to pass when neither the dataset nor the bundled domains have the
    split's problems (a run of one's own domain, evaluated on the default ``--split plan``)."""
    if domain in domains.DOMAIN_NAMES or (data is not None and problem_dir_files(data / domain / split)):
        return
    root = data / domain if data is not None else None
    have = sorted(p.name for p in root.iterdir() if problem_dir_files(p)) if root and root.is_dir() else []
    splits = f" (its dataset has: --split {', '.join(have)})" if have else ""
    where = f"{root / split / 'problems'} holds no problems" if root else "no dataset (--data) was given"
    raise ConfigError(
        f"domain {domain!r} is not a built-in one ({', '.join(domains.DOMAIN_NAMES)}) and {where}: "
        f"pass --tasks DIR (a directory of its task files) or --split of its dataset{splits}"
    )
