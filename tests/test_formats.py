"""The classroom formats, each checked against its spec on a failing and a passing result (real
grading) and on a hand-made one with every status and hostile text: Gradescope's results.json,
GitHub's workflow commands, job summary and Classroom reporter output, and JUnit XML.

In each: the scores add up to the JSON result's, every check appears once, and the student's
text survives escaping intact without breaking the format."""

from __future__ import annotations

import base64
import io
import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from report_cases import HOSTILE, all_results, edge_result, real_results, solution_tree

from grader.commands.cli import main
from grader.result import formats
from grader.result.common import check_text, student_file
from grader.result.formats import github, gradescope, junit
from grader.result.schema import GradeResult
from grader.shared.registry import BY_ID


@pytest.fixture(params=["passing", "failing", "edge"])
def result(request) -> GradeResult:
    return all_results()[request.param]


def checks_of(result: GradeResult):
    return [(ex, c) for ex in result.exercises for c in ex.checks]


def emitted(fmt: str, result: GradeResult, **options) -> str:
    stream = io.StringIO()
    formats.emit(fmt, result, stream, **options)
    return stream.getvalue()


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown format"):
        formats.emit("csv", edge_result(), io.StringIO())


# --- Gradescope ------------------------------------------------------------------------------

# The results.json format as https://gradescope-autograders.readthedocs.io/en/latest/specs/
# describes it (every key optional; the values each key may take).
OUTPUT_FORMATS = ["text", "simple_format", "html", "md", "ansi"]
VISIBILITY = ["hidden", "after_due_date", "after_published", "visible"]
GRADESCOPE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "output_format": {"enum": OUTPUT_FORMATS},
        "test_output_format": {"enum": OUTPUT_FORMATS},
        "test_name_format": {"enum": OUTPUT_FORMATS},
        "visibility": {"enum": VISIBILITY},
        "stdout_visibility": {"enum": VISIBILITY},
        "extra_data": {"type": "object"},
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "score": {"type": "number"},
                    "max_score": {"type": "number"},
                    "status": {"enum": ["passed", "failed"]},
                    "name": {"type": "string"},
                    "name_format": {"enum": OUTPUT_FORMATS},
                    "number": {"type": "string"},
                    "output": {"type": "string"},
                    "output_format": {"enum": OUTPUT_FORMATS},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "visibility": {"enum": VISIBILITY},
                    "extra_data": {"type": "object"},
                },
            },
        },
        "leaderboard": {"type": "array"},
    },
}


def test_gradescope_follows_the_spec(result):
    doc = json.loads(emitted("gradescope", result))
    jsonschema.validate(doc, GRADESCOPE_SCHEMA)
    assert doc["score"] == result.score
    assert math.isclose(sum(t["score"] for t in doc["tests"]), result.score)
    assert math.isclose(sum(t["max_score"] for t in doc["tests"]), result.max_score)
    pairs = checks_of(result)
    assert [t["name"] for t in doc["tests"]] == [f"{ex.id} {c.name}" for ex, c in pairs]
    assert len({t["number"] for t in doc["tests"]}) == len(pairs)  # each check once
    for test, (_, check) in zip(doc["tests"], pairs, strict=True):
        assert test["status"] == ("passed" if check.passed else "failed")
        assert test["visibility"] == "visible"  # students see their feedback
    assert f"{result.score:g}/{result.max_score:g}" in doc["output"]


def test_gradescope_output_holds_the_students_feedback():
    result = real_results()["failing"]
    doc = gradescope.results(result)
    (test,) = [t for t in doc["tests"] if t["status"] == "failed"]
    (check,) = [c for _, c in checks_of(result) if not c.passed]
    assert "largest difference" in test["output"]
    assert check.reproduce.strip() in test["output"]  # the snippet, verbatim
    edge = json.loads(emitted("gradescope", edge_result()))
    assert HOSTILE.split("\n")[0] in edge["tests"][0]["output"]  # JSON keeps it intact


# --- GitHub ----------------------------------------------------------------------------------


