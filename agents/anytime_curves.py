"""``python -m agents.anytime_curves``: forwards to `agents.apps.anytime_curves` (the command)."""

from __future__ import annotations

import sys

from agents.apps.anytime_curves import COMMAND, main

__all__ = ["COMMAND", "main"]

if __name__ == "__main__":
    sys.exit(main())
