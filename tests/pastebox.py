"""Reproduce snippets run as ``python -c SNIPPET`` would run them, from a warm interpreter
(``grader.authoring.pastes``, which ``grade check-pack`` pastes with too): the grader, the
packs and ``reference`` found from the repository (``PYTHONPATH``), as in a student's
environment where the package is installed.

``paste`` (``tests/support.py``) is the one way tests run a snippet.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from grader.authoring import pastes

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

BOX = pastes.PasteBox(ENV)


def fresh(snippet: str, cwd: Path) -> subprocess.CompletedProcess:
    """The same paste into a really fresh interpreter (``tests/test_snippets.py`` holds the
    two to the same output)."""
    return pastes.fresh(snippet, cwd, ENV)
