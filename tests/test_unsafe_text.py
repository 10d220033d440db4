"""Text from student code, whatever it holds, reaches every output safely.

A scripted worker (a thread speaking the real wire protocol on real pipes) answers the judge
with exception descriptions, type names, traceback lines, a syntax error and printed output made
of generated text: lone surrogates, NUL, ESC sequences, form feeds, ``]]>``, ``</script>``,
``::error::``, bidi overrides, 1 MB strings. The judge grades three exercises from it, and the
result is rendered in every format: text, JSON (valid against the schema), HTML, JUnit XML
(well-formed), GitHub commands (no forged command at a line start outside a stop-commands
block), Gradescope JSON. None may crash, and none may carry a raw control character. A last test
does the same through a real sandboxed worker and the ``grade`` command line.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.internal.escalation import current_pytest_item
from support import ROOT, SOLUTION, grade, make_submission

import grader
import grader.commands.cli
from grader.judge.engine import grade_exercise
from grader.judge.launch.handle import WorkerHandle
from grader.protocol import wire
from grader.protocol.limits import Limits
from grader.result import report_text
from grader.result.formats import github, gradescope, junit
from grader.result.report_html import render_html
from grader.result.schema import SCHEMA_PATH, GradeResult
from grader.shared.registry import BY_ID
from grader.shared.safetext import cut_note, safe_name, safe_text, safe_value
from grader.shared.version import __version__

SCHEMA = json.loads(SCHEMA_PATH.read_text())
LIMITS = Limits(call_timeout_s=20.0, import_timeout_s=20.0, exercise_budget_s=60.0)
NASTY = [
    "\ud800",
    "\udfff",
    "\ud83d",
    "\x00",
    "\x1b[2J\x1b[31m",
    "\x1b]0;title\x07",
    "\x0c",
    "\r",
    "\r\n",
    "\x85",
    "\x7f",
    "]]>",
    "<![CDATA[",
    "</script>",
    "<script>alert(1)</script>",
    "::error::forged",
    "\n::error file=x.py,line=1::forged",
    "\n::stop-commands::x",
    "%0A::warning::",
    "\u202e",
    "\u200b",
    "\u2066",
    "\u2028",
    "\ufeff",
    "\ufffe",
    "{{ 7 * 7 }}",
    "&amp;",
    "\\x1b",
    "`|*_",
    "\nHint: forged\nExpected: 1\nGot: 2",
]
# Raw characters no output may carry: C0 and C1 controls but tab and newline, DEL, lone
# surrogates, bidi controls, line separators, noncharacters, zero-width characters.
RAW = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069\u2028\u2029\ufffe\uffff"
    "\u200b-\u200d\u2060\ufeff]"
)

pieces = st.one_of(
    st.sampled_from(NASTY),
    st.text(max_size=12),
    st.text(st.characters(categories=["Cc", "Cs", "Cf", "Zl", "Zp", "Co"]), max_size=6),
)
short_texts = st.lists(pieces, max_size=10).map("".join)
huge_texts = st.sampled_from(NASTY + ["a"]).map(lambda s: s * (2**20 // len(s)))  # 1 MB
texts = st.integers(0, 7).flatmap(lambda i: huge_texts if i == 0 else short_texts)


class FakeProcess:
    """Stands for the worker process: always exited, nothing to kill."""

    returncode = 0

    def wait(self, timeout=None):
        return 0

    def kill(self):
        pass


def scripted_worker(tmp: Path, replies, printed: str = "") -> WorkerHandle:
    """A handle whose "worker" is a thread sending "started", then ``replies`` (after the
    first, the last one again for every request); ``None`` in ``replies`` closes the channel."""
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    out = Path(tempfile.mkstemp(dir=tmp, suffix=".out")[1])
    out.write_bytes(printed.encode("utf-8", "surrogatepass"))

    def run():
        try:
            wire.send(rep_w, {"ok": True, "value": "started"})  # set up: the import follows
            queue = list(replies)
            while queue:
                reply = queue.pop(0) if len(queue) > 1 else queue[0]
                if reply is None:
                    return
                wire.send(rep_w, reply)
                wire.recv(req_r)
        except (wire.ChannelClosed, OSError):
            pass
        finally:
            os.close(rep_w)
            os.close(req_r)

    threading.Thread(target=run, daemon=True).start()
    return WorkerHandle(0, req_w, rep_r, out, LIMITS, process=FakeProcess())


def error_info(text: str, refused: bool) -> dict:
    return {
        "type": text[:80] or "ValueError",
        "message": text,
        "frames": [
            {"file": text[:50], "line": 3, "function": text[:30], "code": text},
            {"file": "ex3_1_weight_transfer.py", "line": 7, "function": "f", "code": text},
        ],
        "refused": refused,
    }


def graded(tmp: Path, text: str, refused: bool) -> GradeResult:
    """3.1 fails in every call with ``text``; 4.1's import raises a syntax error made of it;
    4.2's worker prints ``text`` and dies."""
    ready = {"ok": True, "value": "ready"}
    error = {"ok": False, "error": error_info(text, refused)}
    syntax = {
        "ok": False,
        "error": {
            **error_info(text, False),
            "type": "SyntaxError",
            "file": text,
            "line": 2,
            "code": text,
        },
    }
    workers = {
        "3.1": scripted_worker(tmp, [ready, error]),
        "4.1": scripted_worker(tmp, [syntax]),
        "4.2": scripted_worker(tmp, [ready, None], printed=text),
    }
    exercises = []
    for ex_id, worker in workers.items():
        # Inside this @given test, hypothesis formats every failing example of the judge's own
        # hypothesis runs with pytest's repr_failure (parsing the source of each frame): more
        # than half of this test's time. Outside a pytest item it formats them as `grade` does.
        try:
            with current_pytest_item.with_value(None):
                exercises.append(grade_exercise(BY_ID[ex_id], worker, 1, 1, LIMITS))
        finally:
            worker.close()
    return GradeResult(safe_name(text or "s"), 0.0, 30.0, __version__, "t", 1, 0.1, exercises)


def strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in strings(k) + strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def assert_clean(text: str, where: str) -> None:
    found = RAW.search(text)
    assert found is None, f"{where}: raw {found.group()!r} at {found.start()}"
    text.encode("utf-8")  # strict: no surrogate left


def github_lines_outside_blocks(out: str) -> list[str]:
    """The lines of a GitHub log that the runner reads as commands."""
    outside, stop = [], None
    for line in out.split("\n"):
        if stop is not None:
            if line == f"::{stop}::":
                stop = None
            continue
        if m := re.fullmatch(r"::stop-commands::(\w+)", line):
            stop = m.group(1)
            continue
        outside.append(line)
    assert stop is None, "a stop-commands block was never closed"
    return outside


def check_every_output(result: GradeResult, tmp: Path) -> None:
    for s in strings(result.to_dict()):
        assert_clean(s, "the result")

    for verbose in (False, True):
        assert_clean(report_text.render(result, colour=False, verbose=verbose), "text report")
    stream = io.StringIO()
    report_text.write(result, stream)
    assert_clean(stream.getvalue(), "text report")

    doc = json.loads(result.to_json())
    jsonschema.validate(doc, SCHEMA)

    page = render_html(result)
    assert_clean(page, "HTML")
    assert page.count("<script") == 1 and page.count("</script>") == 1

    xml = junit.render(result)
    assert_clean(xml, "JUnit")
    ET.fromstring(xml.encode("utf-8"))  # well-formed

    summary, output = tmp / "summary.md", tmp / "output.txt"
    summary.write_text(""), output.write_text("")
    log = io.StringIO()
    github.emit(
        result, log, env={"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output)}
    )
    assert_clean(log.getvalue(), "GitHub log")
    commands = [line for line in github_lines_outside_blocks(log.getvalue()) if line]
    expected = github.annotations(result)
    assert [c for c in commands if not c.startswith(("::group::", "::endgroup::"))] == expected
    assert all(re.fullmatch(r"::(error|notice)( [^:]*)?::.*", c) for c in expected)
    assert_clean(summary.read_text(encoding="utf-8"), "job summary")
    assert [line.split("=")[0] for line in output.read_text().splitlines()] == [
        "result",
        "score",
        "max_score",
    ]

    results = json.loads(json.dumps(gradescope.results(result), ensure_ascii=False))
    for s in strings(results):
        assert_clean(s, "Gradescope")


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(text=texts, refused=st.booleans())
def test_worker_text_reaches_every_output_safely(text, refused):
    with tempfile.TemporaryDirectory() as tmp:
        result = graded(Path(tmp), text, refused)
        by_id = {e.id: e for e in result.exercises}
        assert by_id["3.1"].status == "failed"
        assert by_id["4.1"].status == "error"
        assert by_id["4.2"].status == "error"
        assert all(len(c.message) <= 20000 for e in result.exercises for c in e.checks)
        check_every_output(result, Path(tmp))


def test_a_1mb_message_is_cut_with_a_note(tmp_path):
    result = graded(tmp_path, "x" * 2**20, False)
    message = result.exercises[0].checks[0].message
    assert len(message) < 4000
    assert re.search(r"… \[1,0\d\d,\d{3} more characters cut\]", message)


@pytest.mark.parametrize(
    "raw, safe",
    [
        ("plain text\twith tab\nand newline", "plain text\twith tab\nand newline"),
        ("a\ud800b", "a\ufffdb"),
        ("\ud83d\ude00", "\U0001f600"),  # a valid pair becomes its character
        ("\x1b[31mred\x00", "\\x1b[31mred\\x00"),
        ("crlf\r\nlone\r", "crlf\nlone\\x0d"),
        ("\u202eevil", "\\u202eevil"),
        ("al\u200bice\u2066x\u2069\u2060\ufeff", "al\\u200bice\\u2066x\\u2069\\u2060\\ufeff"),
        (b"\xffbytes", "\ufffdbytes"),
    ],
)
def test_safe_text(raw, safe):
    assert safe_text(raw) == safe
    assert safe_text(safe) == safe  # idempotent


@given(st.text(st.characters(codec=None)) | short_texts, st.integers(40, 3000))
@settings(max_examples=200, deadline=None)
def test_safe_text_is_safe_capped_and_idempotent(text, limit):
    safe = safe_text(text, limit)
    assert_clean(safe, "safe_text")
    assert len(safe) <= limit
    assert safe_text(safe, limit) == safe


def safe_text_by_the_letter(text: str, limit: int | None) -> str:
    """The docstring of ``grader.shared.safetext`` applied literally, one step after another on the
    whole text: the specification that the fast ``safe_text`` (which works on the head of a
    long text and counts the rest) must match."""
    if not RAW_OR_ESCAPED.search(text) and (limit is None or len(text) <= limit):
        return text
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    text = re.sub(
        ESCAPED,
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}",
        text.replace("\r\n", "\n"),
    )
    if limit is not None and len(text) > limit:
        keep = max(0, limit - len(cut_note(len(text))))
        head = re.sub(r"\\(?:x[0-9a-f]?|u[0-9a-f]{0,3})?\Z", "", text[:keep])
        text = head + cut_note(len(text) - len(head))
    return text


