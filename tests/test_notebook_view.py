"""How a notebook check's HTML (grader/result/nbview.py, ``_repr_html_``) reads under a cell, no
kernel needed: a snippet unfolded in a narrow cell keeps its lines whole, a fold's summary says
what it holds without a stray mark, and the icons are drawn, not read out."""

from __future__ import annotations

import copy
import re

import pytest
from pagecheck import BROKEN_WORDS, needs_browser, run_in_page
from report_cases import all_results, edge_result
from test_accessibility import NOTEBOOK_PAGE, with_unfinished

from grader.result.nbview import CheckReport
from grader.result.schema import NOT_DONE, CheckResult, ExerciseResult, GradeResult


def html_of(result: GradeResult) -> str:
    return CheckReport(result.to_dict(), ["3.1: graded from In [3]"])._repr_html_()


def stub_only() -> GradeResult:
    """4.3 not started: every check says what to write."""
    stub = (
        f"{NOT_DONE}: fill GPT_CONFIG_SPLIT_DROPOUT and complete TransformerBlock and "
        "GPTModel in exercises/ex4_3_split_dropout.py."
    )
    checks = [CheckResult(f"check {i}", 0.0, 2.0, False, stub) for i in range(3)]
    exercise = ExerciseResult("4.3", "Separate dropout rates", 0.0, 6.0, "failed", checks)
    return GradeResult("nb", 0.0, 6.0, "0.1.0", "2.13.0+cpu", 20241, 1.5, [exercise])


@pytest.mark.parametrize("case", ["stub", "mixed", "edge"])
def test_summaries_say_what_the_fold_holds_without_a_stray_mark(case):
    """``▶ - 3 checks not done yet`` had a dash before the words: a summary's text starts with
    a word or a number; the status icon is drawn by the style and hidden from screen readers."""
    result = {
        "stub": stub_only,
        "mixed": lambda: with_unfinished(all_results()["failing"]),
        "edge": edge_result,
    }[case]()
    html = html_of(result)
    summaries = re.findall(r"<summary>(.*?)</summary>", html, re.S)
    assert summaries
    texts = [" ".join(re.sub(r"<[^>]+>", "", s).split()) for s in summaries]
    for text in texts:
        assert re.match(r"\w", text) and not re.search(r"(^|\s)[-–—](\s|$)", text), texts
    if case == "stub":
        assert "3 checks not done yet" in texts
    for icon in re.findall(r'<span class="gc-icon[^"]*"[^>]*>(.*?)</span>', html):
        assert icon == ""  # drawn by ::before, not text
    assert 'class="gc-icon gc-missing" aria-hidden="true"' in html


def test_counts_in_summaries_are_of_every_check():
    """The passed fold counts every check of the exercise, the unfinished ones too."""
    html = html_of(with_unfinished(all_results()["passing"]))
    assert "1 of 4 checks passed</summary>" in html


# Marks each reproduce snippet of the view and reports how its words are laid out.
SNIPPETS = """
      var snippets = [];
      document.querySelectorAll(".grader-check details").forEach(function (d) {
        if (d.querySelector("summary").textContent.indexOf("Reproduce it") === 0) {
          var pre = d.querySelector("pre");
          pre.setAttribute("data-snippet", "");
          snippets.push(pre);
        }
      });
      var broken = brokenWords("[data-snippet]");
      pagecheckReport({snippets: snippets.length, broken: broken,
                       scrolls: snippets.map(function (p) {
                         return p.scrollWidth > p.clientWidth; }),
                       focusable: snippets.map(function (p) { return p.tabIndex === 0; })});
"""


@needs_browser
@pytest.mark.parametrize("width", [320, 560])
def test_a_snippet_unfolded_in_a_narrow_cell_keeps_its_lines_whole(tmp_path, width):
    """Unfolded in a cell narrower than its lines, the snippet scrolls sideways (its box takes
    the keyboard's focus): no word is broken over two lines (``item/s()``, ``W_v/alue``)."""
    result = copy.deepcopy(all_results()["failing"])
    check = next(c for ex in result.exercises for c in ex.checks if c.reproduce)
    check.reproduce += "print(sa_v1.W_value.weight.detach().clone().sum(dim=0).tolist())\n"
    page = NOTEBOOK_PAGE.format(body="", output=html_of(result)).replace(
        '<div class="output">', f'<div class="output" style="width: {width}px">'
    )
    script = BROKEN_WORDS + SNIPPETS
    found, proc = run_in_page(page, script, tmp_path, "--window-size=800,1400")
    assert found["snippets"] == 1 and found["focusable"] == [True], found
    assert found["broken"] == [], found
    assert found["scrolls"] == [True], found  # the long line is there, to scroll to
