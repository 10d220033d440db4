"""What the class got wrong: each check's failing submissions, grouped by the kind of failure.

Two failures are of the same kind when their messages have the same shape (the first line of
the message with every number and tensor size taken out; for an exception, its type and its
message so abstracted, never the student's line of code that raised it), and
their counterexamples are of the same kind (the same keys, and the same values of the keys
that are flags or names rather than sizes). Groups are sorted largest first; each keeps a
count, an example (the first submission by name), the hint it received and the students in it:
the message's ``Hint:``, or, where the hint belongs to the failure's cause (a cause's hint is
shown once, under the cause, not in each message), the cause's hint, read from the example's
result file.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.result.schema import NOT_DONE

HINT = "\nHint: "
NUMBER = re.compile(r"(?<![\w.-])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w)")
DIMENSIONS = re.compile(r"\b\d+(?:x\d+)+\b")  # 1x1, 3x4x5 in torch's messages
WHERE = re.compile(r" \(in [^()]*, line \d+, in [^:()]*: .*\)$")  # explain_student_error's frame
RAISED = re.compile(r"raised (\w+(?:\.\w+)*)(?:: (.*))?$")


@dataclass
class Group:
    exercise_id: str
    check: str
    position: int
    kind: str  # the message's shape, e.g. "returned N, but ... has N trainable parameters"
    exception: str  # the exception's type, '' when the check failed without one
    counterexample_kind: str
    members: list[str] = field(default_factory=list)
    example_message: str = ""
    hint: str = ""
    counterexample: Any = None
    rank: int = 0

    @property
    def count(self) -> int:
        return len(self.members)

    @property
    def example(self) -> str:
        return self.members[0] if self.members else ""


def split_hint(message: str) -> tuple[str, str]:
    """``(what went wrong, the hint)`` of a check's message."""
    body, _, hint = message.partition(HINT)
    return body, hint.strip()


def _abstract(text: str) -> str:
    text = DIMENSIONS.sub("NxN", text)
    return NUMBER.sub("N", text)


def message_kind(message: str) -> tuple[str, str]:
    """``(shape, exception type)`` of a failure message (its hint aside)."""
    body, _ = split_hint(message)
    first = (body.strip().splitlines() or [""])[0].strip()
    if first.startswith(NOT_DONE):
        return NOT_DONE, "NotImplementedError"
    first = WHERE.sub("", first)
    raised = RAISED.search(first)
    if raised is None:
        return _abstract(first), ""
    exception, detail = raised.group(1), raised.group(2) or ""
    detail = _abstract(detail)[:160]
    shape = _abstract(first[: raised.start()]) + f"raised {exception}"
    return shape + (f": {detail}" if detail else ""), exception


def counterexample_kind(value: Any) -> str:
    """The keys of a counterexample and its flag-like values (sizes and seeds left out)."""
    if isinstance(value, dict):
        parts = []
        for key in sorted(value):
            v = value[key]
            if isinstance(v, bool | str) or v is None:
                parts.append(f"{key}={json.dumps(v)}")
            else:
                parts.append(str(key))
        return "{" + ", ".join(parts) + "}"
    if value is None:
        return ""
    if isinstance(value, bool | str):
        return json.dumps(value)
    return type(value).__name__


def _results_folder(db: sqlite3.Connection) -> Path | None:
    """The folder of the gradebook's file (its result paths are relative to it); None in
    memory."""
    main = [row[2] for row in db.execute("PRAGMA database_list") if row[1] == "main"]
    return Path(main[0]).parent if main and main[0] else None


def cause_hint(db: sqlite3.Connection, submission: str, exercise_id: str, check: str) -> str:
    """The hint of the cause of ``submission``'s failed ``check``, from its result file; ""
    when it has none (or the file cannot be read)."""
    folder = _results_folder(db)
    row = db.execute("SELECT result_path FROM submissions WHERE name = ?", (submission,)).fetchone()
    if folder is None or row is None:
        return ""
    try:
        result = json.loads((folder / row[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    for exercise in result.get("exercises", []):
        for c in exercise.get("checks", []) if exercise.get("id") == exercise_id else []:
            if c.get("name") == check and not c.get("passed") and c.get("cause"):
                return str(c["cause"].get("hint") or "")
    return ""


def failure_groups(db: sqlite3.Connection) -> list[Group]:
    """Every failing check of every graded submission, grouped (largest group first within
    each check; checks in exercise and position order)."""
    rows = db.execute(
        """
        SELECT c.exercise_id, c.name, c.position, c.submission, c.message, c.counterexample
        FROM checks AS c JOIN submissions AS s ON s.name = c.submission
        WHERE s.graded AND NOT c.passed
        ORDER BY c.exercise_id, c.position, c.name, c.submission
        """
    ).fetchall()
    groups: dict[tuple, Group] = {}
    position: dict[tuple[str, str], int] = defaultdict(lambda: 1 << 30)
    for exercise_id, check, pos, submission, message, counterexample in rows:
        try:
            ce = json.loads(counterexample) if counterexample else None
        except ValueError:
            ce = counterexample
        kind, exception = message_kind(message)
        key = (exercise_id, check, kind, exception, counterexample_kind(ce))
        position[(exercise_id, check)] = min(position[(exercise_id, check)], pos)
        group = groups.get(key)
        if group is None:
            body, hint = split_hint(message)
            group = groups[key] = Group(
                exercise_id,
                check,
                pos,
                kind,
                exception,
                key[4],
                example_message=body.strip(),
                hint=hint,
                counterexample=ce,
            )
        group.members.append(submission)
    by_check: dict[tuple[str, str], list[Group]] = defaultdict(list)
    for group in groups.values():
        group.position = position[(group.exercise_id, group.check)]
        by_check[(group.exercise_id, group.check)].append(group)
    out: list[Group] = []
    for exercise_check in sorted(by_check, key=lambda k: (k[0], position[k], k[1])):
        ranked = sorted(
            by_check[exercise_check], key=lambda g: (-g.count, g.kind, g.counterexample_kind)
        )
        for rank, group in enumerate(ranked, start=1):
            group.rank = rank
            if not group.hint:
                group.hint = cause_hint(db, group.example, group.exercise_id, group.check)
            out.append(group)
    return out
