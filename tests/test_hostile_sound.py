"""Checks read the truth (docs/sandbox.md, "Checks read the truth"): a wrong answer that lies
about its own state (a module's ``state_dict``, ``nn.Parameter.requires_grad``, the reference's
config rebound to a saved copy) gets no more points than the same wrong answer without the lie,
and no accusation. Each lie is one file of ``tests/hostile/lie_*.py`` (graded through the
command line with the rest of the hostile corpus in tests/test_sandbox_hostile.py); its twin
here is the same file with the lines marked ``# the lie`` taken out."""

from __future__ import annotations

import pytest
from support import ROOT, grade_folder, make_submission

from grader.shared.registry import BY_ID

HOSTILE = ROOT / "tests" / "hostile"
LIES = sorted(HOSTILE.glob("lie_*.py"))


def exercise_of(text: str) -> str:
    return next(line.split(":")[1].strip() for line in text.splitlines() if "# exercise:" in line)


def without_the_lie(text: str) -> str:
    kept = [line for line in text.splitlines() if not line.rstrip().endswith("# the lie")]
    assert len(kept) < len(text.splitlines())
    return "\n".join(kept) + "\n"


def graded(tmp_path, name: str, text: str, exercise: str):
    source = tmp_path / BY_ID[exercise].filename
    source.write_text(text, encoding="utf-8")
    folder = make_submission(tmp_path / name, {exercise: source})
    (result,) = grade_folder(folder, [exercise], seed=4242).exercises
    return result


def test_the_lies_are_there():
    assert {p.stem for p in LIES} >= {
        "lie_sa_v2_state_dict",
        "lie_state_dict_by_thread",
        "lie_requires_grad_property",
        "lie_base_config_rebound",
        "lie_config_alias_rebound",
    }


@pytest.mark.parametrize("case", LIES, ids=lambda p: p.stem)
def test_a_lie_earns_nothing(case, tmp_path):
    text = case.read_text(encoding="utf-8")
    exercise = exercise_of(text)
    tricked = graded(tmp_path, "tricked", text, exercise)
    honest = graded(tmp_path, "honest", without_the_lie(text), exercise)
    assert honest.status == "failed" and honest.score < honest.max_score
    assert tricked.status == "failed", [c.message for c in tricked.checks]
    assert tricked.score <= honest.score
    assert [c.passed for c in tricked.checks] == [c.passed for c in honest.checks]
    assert not any("tampered" in c.message for c in tricked.checks)
