"""What ``grader.check`` returns: the result, shown under the notebook cell.

``CheckReport`` renders as compact HTML in any Jupyter front end (``_repr_html_``: the score,
each failed check with its message, counterexample and hint, the snippet that reproduces it and
the passed checks folded in ``<details>``; one ``<div>`` with its own scoped style, no script,
everything escaped by jinja2) and as the terminal report elsewhere (``__repr__``,
``_repr_pretty_``). Snippets are rewritten to run in a new cell of the notebook: the student's
definitions come from the kernel instead of ``exercises/``, and the snippet runs inside a
function so that its imports do not replace the notebook's own classes.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any

from grader.result.schema import GradeResult, from_dict

# ``from exercises.<module> import <names>`` (``A as B`` too)
EXERCISE_IMPORT = re.compile(r"^from exercises\.\w+ import ([\w ,]+)$", re.M)
TEMPLATE = "notebook_check.html.j2"
MESSAGE_LINES = 6  # of a check's message shown before the rest is folded
CLONE_SNIPPET = "(paste into Python in your clone):"  # grader.result.report_text's snippet heading


def notebook_snippet(snippet: str) -> str:
    """``snippet`` (written for a clone's ``exercises/``) as code for a new notebook cell: the
    exercise's names are taken from the notebook, and the rest runs in a function."""
    bound: list[str] = []

    def take(match: re.Match) -> str:
        for part in match.group(1).split(","):
            name, _, alias = (p.strip() for p in part.partition(" as "))
            bound.append(f"{alias or name}={name}")
        return ""

    body = EXERCISE_IMPORT.sub(take, snippet)
    if not bound:
        return snippet
    body = re.sub(r"\n{3,}", "\n\n", body).strip("\n")
    indented = "\n".join(("    " + line).rstrip() for line in body.splitlines())
    return f"def reproduce({', '.join(bound)}):\n{indented}\n\n\nreproduce()\n"


def for_notebook(result: GradeResult, notes: list[str]) -> GradeResult:
    """``result`` as a notebook shows it: snippets for a new cell, and an exercise missing
    from the kernel's cells explained by the note that says which names were not found."""
    exercises = []
    for ex in result.exercises:
        note = next((n for n in notes if n.startswith(f"{ex.id}: no definition")), None)
        checks = [
            dataclasses.replace(
                c,
                message=note.partition(": ")[2] if ex.status == "missing" and note else c.message,
                reproduce=notebook_snippet(c.reproduce) if c.reproduce else c.reproduce,
            )
            for c in ex.checks
        ]
        exercises.append(dataclasses.replace(ex, checks=checks))
    return dataclasses.replace(result, exercises=exercises)


def _folded(text: str) -> tuple[str, str]:
    """A message's first lines, and the rest (to fold away)."""
    lines = text.splitlines()
    return "\n".join(lines[:MESSAGE_LINES]), "\n".join(lines[MESSAGE_LINES:])


@functools.cache
def _environment():
    """The reports' template environment with this view's two filters: an overlay, so that the
    shared environment itself stays as it is."""
    from grader.result import report_html
    from grader.result.common import example_text

    env = report_html.environment().overlay()
    env.filters = {**env.filters, "example": example_text, "folded": _folded}
    return env


class CheckReport:
    """The result of ``grader.check``/``check_all``: ``score``, ``max_score``, ``passed``,
    ``result`` (the schema-1 dict of DESIGN §6) and ``notes`` (which cells were graded)."""

    def __init__(self, result: dict[str, Any], notes: list[str]):
        self.result = result
        self.notes = notes
        self._shown = for_notebook(from_dict(result), notes)
        self.score: float = self._shown.score
        self.max_score: float = self._shown.max_score
        self.passed: bool = self._shown.all_passed

    def _notes_for(self) -> list[str]:
        ids = {ex.id for ex in self._shown.exercises}
        return [n for n in self.notes if n.split(":", 1)[0] in ids and "no definition" not in n]

    def _repr_html_(self) -> str:
        from grader.result import report_html

        page = report_html.context(self._shown)
        template = _environment().get_template(TEMPLATE)
        single = len(page["exercises"]) == 1
        return template.render(**page, notes=self._notes_for(), single=single)

    def __repr__(self) -> str:
        from grader.result import report_text

        lines = report_text.render(self._shown).rstrip("\n").splitlines()
        lines = [  # what a terminal's report says of grade and a clone, said for a notebook
            line.replace(CLONE_SNIPPET, "(paste into a new cell):")
            for line in lines
            if not line.startswith("More: grade -v")
        ]
        return "\n".join([*lines, *(f"note: {n}" for n in self._notes_for())])

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(repr(self))
