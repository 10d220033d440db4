"""The class dashboard (index.html): its numbers, its escaping, that it is self-contained, and
that it renders and sorts in a real headless browser (Debian's chromium).

The class here is written straight into a ledger (no grading), so these tests are fast.
"""

from __future__ import annotations

import html
import json
import re
import sqlite3
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from pagecheck import BROWSER, FLAGS, needs_browser

from grader.batch.ledger import Ledger
from grader.classview.dashboard import check_rates, context, histogram, write_dashboard
from grader.classview.gradebook import gradebook_csv
from grader.result.schema import CheckResult, ExerciseResult, GradeResult

CHECKS = {"3.1": ["outputs match", "sa_v2 unchanged"], "4.1": ["ff count", "att count"]}
HOSTILE = '<img src=x onerror="alert(1)">&co'
# name -> which checks pass (in CHECKS order), or None for a submission that could not be read
CLASS: dict[str, list[bool] | None] = {
    "alice": [True, True, True, True],
    "bob": [False, True, True, True],
    "carol": [False, True, False, True],
    "dan": [False, False, False, False],
    HOSTILE: [True, True, False, True],
    "=cmd|calc": [True, False, True, True],
    "erin": None,
}


def result_for(name: str, passes: list[bool] | None) -> GradeResult:
    flags = iter(passes or [False] * 4)
    exercises = []
    for ex_id, names in CHECKS.items():
        checks = []
        for check in names:
            ok = next(flags)
            checks.append(
                CheckResult(check, 5.0 if ok else 0.0, 5.0, ok, "passed" if ok else "wrong")
            )
        score = sum(c.points for c in checks)
        status = "error" if passes is None else "passed" if score == 10 else "failed"
        exercises.append(ExerciseResult(ex_id, f"Exercise {ex_id}", score, 10.0, status, checks))
    return GradeResult(
        name, sum(e.score for e in exercises), 20.0, "0.1.0", "2.x", 7, 0.5, exercises
    )


@pytest.fixture
def out(tmp_path) -> Path:
    ledger = Ledger(tmp_path / "out")
    ledger.set_meta(
        {
            "exercises": '["3.1", "4.1"]',
            "grader_version": "0.1.0",
            "seed": "7",
            "settings_hash": "x",
            "settings": "{}",
        }
    )
    for name, passes in CLASS.items():
        result = result_for(name, passes)
        status = "error" if passes is None else "passed" if result.all_passed else "failed"
        ledger.record(
            {
                "name": name,
                "source": name,
                "kind": "folder",
                "content_hash": "h",
                "settings_hash": "x",
                "status": status,
                "reason": "erin.zip: not a valid zip file" if passes is None else "",
                "graded": int(passes is not None),
            },
            result.to_dict(),
        )
    write_dashboard(ledger.db, ledger.out / "index.html", "Chapter 3-4 <test>")
    ledger.close()
    return tmp_path / "out"


def test_numbers(out):
    db = sqlite3.connect(out / "gradebook.sqlite")
    ctx = context(db, "t")
    assert ctx["summary"] == {
        "submissions": 7,
        "graded": 6,
        "errors": 1,
        "passed": 1,
        "mean": "62%",
        "median": "75%",
    }
    # Totals of the six graded: 20, 15, 10, 0, 15, 15 out of 20.
    assert [b.count for b in ctx["hist"]["bars"]] == [1, 0, 0, 0, 0, 1, 0, 3, 0, 1]
    rates = {(r.exercise_id, r.name): (r.failed, r.total) for r in check_rates(db)}
    assert rates == {
        ("3.1", "outputs match"): (3, 6),
        ("3.1", "sa_v2 unchanged"): (2, 6),
        ("4.1", "ff count"): (3, 6),
        ("4.1", "att count"): (1, 6),
    }  # the unreadable submission is not counted as failing every check


def test_histogram_puts_full_marks_in_the_last_bin():
    assert [b.count for b in histogram([0.0, 0.05, 0.1, 0.999, 1.0])] == [2, 1] + [0] * 7 + [2]


def test_self_contained_and_escaped(out):
    html = (out / "index.html").read_text()
    assert "<title>Chapter 3-4 &lt;test&gt;</title>" in html
    assert HOSTILE not in html and "&lt;img src=x onerror=" in html
    urls = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', html)
    assert urls and not [u for u in urls if re.match(r"^(https?:)?//", u)]
    assert "<link" not in html and "@import" not in html
    assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", html))  # in-page only
    assert 'href="reports/alice.html"' in html or 'href="results/alice.json"' in html


def test_gradebook_csv_neutralises_formulas(out):
    text = gradebook_csv(sqlite3.connect(out / "gradebook.sqlite"))
    assert "\n'=cmd|calc," in text
    assert "\nalice,20,20,10,10,passed,,0.1.0,7\n" in text


