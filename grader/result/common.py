"""What every rendering of a result shares: a check's message read apart into its pieces, the
example in plain words, the student file and line a check points at, one check as plain text,
and clipping of runaway text.

Messages are written by the checks and the judge as plain text in one shape: a statement of
what went wrong, optionally ``Expected:``/``Got:`` lines, optionally ``Hint: ...`` and, for a
crashed worker, ``Your code printed (last lines):`` followed by the output.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.result.schema import (
    NOT_DONE,
    STUB_PLACEHOLDER,
    CheckResult,
    ExerciseResult,
    is_tampered,
)
from grader.shared.registry import BY_ID, EXERCISES
from grader.shared.safetext import safe_text

HINT = "\nHint: "
PRINTED = "\nYour code printed (last lines):\n"
NOT_RUN = "not run:"
NOT_SUBMITTED = "not submitted:"

# The names a student defines in each exercise file, in the order a failure most often
# points at (from the registry); a check's annotation goes to the first of them its name or
# message mentions.
ENTRY_POINTS: dict[str, tuple[str, ...]] = {e.id: e.names for e in EXERCISES}

STATUS_LABEL = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "timeout": "timed out",
    "missing": "missing",
}


def status_label(exercise: ExerciseResult) -> str:
    """The exercise's status in words; ``tampered`` for that verdict (status ``error``)."""
    return "tampered" if is_tampered(exercise) else STATUS_LABEL[exercise.status]


# Far more than any check writes; a student's exception message may be anything.
DEFAULT_LIMIT = 8000


@dataclass(frozen=True)
class Message:
    """A check's message read apart; every field but ``text`` may be empty."""

    text: str
    expected: str = ""
    got: str = ""
    hint: str = ""
    printed: str = ""


def parse_message(message: str) -> Message:
    body, _, printed = message.partition(PRINTED)
    body, _, hint = body.partition(HINT)
    text, expected, got = body, "", ""
    match = re.search(r"\nExpected:[ \t]*(.*?)\nGot:[ \t]*(.*)\Z", body, re.S)
    if match:
        text = body[: match.start()]
        expected, got = match.group(1).rstrip(), match.group(2).rstrip()
    return Message(text.strip("\n"), expected, got, hint.strip(), printed.rstrip())


def is_unrun(check: CheckResult) -> bool:
    """A check that never ran because something earlier stopped the exercise."""
    return not check.passed and check.message.startswith(NOT_RUN)


def is_not_done(check: CheckResult) -> bool:
    """A check that failed because the answer is not written yet (a stub)."""
    return not check.passed and check.message.startswith(NOT_DONE)


def not_done(exercise: ExerciseResult) -> tuple[str, int] | None:
    """What the exercise's unfinished checks say, once, and how many they are: the first line
    of their most common message, a stub's own ``NotImplementedError`` text (which says what
    to write) before an empty placeholder's; None when every answer is written."""
    texts = [
        parse_message(c.message).text.partition("\n")[0] for c in exercise.checks if is_not_done(c)
    ]
    if not texts:
        return None
    best = max(texts, key=lambda t: (not t.endswith(STUB_PLACEHOLDER), texts.count(t)))
    return best, len(texts)


