"""The README's Quick start is two commands, each installing then acting (one grades the
bundled example, one runs the tests), and CI runs the second one verbatim."""

from __future__ import annotations

from support import ROOT


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_two_commands_one_grades_the_example_one_runs_the_tests():
    grade_line, test_line = quick_start_commands()
    for line in (grade_line, test_line):
        assert line.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install")
    assert "grade examples/submission" in grade_line
    assert test_line.endswith("python -m pytest -q")


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert quick_start_commands()[1] in ci