ESCAPED = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufffe\uffff]"
)
RAW_OR_ESCAPED = re.compile(ESCAPED[:-1] + "\ud800-\udfff]")
nasty_runs = st.lists(st.sampled_from(NASTY + ["a", "\ud83d\ude00", "\r"]), max_size=400).map(
    "".join
)


@given(
    st.text(st.characters(codec=None)) | short_texts | nasty_runs, st.none() | st.integers(0, 3000)
)
@settings(max_examples=300, deadline=None)
def test_safe_text_is_the_specification_to_the_letter(text, limit):
    assert safe_text(text, limit) == safe_text_by_the_letter(text, limit)


def test_safe_value_and_names():
    assert safe_value({"k\x1b": ["\ud800", 1, None, ("\x00",)]}) == {
        "k\\x1b": ["\ufffd", 1, None, ("\\x00",)]
    }
    assert safe_name("caf\udcc3x\nname") == "caf\\xc3x name"  # undecodable bytes stay distinct


@pytest.fixture
def nasty_submission(tmp_path):
    source = tmp_path / "ex3_1.py"
    source.write_text(
        "NASTY = 'lone \\ud800 \\x1b[2J \\x00 \\x0c ]]> </script> \\n::error::forged'\n"
        "NASTY += 'x' * 10**6\n"
        "print(NASTY[:3000])\n"
        "def transfer_weights(sa_v2, sa_v1):\n"
        "    raise ValueError(NASTY)\n",
        encoding="utf-8",
    )
    return make_submission(tmp_path / "sub", {"3.1": source}, base=SOLUTION)


