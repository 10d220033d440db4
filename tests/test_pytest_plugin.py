"""The pytest front end: one item per check with the same verdicts as ``grade``, and nothing at
all unless asked (the plugin is installed in every environment that has the grader)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support import CORPUS, ROOT, make_submission

from grader.judge.scoring import checks_for
from grader.shared.registry import BY_ID, EXERCISES

FAST = "4"


def pytest_run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


def grade_json(path: Path, *args: str) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", str(path), "--format", "json", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    return proc.returncode, json.loads(proc.stdout)


def junit_verdicts(xml_file: Path) -> dict[tuple[str, str], bool]:
    """``(exercise id, check name) -> passed`` from a JUnit XML report (the class name of
    each test case comes from its exercise file)."""
    verdicts = {}
    for case in ET.parse(xml_file).getroot().iter("testcase"):
        (ex,) = [e for e in EXERCISES if e.filename[:-3] in case.get("classname")]
        failed = case.find("failure") is not None or case.find("error") is not None
        verdicts[ex.id, case.get("name")] = not failed
    return verdicts


@pytest.fixture(scope="module")
def mixed_submission(tmp_path_factory) -> Path:
    """3.1 wrong (a corpus case), 3.2 and 4.1 right, 3.3 and 4.2 still the stubs, 4.3 missing."""
    return make_submission(
        tmp_path_factory.mktemp("mixed"),
        {
            "3.1": CORPUS / "ex3_1" / "wrong_reshape_not_transpose.py",
            "3.3": ROOT / "exercises" / BY_ID["3.3"].filename,
            "4.2": ROOT / "exercises" / BY_ID["4.2"].filename,
            "4.3": None,
        },
    )


def test_pytest_gives_the_same_verdict_per_check_as_grade(mixed_submission, tmp_path):
    xml = tmp_path / "junit.xml"
    proc = pytest_run(
        tmp_path,
        f"--grade={mixed_submission}",
        "--grade-max-examples",
        FAST,
        f"--junitxml={xml}",
        "-q",
    )
    code, doc = grade_json(mixed_submission, "--max-examples", FAST)
    expected = {(e["id"], c["name"]): c["passed"] for e in doc["exercises"] for c in e["checks"]}
    assert len(expected) == sum(len(checks_for(e)) for e in EXERCISES)
    assert junit_verdicts(xml) == expected
    assert set(expected.values()) == {True, False}  # really mixed
    assert code == proc.returncode == 1, proc.stdout[-2000:]
    assert f"Score: {doc['score']:g}/{doc['max_score']:g}" in proc.stdout


def test_a_failing_item_shows_the_graders_evidence(mixed_submission, tmp_path):
    proc = pytest_run(
        tmp_path,
        f"--grade={mixed_submission}",
        "--grade-exercise",
        "3.1",
        "--grade-max-examples",
        FAST,
    )
    assert "Counterexample:" in proc.stdout and "transfer_weights(sa_v2, sa_v1)" in proc.stdout
    assert "Hint:" in proc.stdout


def test_items_are_named_after_the_exercise_file_and_the_check(mixed_submission):
    proc = pytest_run(mixed_submission, "--grade", "--grade-exercise", "3.1", "--co", "-q")
    listed = [ln for ln in proc.stdout.splitlines() if "::" in ln]
    assert listed == [
        f"exercises/{BY_ID['3.1'].filename}::{c.name}" for c in checks_for(BY_ID["3.1"])
    ]


def test_deselected_exercises_are_not_graded(mixed_submission, tmp_path):
    proc = pytest_run(
        tmp_path,
        f"--grade={mixed_submission}",
        *[a for i in ("3.1", "4.1", "4.2") for a in ("--grade-exercise", i)],
        "--grade-max-examples",
        FAST,
        "-k",
        "feedforward_params or attention_params",
        "-q",
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
    summary = proc.stdout.split("= grade =")[-1]
    graded = {line.split()[0] for line in summary.splitlines() if re.match(r"\d\.\d  ", line)}
    assert graded == {"4.1"}, summary  # (not "3.1" in summary: "in 3.13s" would match)


def test_the_ini_option_turns_it_on(mixed_submission, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.pytest.ini_options]\ngrade_path = "{mixed_submission.as_posix()}"\n'
    )
    proc = pytest_run(tmp_path, "--co", "-q", "--grade-exercise", "4.1")
    assert f"{len(checks_for(BY_ID['4.1']))} tests collected" in proc.stdout, proc.stdout


def test_inert_unless_asked(tmp_path):
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    proc = pytest_run(tmp_path, "--co", "-q")
    assert "1 test collected" in proc.stdout, proc.stdout
    assert "--grade" in pytest_run(tmp_path, "--help").stdout  # the plugin is loaded


def test_a_bad_path_is_a_usage_error(tmp_path):
    proc = pytest_run(tmp_path, "--grade=no/such/folder")
    assert proc.returncode == 4 and "no such file or folder" in proc.stderr
