"""Accessibility of the HTML that students and instructors read: axe-core (tests/pagecheck.py)
in headless Chromium finds no violation, best practices included, and no contrast it cannot
decide, on the HTML report (light and dark), the class dashboard and a notebook check's HTML
(in a minimal page, as a notebook holds it; light, dark, and JupyterLab's dark theme).

Before (issue 34): the report had no main landmark and 94 nodes outside any landmark, the
dashboard the same (12 nodes) and 75 nodes of SVG text whose contrast axe could not decide, the
notebook view six badges under 4.5:1 and its icons undecided, a snippet that scrolled but could
not take the keyboard's focus.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pagecheck import axe, counts, explain, needs_browser
from report_cases import all_results, edge_result
from test_batch_insight import FAILS, class_answers, result_for

from grader.analysis import answers, insight
from grader.batch.ledger import Ledger
from grader.classview.dashboard import write_dashboard
from grader.result.nbview import CheckReport
from grader.result.report_html import render_html
from grader.result.schema import NOT_DONE, TAMPERED, CheckResult, ExerciseResult, GradeResult

pytestmark = needs_browser
DARK = "--force-dark-mode"  # prefers-color-scheme: dark

NOTEBOOK_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>A notebook</title></head>
<body{body}><main><h1>Exercises</h1><div class="output">{output}</div></main></body></html>"""


def assert_clean(found: dict) -> None:
    """No violation, and no result axe could not decide (contrast above all)."""
    assert counts(found["violations"]) == {}, explain(found)
    assert counts(found["incomplete"]) == {}, explain(found)


def with_unfinished(result: GradeResult) -> GradeResult:
    """``result`` and one more exercise: one check failed, two not done yet (a stub's
    message), one passed, so that every fold of the views shows."""
    stub = f"{NOT_DONE}: write model_size_mb() in exercises/ex4_2_scaled_configs.py."
    checks = [
        CheckResult(
            "GPT2_CONFIGS holds the four sizes",
            0.0,
            2.5,
            False,
            "GPT2_CONFIGS['xl'] has n_heads 24\nHint: GPT-2 XL has 25 heads",
        ),
        CheckResult("model_size_mb is in MB of 1024 * 1024 bytes", 0.0, 2.5, False, stub),
        CheckResult("model_size_mb is exact for the four sizes", 0.0, 2.5, False, stub),
        CheckResult("total_params is the parameter count", 2.5, 2.5, True, "passed"),
    ]
    exercise = ExerciseResult("4.2", "Larger GPT-2 configs", 2.5, 10.0, "failed", checks)
    return dataclasses.replace(result, exercises=[*result.exercises, exercise])


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", ["failing", "edge"])
def test_the_html_report(tmp_path, name, scheme):
    result = with_unfinished(all_results()[name])
    flags = [DARK] if scheme == "dark" else []
    assert_clean(axe(render_html(result), tmp_path, *flags))


@pytest.mark.parametrize(
    ("theme", "body", "flags"),
    [
        ("light", "", []),
        ("dark", "", [DARK]),
        ("jupyterlab-dark", ' data-jp-theme-light="false"', []),
    ],
)
def test_a_notebook_check(tmp_path, theme, body, flags):
    for name, result in {"failing": all_results()["failing"], "edge": edge_result()}.items():
        output = CheckReport(with_unfinished(result).to_dict(), ["3.1: graded from In [3]"])
        page = NOTEBOOK_PAGE.format(body=body, output=output._repr_html_())
        assert_clean(axe(page, tmp_path, *flags, name=f"{name}-{theme}"))


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory) -> Path:
    """The dashboard of a class with every part shown: failures grouped by kind, similar
    answers side by side, an unreadable submission, one that tampered with the grader and one
    that passes only the public examples (a public-seed grading beside the course's)."""
    out = tmp_path_factory.mktemp("a11y") / "out"
    meta = {
        "exercises": '["3.3", "4.1", "4.2", "4.3"]',
        "grader_version": "0.1.0",
        "settings_hash": "x",
        "settings": "{}",
    }
    ledger, public = Ledger(out), Ledger(out / "public-seed")
    ledger.set_meta({**meta, "seed": "7"})
    public.set_meta({**meta, "seed": "20241"})
    insight.ensure_schema(ledger.db)
    texts = class_answers()
    for name, fails in [*FAILS.items(), ("mallory", {})]:
        result = result_for(name, fails)
        if name == "mallory":
            why = TAMPERED + "the probe table was rewritten"
            tampered = [
                CheckResult(c.name, 0.0, c.max_points, False, why)
                for c in result.exercises[0].checks
            ]
            result.exercises[0] = ExerciseResult(
                "4.1", "Exercise 4.1", 0.0, 10.0, "error", tampered, verdict="tampered"
            )
            result.score = 0.0
        unreadable = name == "erin"
        status = (
            "error"
            if unreadable or name == "mallory"
            else ("passed" if result.all_passed else "failed")
        )
        row = {
            "name": name,
            "source": name,
            "kind": "folder",
            "content_hash": "h",
            "settings_hash": "x",
            "status": status,
            "reason": "erin.zip: not a valid zip file" if unreadable else "",
            "graded": int(not unreadable),
        }
        ledger.record(row, result.to_dict())
        if name == "bob":  # full marks on the public examples
            result = result_for(name, {})
        public.record(
            {**row, "status": "passed" if name == "bob" else status},
            result.to_dict(),
            render_report=False,
        )
        answers.store(ledger.db, name, "h", texts.get(name, {}))
    insight.write_insight(ledger.db, ledger.out)
    write_dashboard(ledger.db, ledger.out / "index.html", "Chapter 3-4 dashboard")
    ledger.close()
    public.close()
    return out


def test_the_dashboard(dashboard, tmp_path):
    html = (dashboard / "index.html").read_text()
    assert 'class="flag"' in html and "passes only the public examples" in html
    assert '<details class="pair"' in html and '<details class="check"' in html
    assert_clean(axe(html, tmp_path))
    # Opened, the folds' tables and the answers side by side are checked too.
    opened = html.replace("<details ", "<details open ")
    assert_clean(axe(opened, tmp_path, name="opened"))
