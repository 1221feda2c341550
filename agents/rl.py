"""``python -m agents.rl``: forwards to `agents.apps.rl`, where the command is defined."""

from __future__ import annotations

import tyro

from agents.apps.rl import Args, main

__all__ = ["Args", "main"]

if __name__ == "__main__":
    main(tyro.cli(Args))