# --- in a real browser -------------------------------------------------------------------------


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    return subprocess.run(
        [BROWSER, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


class TableRows(HTMLParser):
    """The ``data-v`` of the cells of each row of the submissions table."""

    def __init__(self):
        super().__init__()
        self.rows: list[list[str]] = []
        self.in_table = self.in_body = False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.in_table = dict(attrs).get("id") == "submissions"
        elif tag == "tbody" and self.in_table:
            self.in_body = True
        elif tag == "tr" and self.in_body:
            self.rows.append([])
        elif tag == "td" and self.in_body:
            self.rows[-1].append(dict(attrs)["data-v"])

    def handle_endtag(self, tag):
        if tag == "tbody":
            self.in_body = False


def clicked(out: Path, header: int, times: int) -> Path:
    """A copy of the dashboard that presses a column header's sort button ``times`` times once
    loaded (a button: a keyboard reaches it with Tab and presses it with Enter or Space)."""
    page = out / f"clicked-{header}-{times}.html"
    script = (
        f"<script>var th = document.querySelectorAll('#submissions th')[{header}];"
        f"for (var i = 0; i < {times}; i++) th.querySelector('button').click();"
        "</script></body>"
    )
    page.write_text((out / "index.html").read_text().replace("</body>", script))
    return page


@needs_browser
def test_renders_in_headless_chromium(out, tmp_path):
    shot = tmp_path / "dashboard.png"
    proc = chromium(
        tmp_path, "--window-size=1280,1000", f"--screenshot={shot}", (out / "index.html").as_uri()
    )
    assert shot.is_file() and shot.stat().st_size > 10_000, proc.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Uncaught" not in proc.stderr


@needs_browser
@pytest.mark.parametrize(
    ("header", "times", "key", "descending"),
    [
        (1, 1, lambda row: float(row[1]), False),  # total, ascending
        (1, 2, lambda row: float(row[1]), True),  # total, clicked again: descending
        (0, 1, lambda row: row[0], False),  # name
        (3, 2, lambda row: float(row[3]), True),  # exercise 4.1
    ],
)
def test_table_sorts_in_the_browser(out, tmp_path, header, times, key, descending):
    proc = chromium(tmp_path, "--dump-dom", clicked(out, header, times).as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    parser = TableRows()
    parser.feed(proc.stdout)
    assert sorted(row[0] for row in parser.rows) == sorted(CLASS)
    values = [key(row) for row in parser.rows]
    assert values == sorted(values, reverse=descending)
    assert values != [key(row) for row in sorted(parser.rows)] or header == 0  # it moved
    assert "Uncaught" not in proc.stderr


# --- long check names (issue 34) --------------------------------------------------------------

LONG = (
    "GPT_CONFIG_SPLIT_DROPOUT is GPT_CONFIG_124M with drop_rate replaced by drop_rate_emb, "
    "drop_rate_shortcut and drop_rate_attn, nothing else changed"
)


@pytest.fixture
def long_names(tmp_path) -> Path:
    """A class of two whose checks have a short and a very long name."""
    ledger = Ledger(tmp_path / "long")
    ledger.set_meta(
        {
            "exercises": '["4.3"]',
            "grader_version": "0.1.0",
            "seed": "7",
            "settings_hash": "x",
            "settings": "{}",
        }
    )
    for name, ok in (("alice", True), ("bob", False)):
        checks = [
            CheckResult(LONG, 5.0 * ok, 5.0, ok, "passed" if ok else "wrong"),
            CheckResult("same keys", 5.0, 5.0, True, "passed"),
        ]
        exercise = ExerciseResult(
            "4.3", "Exercise 4.3", 5.0 + 5.0 * ok, 10.0, "passed" if ok else "failed", checks
        )
        result = GradeResult(name, exercise.score, 10.0, "0.1.0", "2.x", 7, 0.5, [exercise])
        ledger.record(
            {
                "name": name,
                "source": name,
                "kind": "folder",
                "content_hash": "h",
                "settings_hash": "x",
                "status": exercise.status,
                "reason": "",
                "graded": 1,
            },
            result.to_dict(),
        )
    write_dashboard(ledger.db, ledger.out / "index.html", "Long names")
    ledger.close()
    return ledger.out


LABELS = """<script>
var labels = Array.prototype.map.call(document.querySelectorAll("#check-rates th.label"),
  function (th) {
    var style = getComputedStyle(th);
    return [th.textContent, th.title, style.textOverflow, style.overflow, style.whiteSpace,
            th.scrollWidth > th.clientWidth];
  });
document.body.setAttribute("data-labels", JSON.stringify(labels));
</script></body>"""


@needs_browser
def test_a_long_check_label_ends_in_an_ellipsis_and_shows_whole_on_hover(long_names, tmp_path):
    """The failure-rate chart's labels were SVG text clipped mid-letter: now a long one is cut
    with an ellipsis, and its title (a tooltip on hover) and its text hold the whole name."""
    page = long_names / "labels.html"
    page.write_text((long_names / "index.html").read_text().replace("</body>", LABELS))
    proc = chromium(tmp_path, "--window-size=1280,900", "--dump-dom", page.as_uri())
    attribute = re.search(r'<body[^>]*data-labels="([^"]*)"', proc.stdout).group(1)
    labels = json.loads(html.unescape(attribute))
    assert [label[0] for label in labels] == [f"4.3 · {LONG}", "4.3 · same keys"]
    for text, title, overflow, clip, white_space, _cut in labels:
        assert title.startswith(text)
        assert (overflow, clip, white_space) == ("ellipsis", "hidden", "nowrap")
    assert [label[5] for label in labels] == [True, False]  # only the long one is cut
