"""Helpers shared by the problem generators: seeded RNGs, file stems and PDDL rendering.

Every generator is a pure function of its parameters, its integer seed and an optional split tag.
Randomness comes from one `random.Random` seeded with a *string* that names the domain, the split,
every parameter and the seed (string seeds are hashed with SHA-512 by `random`, so the stream is the
same on every Python run whatever ``PYTHONHASHSEED`` is; `hash()` is never used). Putting the split
into the string makes ``train`` seed 3 and ``test`` seed 3 with equal parameters different problems.

When a draw is trivial (its goal already holds in the initial state) the generator redraws with an
attempt counter appended to the seed string, so the redraw is as deterministic as the first draw.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

MAX_ATTEMPTS = 1000
"""Redraws allowed before a generator gives up on finding a non-trivial problem."""

T = TypeVar("T")


def format_value(value: int | float) -> str:
    """Render a parameter value for seed strings and file names (``5``, ``0.5``, ``1.0``)."""
    return repr(float(value)) if isinstance(value, float) else str(int(value))


def seed_string(
    domain: str, split: str | None, params: Mapping[str, int | float], seed: int, attempt: int
) -> str:
    """The string that seeds one draw; ``split=None`` is the split-independent ad-hoc stream."""
    parts = [domain, "adhoc" if split is None else f"split={split}"]
    parts += [f"{name}={format_value(value)}" for name, value in params.items()]
    parts += [f"seed={int(seed)}", f"attempt={attempt}"]
    return "|".join(parts)


def draw_nontrivial(
    domain: str,
    split: str | None,
    params: Mapping[str, int | float],
    seed: int,
    draw: Callable[[random.Random], T],
    is_trivial: Callable[[T], bool],
) -> T:
    """Call ``draw`` with fresh deterministic RNGs (attempt 0, 1, ...) until a draw is not trivial."""
    for attempt in range(MAX_ATTEMPTS):
        result = draw(random.Random(seed_string(domain, split, params, seed, attempt)))
        if not is_trivial(result):
            return result
    raise ValueError(f"{domain} {dict(params)}: no non-trivial problem in {MAX_ATTEMPTS} draws")


def problem_stem(
    domain: str, abbreviations: Mapping[str, str], params: Mapping[str, int | float], seed: int
) -> str:
    """File stem naming the domain, every parameter and the seed, e.g. ``ferry-l10-c15-s3``."""
    fields = [f"{abbreviations[name]}{format_value(value)}" for name, value in params.items()]
    return "-".join([domain, *fields, f"s{int(seed)}"])


def render_problem(
    *,
    key: str,
    domain: str,
    abbreviations: Mapping[str, str],
    params: Mapping[str, int | float],
    seed: int,
    split: str | None,
    objects: Sequence[str],
    init: Iterable[str],
    goal: Iterable[str],
    object_type: str | None = None,
) -> str:
    """PDDL problem text: a provenance comment, one object line, one fact per line, goal conjunction.

    The problem is named after the file stem, tagged with the split when there is one
    (``ferry-l5-c5-s1-train``); ``key`` is the registry name, ``domain`` the ``:domain`` name.
    """
    stem = problem_stem(key, abbreviations, params, seed)
    settings = ", ".join(f"{name}={format_value(value)}" for name, value in params.items())
    typed = " - " + object_type if object_type else ""
    lines = [
        f"; domains.{key}.generator: {settings}, seed={int(seed)}, split={split or 'none'}",
        f"(define (problem {stem if split is None else f'{stem}-{split}'})",
        f"  (:domain {domain})",
        f"  (:objects {' '.join(objects)}{typed})",
        "  (:init",
        *(f"    {fact}" for fact in init),
        "  )",
        "  (:goal (and",
        *(f"    {fact}" for fact in goal),
        "  ))",
        ")",
    ]
    return "\n".join(lines) + "\n"


def check_int(name: str, value: int, minimum: int) -> int:
    """Validate an integer parameter (bools and non-integers are rejected)."""
    if isinstance(value, bool) or int(value) != value or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)
