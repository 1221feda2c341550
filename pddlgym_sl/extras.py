"""Optional dependency groups: a clear `MissingExtraError` naming the extra to install.

``pip install pddlgym-sl`` is the core (environments, PDDL, heuristics, search, labels); the
learning code needs ``[learn]`` (torch, torch-geometric, ...), the RL example ``[rl]``
(stable-baselines3, sb3-contrib) and ``--backend ray`` ``[cluster]`` (ray). Without them an
ImportError deep inside torch-using code would name a module, not what to install.
"""

from __future__ import annotations

import importlib.util

from pddlgym_sl.errors import MissingExtraError

__all__ = ["EXTRAS", "require_extra"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "learn": (
        "torch",
        "torch_geometric",
        "safetensors",
        "tensorboard",
        "yaml",
        "matplotlib",
        "wlplan",
        "scipy",
    ),
    "rl": ("stable_baselines3", "sb3_contrib"),
    "cluster": ("ray",),
}
"""Extra name -> the top-level modules it provides (as in pyproject.toml's optional dependencies)."""


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder refused it, or a broken half-import
        return False


def require_extra(extra: str, what: str) -> None:
    """`MissingExtraError` unless every module of `extra` can be imported (nothing is imported)."""
    missing = [m for m in EXTRAS[extra] if not _installed(m)]
    if missing:
        raise MissingExtraError(
            f"{what} needs the [{extra}] extra, and {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed: pip install 'pddlgym-sl[{extra}]'"
        )
