"""``python -m agents.report``: forwards to `agents.apps.report`, where the command is defined."""

from __future__ import annotations

import sys

from agents.apps.report import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
