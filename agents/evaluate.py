"""``python -m agents.evaluate``: forwards to `agents.apps.evaluate`, where the command is defined."""

from __future__ import annotations

import sys

from agents.apps.evaluate import COMMAND, main

__all__ = ["COMMAND", "main"]

if __name__ == "__main__":
    sys.exit(main())
