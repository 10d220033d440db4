"""What the class got wrong (failures grouped by kind) and similar answers, as the gradebook
database and the dashboard show them, in a real headless browser (Debian's chromium) too.

The class is written straight into a ledger (no grading), so these tests are fast.
(The screenshots in docs/ are taken from a real merged class: test_batch_insight_e2e.py.)
"""

from __future__ import annotations

import json
import re
import sqlite3
from html import escape as html_escape
from pathlib import Path

import pytest
from copying import disguise
from support import CORPUS, ROOT, SOLUTION
from test_batch_dashboard import HOSTILE, chromium, needs_browser

from grader.analysis import answers, insight
from grader.analysis.failures import counterexample_kind, message_kind, split_hint
from grader.batch.ledger import Ledger
from grader.classview.dashboard import write_dashboard
from grader.result.schema import CheckResult, ExerciseResult, GradeResult
from grader.shared.registry import BY_ID

HINT_FF = "FeedForward is emb -> 4 emb -> emb, both layers with biases."
HINT_ATT = "the causal mask is a buffer, not a parameter."
OFF_BY = (
    "feedforward_params(cfg) returned {}, but TransformerBlock(cfg).ff has {} trainable "
    "parameters (off by {}: the biases of both linear layers)"
)
KEY_ERROR = (
    "your code raised KeyError: 'emb' (in ex4_1_parameter_counts.py, line {}, in "
    "feedforward_params: {})"
)
MASK = "attention_params(cfg) returned {}, but TransformerBlock(cfg).att has {} (off by +{})"
NOT_DONE = "not done yet: write feedforward_params() in exercises/ex4_1_parameter_counts.py."
CFG = {"emb_dim": 1, "n_heads": 1, "qkv_bias": False}

# name -> {check: (message without hint, counterexample)}; a check not listed passed.
FAILS: dict[str, dict[str, tuple[str, dict | None]]] = {
    "alice": {},
    "bob": {
        "ff": (OFF_BY.format(12, 13, -1), CFG),
        "att": (MASK.format(9, 8, 1), {**CFG, "qkv_bias": True}),
    },
    "carol": {
        "ff": (OFF_BY.format(4200, 4300, -100), {**CFG, "emb_dim": 10}),
        "att": (MASK.format(6, 5, 1), CFG),
    },
    "dan": {"ff": (NOT_DONE, CFG), "att": (NOT_DONE, CFG)},
    HOSTILE: {"ff": (KEY_ERROR.format(3, "return cfg['emb'] * 8"), CFG)},
    "=cmd|calc": {"ff": (KEY_ERROR.format(9, "e = cfg['emb']"), {**CFG, "n_heads": 2})},
    "erin": {},  # could not be read
}
HINTS = {"ff": HINT_FF, "att": HINT_ATT}


def result_for(name: str, fails: dict) -> GradeResult:
    checks = []
    for check in ("ff", "att"):
        if check in fails:
            message, ce = fails[check]
            checks.append(
                CheckResult(check, 0.0, 5.0, False, f"{message}\nHint: {HINTS[check]}", ce)
            )
        else:
            checks.append(CheckResult(check, 5.0, 5.0, True, "passed"))
    score = sum(c.points for c in checks)
    status = "passed" if score == 10 else "failed"
    exercise = ExerciseResult("4.1", "Exercise 4.1", score, 10.0, status, checks)
    return GradeResult(name, score, 10.0, "0.1.0", "2.x", 7, 0.5, [exercise])


def source(folder: Path, exercise_id: str) -> str:
    return (folder / BY_ID[exercise_id].filename).read_text()


def class_answers() -> dict[str, dict[str, str]]:
    solution, stubs = SOLUTION / "exercises", ROOT / "exercises"
    alice = {e: source(solution, e) for e in ("3.3", "4.2", "4.3")}
    bob = {e: disguise(t, 4) for e, t in alice.items()}  # bob copied alice, disguised
    carol = {
        "3.3": source(solution, "3.3"),
        "4.2": (CORPUS / "ex4_2" / "correct_closed_form.py").read_text(),
        "4.3": (CORPUS / "ex4_3" / "correct_functional_dropout.py").read_text(),
    }
    stub = {e: source(stubs, e) for e in ("3.3", "4.2", "4.3")}
    return {
        "alice": alice,
        "bob": bob,
        "carol": carol,
        "dan": stub,
        HOSTILE: stub,
        "=cmd|calc": {"4.2": disguise(alice["4.2"], 9)},
        "erin": {},
    }


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    ledger = Ledger(tmp_path_factory.mktemp("insight") / "out")
    ledger.set_meta(
        {
            "exercises": '["3.3", "4.1", "4.2", "4.3"]',
            "grader_version": "0.1.0",
            "seed": "7",
            "settings_hash": "x",
            "settings": "{}",
        }
    )
    insight.ensure_schema(ledger.db)
    texts = class_answers()
    for name, fails in FAILS.items():
        result = result_for(name, fails)
        unreadable = name == "erin"
        status = "error" if unreadable else "passed" if result.all_passed else "failed"
        ledger.record(
            {
                "name": name,
                "source": name,
                "kind": "folder",
                "content_hash": "h",
                "settings_hash": "x",
                "status": status,
                "reason": "erin.zip: not a valid zip file" if unreadable else "",
                "graded": int(not unreadable),
            },
            result.to_dict(),
        )
        answers.store(ledger.db, name, "h", texts[name])
    insight.write_insight(ledger.db, ledger.out)
    write_dashboard(ledger.db, ledger.out / "index.html", "Insight <test>")
    ledger.close()
    return ledger.out


