"""The ``python -m`` commands: what the CLI tests (tests/test_cli.py, tests/test_cli_help.py,
tests/test_docs.py) check every one of, and what benchmarks/cli_help.py times. Standard library
only, so that the benchmark can import it without the test dependencies."""

from __future__ import annotations

COMMANDS = (
    "pddlgym_sl.plan",
    "pddlgym_sl.heuristics",
    "pddlgym_sl.data.generate",
    "pddlgym_sl.data.upper",
    "pddlgym_sl.data.sampling",
    "pddlgym_sl.data.summary",
    "domains.generate",
    "agents.supervised",
    "agents.evaluate",
    "agents.report",
    "agents.sweep",
    "agents.rl",
    "agents.rl_value",
    "agents.rl_value_curves",
    "agents.anytime_curves",
    "agents.apps.presets",
)
"""Every command, as typed after ``python -m``."""
