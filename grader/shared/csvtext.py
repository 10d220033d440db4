"""Scores and text as a spreadsheet reads them, for the CSV files of a batch (gradebook.csv,
similarity.csv) and its progress lines: a score with at most two decimals, and text that a
spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, a tab or a CR)
quoted with ``'``."""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def number(x: float) -> str:
    """A score as a spreadsheet reads it: at most two decimals, no trailing zeros."""
    text = f"{round(float(x), 2):.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def cell(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_STARTS) else text
