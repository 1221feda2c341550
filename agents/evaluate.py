"""``python -m agents.evaluate``: forwards to `agents.apps.evaluate`, where the command is defined."""

from __future__ import annotations

import sys

from agents.apps.evaluate import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
