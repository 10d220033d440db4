"""Where the jinja2 templates of every HTML output are: ``grader/templates`` in an installed
wheel (``setup.py`` copies them there), else the repository's top-level ``templates/`` (a
clone, an editable install)."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # grader/


def templates_dir() -> Path:
    inside = _PACKAGE / "templates"
    return inside if inside.is_dir() else _PACKAGE.parent / "templates"
