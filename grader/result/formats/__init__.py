"""Machine-readable renderings of a result for classroom systems, one module per format:
``gradescope`` (results.json), ``github`` (workflow annotations, step summary, the Classroom
reporter's output) and ``junit`` (JUnit XML). ``emit`` picks the module by name."""

from __future__ import annotations

import importlib
from typing import Any, TextIO

from grader.result.schema import GradeResult

FORMATS = ("gradescope", "github", "junit")


def emit(fmt: str, result: GradeResult, stream: TextIO, **options: Any) -> None:
    """Write ``result`` in format ``fmt`` to ``stream`` (options go to that format's emit)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    importlib.import_module(f"grader.result.formats.{fmt}").emit(result, stream, **options)
