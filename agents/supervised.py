"""``python -m agents.supervised``: forwards to `agents.apps.supervised`, where the command is defined."""

from __future__ import annotations

import sys

from agents.apps.supervised import COMMAND, main

__all__ = ["COMMAND", "main"]

if __name__ == "__main__":
    sys.exit(main())
