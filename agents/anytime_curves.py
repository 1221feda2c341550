"""``python -m agents.anytime_curves``: forwards to `agents.apps.anytime_curves`, where the command is defined."""

from __future__ import annotations

import sys

from agents.apps.anytime_curves import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
