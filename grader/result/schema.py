"""The grading result (JSON schema version 1) as dataclasses; every report renders this."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("result.schema.json")
# ``seed`` of a result drawn from the course's grading seed, which students must not see: schema
# version 1 keeps ``seed`` an integer, and a real seed is never negative (``grader.judge.seeds``).
HIDDEN_SEED = -1
COURSE_SEED_TEXT = "course seed"

Status = Literal["passed", "failed", "error", "timeout", "missing"]


@dataclass
class CheckResult:
    name: str
    points: float
    max_points: float
    passed: bool
    message: str
    counterexample: Any = None
    reproduce: str | None = None
    # The cause the evidence in this answer points to, shared by every check it breaks:
    # {"key": what makes two failures one cause, "text": the cause in words, with its evidence,
    # "hint": what to do about it}. The message of a check with a cause holds no hint of its own.
    cause: dict | None = None


@dataclass
class ExerciseResult:
    id: str
    title: str
    score: float
    max_score: float
    status: Status
    checks: list[CheckResult] = field(default_factory=list)
    # The causes of the failing checks, root cause first: [{"key", "cause", "hint", "checks":
    # [names of the checks it breaks]}] (``grader.judge.causes.diagnosis``).
    diagnosis: list[dict] = field(default_factory=list)


@dataclass
class GradeResult:
    submission: str
    score: float
    max_score: float
    grader_version: str
    torch_version: str
    seed: int
    duration_s: float
    exercises: list[ExerciseResult] = field(default_factory=list)
    schema: int = SCHEMA_VERSION

    def to_dict(self) -> dict:
        d = asdict(self)
        # Key order as in DESIGN §6: schema first.
        return {"schema": d.pop("schema"), **d}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False, allow_nan=False)

    @property
    def seed_hidden(self) -> bool:
        """Whether the examples came from the course's grading seed, which is not shown."""
        return self.seed == HIDDEN_SEED

    @property
    def seed_text(self) -> str:
        """``seed 20241``, or ``course seed`` where the number is hidden."""
        return COURSE_SEED_TEXT if self.seed_hidden else f"seed {self.seed}"

    def with_seed_hidden(self) -> GradeResult:
        """The same result for students' eyes: the course's seed replaced by ``HIDDEN_SEED``."""
        return dataclasses.replace(self, seed=HIDDEN_SEED)

    @property
    def all_passed(self) -> bool:
        return all(c.passed for e in self.exercises for c in e.checks) and all(
            e.status == "passed" for e in self.exercises
        )


def from_dict(d: dict) -> GradeResult:
    """Rebuild a result from its JSON form (for renderers fed a saved ``--json`` file)."""
    exercises = [
        ExerciseResult(**{**e, "checks": [CheckResult(**c) for c in e["checks"]]})
        for e in d["exercises"]
    ]
    fields = {k: v for k, v in d.items() if k not in ("exercises", "schema")}
    return GradeResult(**fields, exercises=exercises, schema=d.get("schema", SCHEMA_VERSION))


# --- verdicts that live in the messages (schema 1 has no field for them) --------------------

# An exercise whose worker caught student code rewriting the grader: status "error", no
# points, and every check's message starts with this.
TAMPERED = "tampered: "
# An exercise the grader itself failed on (a bug of ours): status "error", and every check's
# message starts with this.
GRADER_FAILED = "the grader failed on this exercise: "
# An exercise whose pack's own code (a check, its reference) raised: the author's failure, not
# the student's, and a failure of the grade as the grader's is ("your check <file> line N
# raised <Type>: <message>").
CHECK_RAISED = "your check "
# An exercise whose worker could not be started or set up (before the student's file was
# imported): a failure of the grader too, told in its own words.
WORKER_NOT_STARTED = "the grader could not start a worker: "
# A check failed because the answer is not written yet: the student's code raised
# NotImplementedError (a stub), or a value is still the stub's empty placeholder (then the
# message ends with STUB_PLACEHOLDER). Status "failed"; the message starts with this.
NOT_DONE = "not done yet"
STUB_PLACEHOLDER = ", as in the stub"


def _messages(exercise: ExerciseResult | dict) -> list[str]:
    checks = exercise["checks"] if isinstance(exercise, dict) else exercise.checks
    return [c["message"] if isinstance(c, dict) else c.message for c in checks]


def is_tampered(exercise: ExerciseResult | dict) -> bool:
    """Whether the exercise got the ``tampered`` verdict (works on the JSON form too)."""
    return any(m.startswith(TAMPERED) for m in _messages(exercise))


def grader_failed(exercise: ExerciseResult | dict) -> bool:
    """Whether the grader itself, or the pack's own code, failed on the exercise (works on the
    JSON form too)."""
    said = (GRADER_FAILED, WORKER_NOT_STARTED, CHECK_RAISED)
    return any(m.startswith(said) for m in _messages(exercise))