def plural(n: int, noun: str) -> str:
    """``1 check``, ``2 checks``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def count_of(n: int, total: int, noun: str) -> str:
    """``0 of 1 exercise``, ``2 of 5 exercises``."""
    return f"{n} of {plural(total, noun)}"


def shared_problem(exercise: ExerciseResult) -> str | None:
    """The one message every check of the exercise carries (a missing file, an import that
    failed), or None when the checks say different things or any of them has an input that
    shows the problem (the same error in every check still has its counterexample, hint and
    snippet to show)."""
    messages = {c.message for c in exercise.checks}
    if exercise.status == "passed" or len(messages) != 1 or any(c.passed for c in exercise.checks):
        return None
    if any(c.counterexample is not None or c.reproduce for c in exercise.checks):
        return None
    return messages.pop()


def value_text(value: Any) -> str:
    """A JSON value in Python's spelling (True, None, 'text'); strings at the top level bare,
    since checks already turn tensors and objects into readable strings."""
    if isinstance(value, str):
        return value
    return _py(value)


def _py(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_py(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    return repr(value)


def example_text(counterexample: Any) -> str:
    """The counterexample on one line: ``d_in=2, d_out=2`` for a dict, else its value."""
    if isinstance(counterexample, dict):
        return ", ".join(f"{k}={value_text(v)}" for k, v in counterexample.items())
    return value_text(counterexample)


def visible(text: str) -> str:
    """``text`` with control characters spelled out (``\\x1b``), so that text from a
    student's code cannot move a terminal's cursor, colour it, or hide in a report. Tabs and
    line feeds stay; a CR LF pair becomes a line feed. The judge already made every string of
    a result safe (``grader.shared.safetext``); this is the same function, for results read from a
    file."""
    return safe_text(text, None)


def clip(text: str, limit: int = DEFAULT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters not shown)"


def student_file(exercise_id: str) -> str:
    """The exercise's file as the student's repository names it."""
    return f"exercises/{BY_ID[exercise_id].filename}"


def display_path(root: Path | None, exercise_id: str) -> str:
    """The student's file as CI tools want it: relative to the working directory (the
    repository they run in), ``/``-separated; the notebook itself for a notebook submission.
    A submission outside the working directory gets ``exercises/<file>``."""
    if root is None:
        return student_file(exercise_id)
    target = root if root.is_file() else root / student_file(exercise_id)
    try:
        relative = Path(os.path.relpath(target)).as_posix()
    except ValueError:  # another drive on Windows
        relative = ".."
    # Outside the working directory the repository-relative name is the best guess.
    return student_file(exercise_id) if relative.startswith("..") else relative


def _traceback_line(message: str, filename: str) -> int | None:
    """The line of the student's file that the last reported traceback frame names."""
    lines = re.findall(rf"\(in {re.escape(filename)}, line (\d+)", message)
    return int(lines[-1]) if lines else None


def entry_point(exercise_id: str, check: CheckResult) -> str | None:
    """The name the check is about: the first of the exercise's names its title mentions, else
    the first its message mentions, else the exercise's first name."""
    names = ENTRY_POINTS.get(exercise_id, ())
    for text in (check.name, check.message):
        found = [(m.start(), n) for n in names if (m := re.search(rf"\b{n}\b", text))]
        if found:
            return min(found)[1]
    return names[0] if names else None


def source_line(exercise_id: str, check: CheckResult, source: str | None) -> int | None:
    """Where in the student's file (``source``, its text) a failed check points: the frame of
    a traceback in the message, else the definition of the name the check is about."""
    from_traceback = _traceback_line(check.message, BY_ID[exercise_id].filename)
    if from_traceback is not None:
        return from_traceback
    name = entry_point(exercise_id, check)
    if source is None or name is None:
        return None
    pattern = rf"^(?:def|class)\s+{name}\b|^{name}\s*(?::[^=]*)?="
    match = re.search(pattern, source, re.M)
    return source[: match.start()].count("\n") + 1 if match else None