def unescape(text: str) -> str:
    return (
        text.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


def run_commands(log: str) -> list[tuple[str, dict[str, str], str]]:
    """The workflow commands a runner would act on in ``log`` (honouring stop-commands)."""
    found, stopped = [], None
    for line in log.splitlines():
        text = line.strip()
        if stopped is not None:
            if text == f"::{stopped}::":
                stopped = None
            continue
        match = re.match(r"^::([a-z-]+)(?: ([^:]*))?::(.*)$", text)
        if not match:
            continue
        name, props, message = match.groups()
        if name == "stop-commands":
            stopped = message
            continue
        properties = dict(p.split("=", 1) for p in props.split(",")) if props else {}
        found.append((name, {k: unescape(v) for k, v in properties.items()}, unescape(message)))
    return found


@pytest.fixture
def in_repo(tmp_path, monkeypatch) -> Path:
    """A student repository (the solution's files) as the working directory, as in CI."""
    repo = solution_tree(tmp_path / "repo")
    monkeypatch.chdir(repo)
    return repo


def test_github_annotations_point_at_the_students_lines(in_repo):
    result = edge_result()
    log = emitted("github", result, root=Path("."), env={})
    commands = run_commands(log)
    errors = [(props, msg) for name, props, msg in commands if name == "error"]
    # 3.1: two failures; 3.2 (error) and 4.1 (missing): one each; 3.3: the check that timed out
    # (not the one that never ran); 4.2: two failures.
    assert len(errors) == 2 + 1 + 1 + 1 + 2
    hostile_props, hostile_msg = errors[0]
    assert hostile_props["file"] == student_file("3.1")
    assert hostile_props["line"] == "7"  # from the traceback in the message
    assert hostile_props["title"] == "3.1 outputs match, for any d_in: and d_out (0/5)"
    (_, check) = checks_of(result)[0]
    assert hostile_msg == check_text(check, reproduce=False)  # intact after unescaping
    error_32 = errors[2][0]
    assert error_32["file"] == student_file("3.2") and error_32["line"] == "3"
    missing = errors[4][0]
    assert "file" not in missing and missing["title"].startswith("4.1")
    # Lines found from the definitions in the student's file.
    source = (in_repo / student_file("4.2")).read_text().splitlines()
    total_params = [p for p, _ in errors if p["title"].startswith("4.2 total_params")][0]
    assert source[int(total_params["line"]) - 1].startswith("def total_params")
    # No line of a command is broken or injected by the student's text.
    assert not [m for name, _, m in commands if "pwned" in m and name != "error"]
    assert sum("pwned" in m for _, _, m in commands) == 1  # only inside our escaped message
    assert ("notice", {"title": f"grade {result.submission}"}, "Score 17/60") in commands


def test_github_property_and_message_escaping():
    line = github.command(
        "error", "100% done\r\nnext: a, b", file="a,b:c.py", line=3, title="x: y, 50%"
    )
    assert "\n" not in line and "\r" not in line
    assert line == (
        "::error file=a%2Cb%3Ac.py,line=3,title=x%3A y%2C 50%25::100%25 done%0D%0Anext: a, b"
    )


def test_github_classroom_output(result, tmp_path):
    output, summary = tmp_path / "output", tmp_path / "summary"
    output.write_text("earlier=1\n")
    env = {"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
    emitted("github", result, env=env)
    lines = output.read_text().splitlines()
    assert lines[0] == "earlier=1"  # appended, not overwritten
    values = dict(line.split("=", 1) for line in lines[1:])
    doc = json.loads(base64.b64decode(values["result"]))
    assert set(doc) == {"version", "status", "max_score", "tests"} and doc["version"] == 1
    assert doc["max_score"] == result.max_score
    assert math.isclose(sum(t["score"] for t in doc["tests"]), result.score)
    assert values["score"] == f"{result.score:g}"
    pairs = checks_of(result)
    assert [t["name"] for t in doc["tests"]] == [f"{ex.id} {c.name}" for ex, c in pairs]
    keys = {"name", "status", "score", "message", "test_code", "filename", "line_no", "duration"}
    for test, (ex, check) in zip(doc["tests"], pairs, strict=True):
        assert set(test) == keys
        assert test["status"] in ("pass", "fail", "error")
        assert (test["status"] == "pass") == check.passed
        assert test["filename"] == student_file(ex.id)
        assert isinstance(test["line_no"], int) and isinstance(test["duration"], int | float)
    expected = "pass" if result.all_passed else "fail"
    assert doc["status"] == expected


def md_cells(row: str) -> list[str]:
    """The cells of a markdown table row (``\\|`` is an escaped pipe, not a border)."""
    return re.split(r"(?<!\\)\|", row.strip())[1:-1]


def test_github_step_summary_table(result, tmp_path):
    summary = tmp_path / "summary"
    summary.write_text("# earlier step\n")
    emitted("github", result, env={"GITHUB_STEP_SUMMARY": str(summary)})
    text = summary.read_text()
    assert text.startswith("# earlier step\n")
    assert f"Grade: {result.score:g} / {result.max_score:g}" in text
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    header = rows.index("| Exercise | Score | Status |")
    exercise_rows = rows[header + 2 : header + 2 + len(result.exercises)]
    for ex, row in zip(result.exercises, exercise_rows, strict=True):
        cells = md_cells(row)
        assert len(cells) == 3 and cells[0].strip().startswith(ex.id)
        assert cells[1].strip() == f"{ex.score:g} / {ex.max_score:g}"
    for row in rows:
        assert len(md_cells(row)) in (3, 4), row  # no stray pipe from a message
    if "<script>" in HOSTILE and any(HOSTILE in c.message for _, c in checks_of(result)):
        assert "<script>" not in text and "&lt;script&gt;" in text


def test_github_writes_no_files_without_the_variables(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = emitted("github", edge_result(), env={})
    assert list(tmp_path.iterdir()) == [] and "::error" in log


# --- JUnit XML -------------------------------------------------------------------------------

NUMBER = re.compile(r"^\d+(\.\d+)?$")


def test_junit_structure(result, in_repo):
    root = ET.fromstring(emitted("junit", result, root=Path(".")))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [f"{ex.id} {ex.title}" for ex in result.exercises]
    n_failed = sum(not c.passed for _, c in checks_of(result))
    assert root.get("tests") == str(len(checks_of(result)))
    assert root.get("failures") == str(n_failed)
    assert root.find(".//error") is None  # failures, never errors
    for el in root.iter():
        if "time" in el.attrib:
            assert NUMBER.match(el.get("time")), el.get("time")
    total = 0.0
    for suite, ex in zip(suites, result.exercises, strict=True):
        cases = suite.findall("testcase")
        assert [c.get("name") for c in cases] == [c.name for c in ex.checks]  # each check once
        assert suite.get("failures") == str(sum(not c.passed for c in ex.checks))
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert props["score"] == f"{ex.score:g}" and props["status"] == ex.status
        total += float(props["score"])
        for case, check in zip(cases, ex.checks, strict=True):
            assert case.get("file") == student_file(ex.id)
            assert case.get("classname") == "exercises." + BY_ID[ex.id].filename[:-3]
            failures = case.findall("failure")
            assert len(failures) == (0 if check.passed else 1)
            if failures:
                assert failures[0].get("message") and failures[0].get("type")
    assert math.isclose(total, result.score)


def test_junit_keeps_student_text_intact(in_repo):
    result = edge_result()
    xml = emitted("junit", result, root=Path("."))
    assert "<script>" not in xml
    root = ET.fromstring(xml)  # parses despite NUL, ESC and BEL in a message
    first = root.find("testsuite/testcase/failure")
    (_, check) = checks_of(result)[0]
    assert HOSTILE.split("\n")[0] in first.get("message")
    assert first.text == junit.xml_text(check_text(check))
    assert "print('```')" in first.text  # the snippet
    assert root.find("testsuite/testcase").get("line") == "7"
    control = root.findall("testsuite/testcase/failure")[1]
    assert "escape\\x1b[31m" in control.text


# --- through the command line -------------------------------------------------------------------


def test_cli_github_and_html(in_repo, tmp_path, monkeypatch, capsys):
    output = tmp_path / "gh-output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code = main(
        [
            ".",
            "-e",
            "3.1",
            "--max-examples",
            "2",
            "--format",
            "github",
            "--html",
            str(tmp_path / "report.html"),
        ]
    )
    assert code == 0
    assert "::notice title=grade repo::Score 10/10" in capsys.readouterr().out
    assert output.read_text().startswith("result=")
    assert "3.1 · Weight transfer" in (tmp_path / "report.html").read_text()