# --- failures grouped by kind -------------------------------------------------------------


def test_message_kind_abstracts_what_varies():
    a, _ = message_kind(OFF_BY.format(12, 13, -1) + "\nHint: x")
    b, _ = message_kind(OFF_BY.format(4200, 4300, -100) + "\nExpected: tensor([1.])")
    assert a == b and "returned N, but" in a and "off by N" in a
    gpt2 = message_kind("GPT-2 small's attention: 768 -> 512")[0]
    assert gpt2 == "GPT-2 small's attention: N -> N"
    shape, exception = message_kind(KEY_ERROR.format(3, "return cfg['emb'] * 8"))
    assert (shape, exception) == ("your code raised KeyError: 'emb'", "KeyError")
    assert message_kind(KEY_ERROR.format(9, "e = cfg['emb']")) == (shape, exception)
    torch_error = "failed: your code raised RuntimeError: mat1 and mat2 shapes cannot be multiplied"
    one, other = (message_kind(f"{torch_error} ({s} and 3x1)") for s in ("4x1", "1x1"))
    assert one == other
    assert message_kind(NOT_DONE) == ("not done yet", "NotImplementedError")
    assert split_hint("it broke\nHint: look here") == ("it broke", "look here")


def test_counterexample_kind_keeps_flags_not_sizes():
    assert counterexample_kind({"emb_dim": 3, "qkv_bias": True}) == "{emb_dim, qkv_bias=true}"
    assert counterexample_kind({"emb_dim": 900, "qkv_bias": True}) == "{emb_dim, qkv_bias=true}"
    assert counterexample_kind("medium") == '"medium"' and counterexample_kind(None) == ""


def groups(out: Path) -> list[tuple]:
    db = sqlite3.connect(out / "gradebook.sqlite")
    return db.execute(
        "SELECT check_name, rank, count, exception, example, hint FROM failure_groups "
        "ORDER BY position, rank"
    ).fetchall()


def test_failures_grouped_largest_first(out):
    assert groups(out) == [
        ("ff", 1, 2, "", "bob", HINT_FF),  # ties: in the order of their kinds
        ("ff", 2, 2, "KeyError", HOSTILE, HINT_FF),  # the first student by name: the example
        ("ff", 3, 1, "NotImplementedError", "dan", HINT_FF),
        ("att", 1, 1, "", "carol", HINT_ATT),  # qkv_bias=false: another kind than bob's
        ("att", 2, 1, "", "bob", HINT_ATT),
        ("att", 3, 1, "NotImplementedError", "dan", HINT_ATT),
    ]
    db = sqlite3.connect(out / "gradebook.sqlite")
    members = db.execute(
        "SELECT submission FROM failure_group_members WHERE check_name = 'ff' AND rank = 2 "
        "ORDER BY submission"
    ).fetchall()
    assert members == sorted([("=cmd|calc",), (HOSTILE,)])
    assert "erin" not in {m for (m,) in db.execute("SELECT submission FROM failure_group_members")}


def sql_recipes() -> list[str]:
    docs = (ROOT / "docs" / "batch.md").read_text()
    return [q for q in re.findall(r"```sql\n(.*?)```", docs, re.S) if q.startswith("--")]


def test_the_sql_recipes_in_the_docs_run(out):
    db = sqlite3.connect(out / "gradebook.sqlite")
    largest, who, copied = (db.execute(q).fetchall() for q in sql_recipes())
    assert largest[0][:3] == ("4.1", "ff", 2)
    assert sorted(r[0] for r in who) == sorted(["=cmd|calc", "bob", "carol", "dan", HOSTILE])
    assert copied[0][:2] == ("alice", "bob")


# --- similar answers ----------------------------------------------------------------------