def test_a_real_worker_and_the_command_line(nasty_submission, tmp_path, monkeypatch, capsys):
    result = grade(load(nasty_submission), ["3.1", "4.1"], max_examples=2, limits=LIMITS)
    assert [e.status for e in result.exercises] == ["failed", "passed"]
    assert "your code raised ValueError: lone \ufffd \\x1b[2J \\x00" in (
        result.exercises[0].checks[0].message
    )
    check_every_output(result, tmp_path)

    monkeypatch.setattr(grader.commands.cli, "limits_from", lambda args: LIMITS)
    for fmt in ("text", "json", "github", "junit", "gradescope"):
        code = grader.commands.cli.main(
            [
                str(nasty_submission),
                "-e",
                "3.1",
                "-e",
                "4.1",
                "--max-examples",
                "2",
                "--format",
                fmt,
            ]
        )
        out, err = capsys.readouterr()
        assert code == 1, err
        assert_clean(out, fmt)


def load(path):
    from grader.intake.load import load_submission

    return load_submission(path)


ASCII_RUNS = """
import sys
from grader.commands.cli import main
for fmt in ("text", "gradescope", "github", "junit"):
    code = main([sys.argv[1], "-e", "3.1", "--max-examples", "1", "--format", fmt])
    sys.stdout.flush()
    sys.stdout.buffer.write(b"\\0%d\\0" % code)  # a separator no output holds
    sys.stdout.buffer.flush()
"""


def test_an_ascii_terminal_gets_every_format(nasty_submission):
    """The crash of issue 17 was an encoding error on output: any stream must do. (The four
    formats are written by one process, one grade after the other, on the same ASCII stream.)"""
    run = subprocess.run(
        [sys.executable, "-c", ASCII_RUNS, str(nasty_submission)],
        capture_output=True,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "PYTHONIOENCODING": "ascii", "NO_COLOR": "1"},
    )
    parts = run.stdout.split(b"\0")
    assert len(parts) == 9, run.stderr.decode()
    formats = ("text", "gradescope", "github", "junit")
    for fmt, out, code in zip(formats, parts[0:8:2], parts[1:8:2], strict=True):
        assert code == b"1", (fmt, run.stderr.decode())
        out = out.decode("ascii")  # nothing but ASCII came out
        assert "lone" in out
        if fmt == "gradescope":
            assert "lone \ufffd" in json.loads(out)["tests"][0]["output"]


def test_the_side_by_side_of_alike_answers_shows_invisible_characters():
    """Trojan Source in the dashboard: bidi controls and zero-width characters in a student's
    code are spelled out as code points, never obeyed, in plain and matching pieces alike."""
    from grader.classview.insight_view import segments

    code = "if access != 'user\u202e \u2066// admin\u2069 \u2066':\u200b\n    ok()\n"
    pieces = segments(code, [[0, 10, 0], [10, 30, 1]])
    text = "".join(p["text"] for p in pieces)
    for raw in ("\u202e", "\u2066", "\u2069", "\u200b"):
        assert raw not in text
    assert "\\u202e" in text and "\\u2066" in text and "\\u200b" in text


def test_a_zero_width_character_makes_no_second_alice():
    from grader.shared.safetext import safe_name

    assert safe_name("al\u200bice") != safe_name("alice")
    assert safe_name("al\u200bice") == "al\\u200bice"
