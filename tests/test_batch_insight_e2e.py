"""Similar answers and failure groups through the real commands: a class graded in two shards
with ``grade batch --shard``, then ``grade merge``, which compares the answers again over the
merged class (a copy between two shards is found only there). Graded on 4.2 and 4.3 with 3
examples per check.

Run with ``UPDATE_SCREENSHOTS=1`` to refresh the dashboard screenshots in docs/screenshots/.
"""

from __future__ import annotations

import csv
import os
import sqlite3
from pathlib import Path

import pytest
from copying import disguise
from support import CORPUS, ROOT, make_submission
from test_batch import batch, merge
from test_batch_dashboard import chromium, needs_browser
from test_similarity import notebook_copy_of

from grader.shared.registry import BY_ID

FAST = ["--seed", "20241", "-e", "4.2", "-e", "4.3", "--max-examples", "3", "-j", "1"]


def make_class(root: Path) -> Path:
    make_submission(root / "alice")  # the instructor's answers, as alice's own
    bob = root / "bob" / "exercises"  # bob copies alice's, disguised
    make_submission(root / "bob")
    for ex in ("4.2", "4.3"):
        name = BY_ID[ex].filename
        (bob / name).write_text(disguise((root / "alice" / "exercises" / name).read_text(), 8))
    carol = {"4.2": "ex4_2/correct_closed_form.py", "4.3": "ex4_3/correct_functional_dropout.py"}
    make_submission(root / "carol", {k: CORPUS / v for k, v in carol.items()})
    make_submission(root / "dave", base=ROOT)  # the untouched stubs
    wrong = CORPUS / "ex4_2" / "wrong_hard_coded_counts.py"  # erik and fay share one
    make_submission(root / "erik", {"4.2": wrong}, base=ROOT)
    make_submission(root / "fay", {"4.2": wrong}, base=ROOT)
    notebook_copy_of(root / "carol", root / "nina.ipynb")  # nina's notebook copies carol's
    return root


def pairs(out: Path) -> dict[tuple[str, str, str], float]:
    with (out / "similarity.csv").open() as f:
        return {
            (r["exercise"], r["submission_a"], r["submission_b"]): float(r["similarity"])
            for r in csv.DictReader(f)
        }


@pytest.fixture(scope="module")
def merged(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("insight-e2e")
    klass = make_class(root / "class")
    for k in (1, 2):
        proc = batch(str(klass), "-o", str(root / f"shard-{k}"), "--shard", f"{k}/2", *FAST)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = merge(str(root / "shard-1"), str(root / "shard-2"), "-o", str(root / "all"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


def test_merge_finds_copies_across_shards(merged):
    # shard 1: alice, carol, erik, nina; shard 2: bob, dave, fay
    one, two, everyone = (pairs(merged / d) for d in ("shard-1", "shard-2", "all"))
    assert set(one) == {("4.2", "carol", "nina"), ("4.3", "carol", "nina")}
    assert set(two) == set()
    assert set(everyone) == set(one) | {
        ("4.2", "alice", "bob"),
        ("4.3", "alice", "bob"),
        ("4.2", "erik", "fay"),
    }
    assert all(v >= 0.7 for v in everyone.values())  # no stub, no independent answer either


def test_failure_groups_cover_the_merged_class(merged):
    db = sqlite3.connect(merged / "all" / "gradebook.sqlite")
    rows = db.execute(
        "SELECT g.check_name, g.count, g.example_message, group_concat(m.submission) "
        "FROM failure_groups AS g JOIN failure_group_members AS m "
        "USING (exercise_id, check_name, rank) WHERE g.exercise_id = '4.2' "
        "GROUP BY g.check_name, g.rank ORDER BY g.position, g.rank"
    ).fetchall()
    counts = [r for r in rows if r[0].startswith("total_params is the parameter count")]
    assert [(r[1], sorted(r[3].split(","))) for r in counts] == [
        (2, ["erik", "fay"]),
        (1, ["dave"]),
    ]
    assert counts[0][2].startswith("total_params(cfg) returned 0; GPTModel(cfg) has")
    assert counts[1][2].startswith("not done yet")
    html = (merged / "all" / "index.html").read_text()
    assert "total_params(cfg) returned 0" in html and html.count('<details class="pair"') == 5


def test_runs_again_to_the_same_result(merged):
    before = (merged / "all" / "similarity.csv").read_bytes()
    proc = merge(str(merged / "shard-1"), str(merged / "shard-2"), "-o", str(merged / "all"))
    assert proc.returncode == 0 and (merged / "all" / "similarity.csv").read_bytes() == before
    shard = (merged / "shard-1" / "similarity.csv").read_bytes()
    proc = batch(str(merged / "class"), "-o", str(merged / "shard-1"), "--shard", "1/2", *FAST)
    assert proc.returncode == 0 and "0 graded now" in proc.stdout
    assert (merged / "shard-1" / "similarity.csv").read_bytes() == shard


SHOT = """<script>
document.querySelectorAll({hide!r}).forEach(function (e) {{ e.remove(); }});
var d = document.querySelector({open!r}); d.open = true;
</script></body>"""


@needs_browser
@pytest.mark.parametrize(
    ("name", "hide", "open_"),
    [
        ("dashboard-similarity", ".cards, .charts, #wrong", 'details.pair[data-exercise="4.3"]'),
        (
            "dashboard-failures",
            ".cards, .charts, #similar",
            'details.check[data-exercise="4.2"][data-failed="3"]',
        ),
    ],
)
def test_dashboard_screenshots(merged, tmp_path, name, hide, open_):
    """The two insight sections of a real merged class, one pair / one check opened."""
    folder = ROOT / "docs" / "screenshots" if os.environ.get("UPDATE_SCREENSHOTS") else tmp_path
    out = merged / "all"
    page = out / f"{name}.html"
    page.write_text(
        (out / "index.html").read_text().replace("</body>", SHOT.format(hide=hide, open=open_))
    )
    shot = folder / f"{name}.png"
    proc = chromium(tmp_path, "--window-size=1280,900", f"--screenshot={shot}", page.as_uri())
    assert shot.is_file() and shot.stat().st_size > 10_000, proc.stderr[-2000:]
    assert "Uncaught" not in proc.stderr
