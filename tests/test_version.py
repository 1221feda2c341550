"""One version source: the package metadata (pyproject.toml) is what the code and manifests report,
and the license is the one the imported translator requires."""

from __future__ import annotations

import re
from pathlib import Path

import pddlgym_sl

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_pyprojects():
    declared = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert declared and pddlgym_sl.__version__ == declared.group(1)


def test_the_license_is_gpl_3_or_later():
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^license = "GPL-3.0-or-later"', text, re.M)
    assert "GNU GENERAL PUBLIC LICENSE" in (ROOT / "LICENSE").read_text()[:200]
    assert "Version 3" in (ROOT / "LICENSE").read_text()[:200]
