"""``python -m agents.report``: forwards to `agents.apps.report`, where the command is defined."""

from __future__ import annotations

import sys

from agents.apps.report import COMMAND, main

__all__ = ["COMMAND", "main"]

if __name__ == "__main__":
    sys.exit(main())
