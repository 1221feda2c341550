"""``python -m agents.rl``: forwards to `agents.apps.rl`, where the command is defined."""

from __future__ import annotations

import sys

from agents.apps.rl import COMMAND, Args, cli, main

__all__ = ["COMMAND", "Args", "cli", "main"]

if __name__ == "__main__":
    sys.exit(cli())
