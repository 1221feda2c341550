"""``python -m agents.supervised``: forwards to `agents.apps.supervised`, where the command is defined."""

from __future__ import annotations

import sys

from agents.apps.supervised import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