def test_similarity_tables_and_csv(out):
    rows = (out / "similarity.csv").read_text().splitlines()
    assert rows[0] == "exercise,submission_a,submission_b,similarity"
    pairs = {tuple(r.split(",")[:3]) for r in rows[1:]}
    assert {
        ("4.2", "alice", "bob"),
        ("4.3", "alice", "bob"),
        ("4.2", "'=cmd|calc", "alice"),
        ("4.2", "'=cmd|calc", "bob"),
    } == pairs
    db = sqlite3.connect(out / "gradebook.sqlite")
    short = dict(db.execute("SELECT exercise_id, short FROM similarity_runs"))
    assert len(json.loads(short["3.3"])) == 5  # every answer to 3.3 is one line
    assert "4.1" in short  # graded, but no answers stored for it: nothing to compare


# --- the dashboard ------------------------------------------------------------------------


def test_dashboard_sections(out):
    html = (out / "index.html").read_text()
    assert html.count('<details class="pair"') == 4
    assert html.count('<details class="check"') == 2
    pair = html[html.index('id="pair-1"') : html.index('id="pair-2"')]
    assert pair.count("<mark class=") > 4 and "alice" in pair and "100%" in pair
    assert "all 5: the answers are shorter than" in html  # 3.3: too short, not scored
    assert "&lt;img src=x onerror=" in html and HOSTILE not in html
    assert 'href="similarity.csv"' in html
    assert html_escape(HINT_FF) in html and "largest: " in html


CLICK = """<script>
var target = document.querySelector({selector!r});
var inner = target.querySelector({inner!r});
function shown() {{ return inner.checkVisibility() && inner.getClientRects().length > 0; }}
var before = [shown(), target.getBoundingClientRect().height];
target.querySelector("summary").click();
var after = [shown(), target.getBoundingClientRect().height];
document.body.setAttribute("data-before", before.join(" "));
document.body.setAttribute("data-after", after.join(" "));
document.body.setAttribute("data-open", target.open);
</script></body>"""


def clicked(out: Path, selector: str, inner: str) -> Path:
    page = out / f"clicked-{abs(hash(selector))}.html"
    script = CLICK.format(selector=selector, inner=inner)
    page.write_text((out / "index.html").read_text().replace("</body>", script))
    return page


def body_attributes(dom: str) -> dict[str, str]:
    tag = re.search(r"<body([^>]*)>", dom).group(1)
    return dict(re.findall(r'data-(\w+)="([^"]*)"', tag))


@needs_browser
@pytest.mark.parametrize(
    ("selector", "inner"),
    [("#pair-1", "figure.answer"), ("details.check", "table.groups")],
)
def test_sections_open_in_the_browser(out, tmp_path, selector, inner):
    proc = chromium(tmp_path, "--dump-dom", clicked(out, selector, inner).as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    state = body_attributes(proc.stdout)
    (shown_before, height_before), (shown_after, height_after) = (
        state[k].split() for k in ("before", "after")
    )
    assert state["open"] == "true" and shown_before == "false" and shown_after == "true"
    assert float(height_after) > float(height_before) + 100  # the content is laid out
    assert "Uncaught" not in proc.stderr
    if selector == "#pair-1":
        opened = proc.stdout[proc.stdout.index('id="pair-1"') :]
        assert opened.count("<figure") >= 2 and "<mark" in opened


def test_a_hint_that_belongs_to_a_cause_is_the_hint_they_received(tmp_path):
    """A check with a cause holds no hint in its message (the cause's is shown once, under the
    cause): the group's hint is the cause's, read from the example's result file."""
    ledger = Ledger(tmp_path / "out")
    ledger.set_meta(
        {
            "exercises": '["4.1"]',
            "grader_version": "0.1.0",
            "seed": "7",
            "settings_hash": "x",
            "settings": "{}",
        }
    )
    insight.ensure_schema(ledger.db)
    cause = {"key": "part:GELU:output", "text": "your GELU differs", "hint": "use tanh", "rank": 1}
    for name, with_cause in (("ann", True), ("ben", False)):
        check = CheckResult(
            "ff",
            0.0,
            10.0,
            False,
            f"{name}'s logits differ",
            CFG,
            cause=cause if with_cause else None,
        )
        exercise = ExerciseResult("4.1", "Exercise 4.1", 0.0, 10.0, "failed", [check])
        result = GradeResult(name, 0.0, 10.0, "0.1.0", "2.x", 7, 0.5, [exercise])
        ledger.record(
            {
                "name": name,
                "source": name,
                "kind": "folder",
                "content_hash": "h",
                "settings_hash": "x",
                "status": "failed",
                "reason": "",
                "graded": 1,
            },
            result.to_dict(),
        )
    insight.write_insight(ledger.db, ledger.out)
    rows = ledger.db.execute("SELECT example, hint FROM failure_groups ORDER BY example")
    assert rows.fetchall() == [("ann", "use tanh"), ("ben", "")]
    write_dashboard(ledger.db, ledger.out / "index.html", "Causes")
    assert '<td class="hint">use tanh</td>' in (ledger.out / "index.html").read_text()
    ledger.close()
