"""Finding training presets and grid files by name, from a checkout and from an installed wheel.

The presets live in the repository's ``configs/`` (rendered by ``python -m agents.apps.presets``);
``agents/configs`` is a link to it, so the wheel carries them as package data of `agents` and an
installed copy finds ``--config ferry-nlm`` (or ``configs/ferry-nlm.yaml``) without a checkout.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from agents.errors import AgentError

__all__ = ["bundled_configs", "resolve_config"]


def _bundled_dir() -> Path:
    return Path(str(files("agents") / "configs"))


def bundled_configs() -> list[str]:
    """Names (without ``.yaml``) of the presets and grids that ship with the package."""
    return sorted(p.stem for p in _bundled_dir().glob("*.yaml"))


def resolve_config(value: str | Path) -> Path:
    """The YAML file a ``--config`` / ``--grid`` value means: the path itself when it is a file,
    else the bundled file of that name (``ferry-nlm``, ``ferry-nlm.yaml`` or
    ``configs/ferry-nlm.yaml``); `AgentError` listing the bundled names otherwise."""
    path = Path(value)
    if path.is_file():
        return path
    if path.parent in (Path("."), Path("configs")):
        bundled = _bundled_dir() / (path.name if path.suffix == ".yaml" else f"{path.name}.yaml")
        if bundled.is_file():
            return bundled
    names = ", ".join(bundled_configs())
    raise AgentError(f"no config {str(value)!r}: not a file, and not a bundled config ({names})")
