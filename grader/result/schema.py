"""The grading result (JSON schema version 1) as dataclasses; every report renders this."""

from __future__ import annotations

import dataclasses
import json
import typing
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
# Who decided an exercise's result, and so what it means: ``graded`` (the checks judged the
# student's code, or found nothing to judge: the status says how it went), ``tampered`` (the
# student's code rewrote the grader: no points), ``grader-failed`` (a bug of ours),
# ``check-raised`` (a pack's own code, a check or its reference, raised: the author's bug),
# ``worker-not-started`` (a worker failed before it imported the student's file: the
# installation). The last three are failures of the grade, not of the answer (``grader_failed``:
# ``grade`` exits 2). Every decision reads this field, never a message's words.
Verdict = Literal["graded", "tampered", "grader-failed", "check-raised", "worker-not-started"]
VERDICTS: tuple[Verdict, ...] = typing.get_args(Verdict)
GRADE_FAILURES: frozenset[Verdict] = frozenset(
    {"grader-failed", "check-raised", "worker-not-started"}
)


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
    verdict: Verdict = "graded"


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
    """Rebuild a result from its JSON form (for renderers fed a saved ``--json`` file). A
    result saved before exercises had a ``verdict`` gets the one its messages said
    (``legacy_verdict``)."""
    exercises = [
        ExerciseResult(
            **{**e, "checks": [CheckResult(**c) for c in e["checks"]], "verdict": verdict_of(e)}
        )
        for e in d["exercises"]
    ]
    fields = {k: v for k, v in d.items() if k not in ("exercises", "schema")}
    return GradeResult(**fields, exercises=exercises, schema=d.get("schema", SCHEMA_VERSION))


# --- the words of the verdicts, for people ------------------------------------------------
# Each verdict's messages start with its words, so that a reader sees what happened; no code
# decides from them (the ``verdict`` field says it), except ``legacy_verdict`` reading a result
# saved before the field existed.

# ``tampered``: status "error", no points, and every check's message starts with this.
TAMPERED = "tampered: "
# ``grader-failed``: status "error", and every check's message starts with this.
GRADER_FAILED = "the grader failed on this exercise: "
# ``check-raised``: "your check <file> line N raised <Type>: <message>".
CHECK_RAISED = "your check "
# ``worker-not-started``: told in its own words.
WORKER_NOT_STARTED = "the grader could not start a worker: "
# A check failed because the answer is not written yet: the student's code raised
# NotImplementedError (a stub), or a value is still the stub's empty placeholder (then the
# message ends with STUB_PLACEHOLDER). Status "failed"; the message starts with this.
NOT_DONE = "not done yet"
STUB_PLACEHOLDER = ", as in the stub"

_LEGACY_WORDS: tuple[tuple[str, Verdict], ...] = (
    (TAMPERED, "tampered"),
    (GRADER_FAILED, "grader-failed"),
    (WORKER_NOT_STARTED, "worker-not-started"),
    (CHECK_RAISED, "check-raised"),
)


def legacy_verdict(messages: typing.Iterable[str]) -> Verdict:
    """The verdict of an exercise saved before results had the field, read from its checks'
    messages as the grader of then did (the first words of any message); ``graded`` otherwise.
    Only for old saved results: a result made now carries its verdict."""
    messages = list(messages)
    for words, verdict in _LEGACY_WORDS:
        if any(m.startswith(words) for m in messages):
            return verdict
    return "graded"


def verdict_of(exercise: ExerciseResult | dict) -> Verdict:
    """The exercise's verdict; on the JSON form of a result saved without the field, the one
    its messages said (``legacy_verdict``). An unknown value is ``grader-failed``: a result
    this grader cannot read is not a grade."""
    if isinstance(exercise, ExerciseResult):
        return exercise.verdict
    if "verdict" not in exercise:
        return legacy_verdict(c["message"] for c in exercise["checks"])
    found = exercise["verdict"]
    return found if found in VERDICTS else "grader-failed"


def is_tampered(exercise: ExerciseResult | dict) -> bool:
    """Whether the exercise got the ``tampered`` verdict (works on the JSON form too)."""
    return verdict_of(exercise) == "tampered"


def grader_failed(exercise: ExerciseResult | dict) -> bool:
    """Whether the grader itself, or the pack's own code, failed on the exercise (works on the
    JSON form too)."""
    return verdict_of(exercise) in GRADE_FAILURES
