"""``python -m agents.rl_value_curves``: forwards to `agents.apps.rl_value_curves`, where the command is defined."""

from __future__ import annotations

import sys

from agents.apps.rl_value_curves import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
