"""Python source that hides top-level modules from the import system, as if they were not installed:
what the tests of a missing optional dependency run before the code under test (a
``sitecustomize`` in tests/test_cli.py, a ``python -c`` prelude in tests/test_extras.py)."""

from __future__ import annotations


def hide_modules(names: str) -> str:
    """Source that imports ``os`` and ``sys`` and makes every import of a module below the
    comma-separated names that the expression `names` evaluates to (``os.environ[...]``,
    ``sys.argv[1]``) raise ModuleNotFoundError."""
    return f"""
import importlib.abc, os, sys
HIDDEN = set({names}.split(","))
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Hide())
"""
