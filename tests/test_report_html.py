"""The HTML report: what it shows, that student text is escaped, that it is one self-contained
file, and that it loads without script errors in a real headless browser (Debian's chromium),
which also takes a screenshot for a person to look at."""

from __future__ import annotations

import copy
import re
import subprocess
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest
from pagecheck import AS_PRINTED, BROKEN_WORDS, BROWSER, FLAGS, needs_browser, run_in_page
from report_cases import HOSTILE, HUGE, all_results, edge_result, real_results

from grader.result.common import parse_message
from grader.result.report_html import render_html, write_html

WHEN = datetime(2025, 3, 14, 9, 26, tzinfo=timezone.utc)


class Page(HTMLParser):
    """The parts of a report page the tests look at."""

    def __init__(self):
        super().__init__()
        self.sections: dict[str, str] = {}  # id -> data-status
        self.scripts = 0
        self.urls: list[str] = []
        self.texts: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections[a["id"]] = a["data-status"]
        if tag == "script":
            self.scripts += 1
            self.in_script = True
        self.urls += [a[k] for k in ("src", "href", "action") if a.get(k)]

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = False

    def handle_data(self, data):
        if not self.in_script:
            self.texts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.texts)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    return page


@pytest.fixture(scope="module", params=["passing", "failing", "edge"])
def case(request):
    result = all_results()[request.param]
    return result, render_html(result, WHEN)


def test_top_of_the_page(case):
    result, html = case
    text = parse(html).text
    assert f"{result.score:g} / {result.max_score:g}" in text.replace("\n", " ")
    for fact in (
        result.submission,
        result.grader_version,
        result.torch_version,
        str(result.seed),
        "2025-03-14 09:26 UTC",
    ):
        assert fact in text


def test_every_exercise_and_check_is_shown(case):
    result, html = case
    page = parse(html)
    assert page.sections == {f"ex-{ex.id.replace('.', '-')}": ex.status for ex in result.exercises}
    for ex in result.exercises:
        assert f"{ex.id} · {ex.title}" in page.text
        for check in ex.checks:
            assert check.name in page.text


def test_failures_show_message_evidence_and_snippet():
    result = real_results()["failing"]
    page = parse(render_html(result, WHEN))
    (check,) = [c for ex in result.exercises for c in ex.checks if not c.passed]
    msg = parse_message(check.message)
    assert msg.text in page.text and msg.hint in page.text
    assert msg.expected in page.text and msg.got in page.text
    for key, value in check.counterexample.items():
        assert f"{key}={value}" in page.text.replace("\n", "")
    assert check.reproduce.strip() in page.text  # the snippet, verbatim and copyable
    assert "Copy" in page.text


def test_student_text_is_escaped():
    html = render_html(edge_result(), WHEN)
    page = parse(html)
    assert page.scripts == 1  # ours; the student's <script> is text
    assert "<script>alert" not in html and "&lt;script&gt;alert(" in html
    assert "<b>transposed</b>" not in html and "<b>o" not in html
    assert HOSTILE.split("\n")[0] in page.text  # shows as the student wrote it
    assert "\x1b" not in html and "\x00" not in html and "escape\\x1b[31m" in page.text


def test_one_self_contained_file(case):
    _, html = case
    page = parse(html)
    assert all(u.startswith("#") for u in page.urls), page.urls  # in-page links only
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert "<img" not in html and "@font-face" not in html
    assert "prefers-color-scheme: dark" in html and "@media print" in html


def test_huge_messages_are_clipped():
    html = render_html(edge_result(), WHEN)
    assert len(html) < len(HUGE) / 2
    assert "more characters not shown" in html


def test_write_html(tmp_path):
    path = tmp_path / "report.html"
    write_html(edge_result(), path)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


# --- in a real browser -------------------------------------------------------------------------


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BROWSER, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def page_messages(stderr: str, url: str) -> list[str]:
    """The console messages and uncaught errors of the page at ``url`` in chromium's log."""
    return [
        line
        for line in stderr.splitlines()
        if ("CONSOLE" in line and url in line) or "Uncaught" in line
    ]


