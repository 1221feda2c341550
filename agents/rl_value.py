"""``python -m agents.rl_value``: forwards to `agents.apps.rl_value`, where the command is defined."""

from __future__ import annotations

import sys

from agents.apps.rl_value import COMMAND, Args, main

__all__ = ["COMMAND", "Args", "main"]

if __name__ == "__main__":
    sys.exit(main())
