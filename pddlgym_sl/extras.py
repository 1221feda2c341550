"""Optional dependency groups: a clear `MissingExtraError` naming the extra to install.

``pip install pddlgym-sl`` is the core (environments, PDDL, heuristics, search, labels); the
learning code needs ``[learn]`` (torch, torch-geometric, ...), the RL example ``[rl]``
(stable-baselines3, sb3-contrib) and ``--backend ray`` ``[cluster]`` (ray). Without them an
ImportError deep inside torch-using code would name a module, not what to install.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pddlgym_sl.errors import MissingExtraError

__all__ = ["EXTRAS", "install_hint", "require_extra"]

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


def install_hint(extra: str) -> str:
    """The command that installs `extra` the way this copy was installed: from a source checkout
    (a clone, ``pip install -e .``; the package is not on an index there) ``pip install -e
    "<checkout>[extra]"``, else ``pip install 'pddlgym-sl[extra]'``."""
    checkout = Path(__file__).resolve().parents[1]
    if (checkout / "pyproject.toml").is_file() and (checkout / "agents").is_dir():
        where = "." if checkout == Path.cwd().resolve() else str(checkout)
        return f'pip install -e "{where}[{extra}]"'
    return f"pip install 'pddlgym-sl[{extra}]'"


def require_extra(extra: str, what: str) -> None:
    """`MissingExtraError` unless every module of `extra` can be imported (nothing is imported)."""
    missing = [m for m in EXTRAS[extra] if not _installed(m)]
    if missing:
        raise MissingExtraError(
            f"{what} needs the [{extra}] extra, and {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {install_hint(extra)}"
        )
