"""``python -m agents.rl_value_curves``: forwards to `agents.apps.rl_value_curves` (the command)."""

from __future__ import annotations

import sys

from agents.apps.rl_value_curves import COMMAND, main

__all__ = ["COMMAND", "main"]

if __name__ == "__main__":
    sys.exit(main())