@needs_browser
@pytest.mark.parametrize("name", ["failing", "edge"])
def test_loads_in_headless_chromium(tmp_path, name):
    result = all_results()[name]
    report = tmp_path / f"{name}.html"
    write_html(result, report)
    proc = chromium(tmp_path / "profile-dom", "--dump-dom", report.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    (html_tag,) = re.findall(r"<html[^>]*>", proc.stdout)
    assert 'data-js="ready"' in html_tag, "the page's script did not run to its end"
    assert "data-js-error" not in html_tag
    assert page_messages(proc.stderr, report.as_uri()) == []
    dom = parse(proc.stdout)
    assert set(dom.sections) == {f"ex-{ex.id.replace('.', '-')}" for ex in result.exercises}

    shot = tmp_path / f"{name}.png"
    proc = chromium(
        tmp_path / "profile-shot",
        "--window-size=1100,1600",
        f"--screenshot={shot}",
        report.as_uri(),
    )
    assert shot.is_file() and shot.stat().st_size > 20_000, proc.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot for a person to look at: {shot}")


# --- snippets, folds and landmarks (issue 34) ---------------------------------------------------


# How the report's snippets are laid out: how many, their words broken over lines, focusable.
SNIPPET_LAYOUT = """
      var pres = document.querySelectorAll(".repro pre");
      pagecheckReport({snippets: pres.length, broken: brokenWords(".repro pre"),
                       focusable: Array.prototype.every.call(pres, function (p) {
                         return p.tabIndex === 0; })});
"""


@needs_browser
@pytest.mark.parametrize("medium", ["screen", "print"])
def test_a_snippet_is_never_broken_inside_a_word(tmp_path, medium):
    """In a narrow window a reproduce snippet's lines scroll (its box takes the keyboard's
    focus): no line is broken. On paper they wrap, between words or after a path's ``/`` or
    ``-`` at most, never inside a name (``item|s()``, ``W_v|alue`` in a notebook before)."""
    script = BROKEN_WORDS + (AS_PRINTED if medium == "print" else "") + SNIPPET_LAYOUT
    result = copy.deepcopy(all_results()["failing"])
    check = next(c for ex in result.exercises for c in ex.checks if c.reproduce)
    check.reproduce += "print(sa_v1.W_value.weight.detach().clone().sum(dim=0).tolist())\n"
    found, proc = run_in_page(render_html(result), script, tmp_path, "--window-size=420,1400")
    assert found["snippets"] == 1 and found["focusable"], found
    if medium == "screen":
        assert found["broken"] == [], found
    else:
        inside = [w for w in found["broken"] if re.search(r"[^-/]\|", w)]
        assert inside == [], found


def test_every_part_of_the_page_is_in_a_landmark():
    """A banner (the score and what was graded), a main (the overview and the exercises) and
    a content-info footer, directly under <body>: nothing outside them but the script."""
    html = render_html(edge_result(), WHEN)
    body = html[html.index("<body>") + len("<body>") : html.index("</body>")]
    outside = re.sub(r"<(header|main|footer|script)\b.*?</\1>", "", body, count=0, flags=re.S)
    assert outside.strip() == ""
    assert [m.group(1) for m in re.finditer(r"^<(header|main|footer)\b", body, re.M)] == [
        "header",
        "main",
        "footer",
    ]
    assert html.count("<main>") == 1 and '<nav aria-label="Exercises">' in html


def test_summaries_start_with_a_word():
    """What a fold says when it is closed starts with a word or a number: no stray mark."""
    result = all_results()["passing"]
    summaries = re.findall(r"<summary>(.*?)</summary>", render_html(result), re.S)
    assert summaries
    for summary in summaries:
        text = re.sub(r"<[^>]+>", "", summary).strip()
        assert re.match(r"\w", text) and not re.search(r"(^|\s)[-–—](\s|$)", text), text
