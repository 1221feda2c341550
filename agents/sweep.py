"""``python -m agents.sweep``: forwards to `agents.apps.sweep`, where the command is defined."""

from __future__ import annotations

import sys

from agents.apps.sweep import COMMAND, main

__all__ = ["COMMAND", "main"]

if __name__ == "__main__":
    sys.exit(main())