def read_source(root: Path | None, exercise_id: str) -> str | None:
    """The text of the student's file under ``root`` (a submission folder), if readable."""
    if root is None:
        return None
    try:
        return (root / student_file(exercise_id)).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def check_text(check: CheckResult, reproduce: bool = True, limit: int = DEFAULT_LIMIT) -> str:
    """One failed check as plain text: what went wrong, the evidence, the hint, the snippet."""
    msg = parse_message(visible(check.message))
    lines = [msg.text]
    if check.cause:  # the cause, with its hint, said with each check (a check stands alone here)
        msg = without_cause(check, msg)
        cause = f"Cause: {visible(check.cause.get('text', ''))}"
        lines = [cause, *([msg.text] if msg.text else [])]
        msg = dataclasses.replace(msg, hint=visible(hint_of(check)))
    if msg.expected or msg.got:
        lines += [labelled("Expected: ", msg.expected), labelled("Got:      ", msg.got)]
    if check.counterexample is not None:
        lines.append(labelled("Counterexample: ", visible(example_text(check.counterexample))))
    if msg.hint:
        lines.append(f"Hint: {msg.hint}")
    if msg.printed:
        lines += ["Your code printed (last lines):", msg.printed]
    if reproduce and check.reproduce:
        lines += ["", "Reproduce it (paste into Python in your clone):", check.reproduce.rstrip()]
    return clip("\n".join(lines), limit)


def without_cause(check: CheckResult, msg: Message) -> Message:
    """``msg``, the message of ``check``, without its first line where that line says the
    check's cause (shown once, above the checks it breaks)."""
    cause = (check.cause or {}).get("text", "")
    if not cause or not msg.text.startswith(visible(cause)):
        return msg
    return dataclasses.replace(msg, text=msg.text[len(visible(cause)) :].strip("\n"))


def hint_of(check: CheckResult) -> str:
    """The hint for a failed check: its cause's, or the one in its own message."""
    if check.cause is not None:
        return str(check.cause.get("hint", ""))
    return parse_message(check.message).hint


def labelled(label: str, value: str) -> str:
    """``label`` then ``value``, its later lines indented under the first."""
    return label + value.replace("\n", "\n" + " " * len(label))


def percent(score: float, max_score: float) -> int:
    """``score`` as a whole percentage of ``max_score``, halves rounded up (57.5 -> 58)."""
    return int(100 * score / max_score + 0.5 + 1e-9) if max_score else 0


def points(value: float) -> str:
    """Points without a trailing ``.0``: 5, 2.5, 0.333."""
    return f"{round(value, 3):g}"


# --- causes that follow from the first --------------------------------------------------------
# How far up the chain of causes a cause sits (``CheckResult.cause["rank"]``, set by the judge,
# ``grader.judge.causes``): a part found to compute something else (PART), an argument ignored
# or a part renamed (ROOT), not the structure the statement asks for (STATEMENT).
PART, ROOT, STATEMENT = 1, 2, 3


def rank_of(cause: Any) -> int:
    """The rank of a check's cause (``CheckResult.cause``), 0 when it has none."""
    rank = cause.get("rank", 0) if isinstance(cause, dict) else 0
    return rank if type(rank) is int else 0


def follows(rank: int, first_rank: int) -> bool:
    """Whether a cause of ``rank`` follows from an exercise's first cause, of ``first_rank``:
    under a root cause (the answer's structure, an argument it ignores) every cause of a lower
    rank is what that root makes of the checks, not a second mistake."""
    return first_rank >= ROOT and rank < first_rank


def cause_key(check: CheckResult) -> str:
    """The key of a failing check's cause, ``""`` when it has none."""
    key = (check.cause or {}).get("key") if not check.passed else None
    return key if isinstance(key, str) else ""


def shown_under(ex: ExerciseResult) -> dict[str, str]:
    """For each cause of ``ex.diagnosis`` (root cause first), the key of the cause it is shown
    under: its own, or the first cause's when it follows from it (``follows``). A report says
    the first cause, and a second one only when it does not follow from the first; the checks
    of a cause that follows are listed under the first."""
    keys = [d["key"] for d in ex.diagnosis if isinstance(d, dict) and isinstance(d.get("key"), str)]
    ranks: dict[str, int] = {}
    for check in ex.checks:
        if (key := cause_key(check)) in keys:
            ranks[key] = max(ranks.get(key, 0), rank_of(check.cause))
    if not keys:
        return {}
    first = keys[0]
    return {k: first if follows(ranks.get(k, 0), ranks.get(first, 0)) else k for k in keys}
