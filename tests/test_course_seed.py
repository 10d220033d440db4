"""Grades that cannot be memorized (issue 18): the public seed and the course's, in ``grade``.

The attack, built from a logged run rather than stored (``seedsupport.make_answers``): an answer
to 4.1 that logs every config it is called with is graded once with the public seed
(``grade -e 4.1 --no-sandbox``); a second answer returns the right counts from a lookup table of
those configs and a wrong formula (no biases) for any other. It gets full marks with the public
seed and less from ``grade`` with ``GRADE_SEED`` (CI), whose number shows in no output a student
reads; workers never see it. Batch and Gradescope: ``test_course_seed_batch.py``.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from seedsupport import COURSE, SCHEMA, grade_json, make_answers, run, score_41
from support import ROOT, SOLUTION

from grader.judge.seeds import PUBLIC_SEED
from grader.result.schema import HIDDEN_SEED


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict[str, Path]:
    return make_answers(tmp_path_factory.mktemp("answers"))


# --- grade: the public seed, GRADE_SEED, --seed -----------------------------------------------


def test_the_lookup_table_gets_full_marks_with_the_public_seed(answers):
    result = grade_json(answers["lookup"], env={"GRADE_SEED": None})
    assert result["seed"] == PUBLIC_SEED
    assert score_41(result) == 10


def test_grade_seed_grades_with_the_course_seed_and_hides_it(answers):
    course = grade_json(answers["lookup"], env={"GRADE_SEED": str(COURSE)})
    assert score_41(course) < 10
    assert course["seed"] == HIDDEN_SEED
    jsonschema.validate(course, SCHEMA)
    # The same seed given with --seed: the same verdicts (and the number shown, it is yours).
    mine = grade_json(answers["lookup"], "--seed", str(COURSE), env={"GRADE_SEED": None})
    assert mine["seed"] == COURSE
    for doc in (course, mine):
        doc.pop("seed"), doc.pop("duration_s")
    assert course == mine


def test_seed_on_the_command_line_wins_over_grade_seed(answers):
    result = grade_json(
        answers["lookup"], "--seed", str(PUBLIC_SEED), env={"GRADE_SEED": str(COURSE)}
    )
    assert result["seed"] == PUBLIC_SEED and score_41(result) == 10


def test_an_empty_grade_seed_is_the_public_seed(answers):
    # ${{ secrets.GRADE_SEED }} of a secret that was never set is the empty string.
    result = grade_json(answers["lookup"], env={"GRADE_SEED": ""})
    assert result["seed"] == PUBLIC_SEED and score_41(result) == 10


def test_no_output_of_a_ci_run_shows_the_course_seed(answers, tmp_path):
    env = {
        "GRADE_SEED": str(COURSE),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    html, saved = tmp_path / "report.html", tmp_path / "result.json"
    github = run(
        str(answers["lookup"]),
        "-e",
        "4.1",
        "--format",
        "github",
        "--html",
        str(html),
        "--json",
        str(saved),
        env=env,
    )
    text = run(str(answers["lookup"]), "-e", "4.1", "-v", env=env)
    junit = run(str(answers["lookup"]), "-e", "4.1", "--format", "junit", env=env)
    for proc in (github, text, junit):
        assert proc.returncode == 1, proc.stderr  # the lookup table fails some check
    outputs = (tmp_path / "output").read_text()
    classroom = base64.b64decode(re.search(r"^result=(.*)$", outputs, re.M).group(1)).decode()
    summary = (tmp_path / "summary.md").read_text()
    seen = {
        "github log": github.stdout + github.stderr,
        "text": text.stdout + text.stderr,
        "junit": junit.stdout + junit.stderr,
        "step summary": summary,
        "classroom result": classroom + outputs,
        "html": html.read_text(),
        "json": saved.read_text(),
    }
    for where, content in seen.items():
        assert str(COURSE) not in content, where
    for where in ("github log", "text", "step summary", "html"):
        assert "course seed" in seen[where], where
    assert json.loads(seen["json"])["seed"] == HIDDEN_SEED


def test_pytest_in_ci_reads_grade_seed_too(answers, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            f"--grade={answers['lookup']}",
            "--grade-exercise",
            "4.1",
            f"--junitxml={tmp_path / 'junit.xml'}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        env={**os.environ, "GRADE_SEED": str(COURSE), "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]  # some check fails
    assert "(course seed)" in proc.stdout
    assert str(COURSE) not in proc.stdout + proc.stderr + (tmp_path / "junit.xml").read_text()


@pytest.mark.parametrize("sandbox", [[], ["--no-sandbox"]], ids=["sandbox", "no-sandbox"])
def test_workers_never_see_grade_seed(answers, sandbox):
    result = grade_json(answers["sniffer"], *sandbox, env={"GRADE_SEED": str(COURSE)})
    assert score_41(result) == 10, json.dumps(result, indent=1)[:3000]
    assert str(COURSE) not in json.dumps(result)


def test_sandboxed_workers_cannot_read_it_from_another_process(answers):
    """The spawn path (--no-sandbox) has no PID namespace: only the sandbox promises this."""
    result = grade_json(
        answers["proc-sniffer"], "--strict-sandbox", env={"GRADE_SEED": str(COURSE)}
    )
    assert score_41(result) == 10, json.dumps(result, indent=1)[:3000]


# --- small pieces ------------------------------------------------------------------------------


def test_choosing_the_seed_of_grade():
    from grader.judge.seeds import SeedError, for_grade

    assert for_grade(None, {}).value == PUBLIC_SEED and not for_grade(None, {}).hidden
    assert for_grade(None, {"GRADE_SEED": " 42 "}) == for_grade(None, {"GRADE_SEED": "42"})
    course = for_grade(None, {"GRADE_SEED": "42"})
    assert (course.value, course.source, course.hidden) == (42, "GRADE_SEED", True)
    assert not for_grade(None, {"GRADE_SEED": str(PUBLIC_SEED)}).hidden  # nothing to hide
    assert for_grade(7, {"GRADE_SEED": "42"}).value == 7 and not for_grade(7, {}).hidden
    for bad in ("x42", "-1", "1.5", str(2**63)):
        with pytest.raises(SeedError) as info:
            for_grade(None, {"GRADE_SEED": bad})
        assert bad not in str(info.value)  # a secret is never echoed


def test_the_worker_environment_leaves_grade_seed_out():
    from grader.protocol.boot import worker_environment

    env = worker_environment("/tmp/home", {"GRADE_SEED": "42", "PATH": "/bin", "LANG": "C"})
    assert "GRADE_SEED" not in env and env["PATH"] == "/bin"


def test_seeds_are_whole_numbers_from_zero(tmp_path):
    from grader.batch.config import ConfigError, read_config

    for text, needle in (("seed = -1", "at least 0"), (f"seed = {2**63 - 1}", None)):
        (tmp_path / "grading.toml").write_text(text + "\n")
        if needle is None:
            assert read_config(tmp_path / "grading.toml")["seed"] == 2**63 - 1
        else:
            with pytest.raises(ConfigError, match=needle):
                read_config(tmp_path / "grading.toml")
    proc = run(str(SOLUTION), "--seed", "-1")
    assert proc.returncode == 2 and "must be a whole number from 0" in proc.stderr


def test_every_renderer_says_course_seed_for_a_hidden_seed():
    from report_cases import edge_result

    from grader.result import report_text
    from grader.result.formats import github, gradescope, junit
    from grader.result.report_html import render_html

    hidden = edge_result().with_seed_hidden()
    assert hidden.seed_hidden and hidden.seed_text == "course seed"
    jsonschema.validate(hidden.to_dict(), SCHEMA)
    assert "course seed" in report_text.render(hidden)
    assert "course seed" in github.summary_markdown(hidden)
    assert gradescope.results(hidden)["extra_data"]["seed"] == "course seed"
    assert "course seed" in gradescope.results(hidden)["output"]
    assert "course seed" in render_html(hidden)
    assert str(HIDDEN_SEED) not in junit.render(hidden)
