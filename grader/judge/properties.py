"""The check harness: a check is a named hypothesis property with points, a hint and a snippet.

``run_check`` runs one check against a worker, derandomized from the grading seed, and turns the
outcome into a ``CheckResult`` carrying the shrunk counterexample and a reproduce snippet.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import example as hypothesis_example
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import FlakyFailure

from grader.judge import causes, differences, hints, replay
from grader.judge.explicit import shrinking
from grader.judge.launch.handle import StudentError, WorkerHandle
from grader.result.schema import GRADER_FAILED, NOT_DONE, STUB_PLACEHOLDER, TAMPERED, CheckResult


def _make_generation_deterministic() -> None:
    """Keep hypothesis from mixing "local constants" into its draws.

    Hypothesis harvests literals from every module it deems local (outside site-packages) and
    caches them under ``./.hypothesis``: the examples drawn would then depend on how the grader
    was installed and the student's folder would get a cache directory. Grading must draw the
    same examples everywhere, so the harvest is switched off.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - another hypothesis layout
        return
    if hasattr(providers, "_get_local_constants") and hasattr(providers, "_local_constants"):
        empty = providers._local_constants
        providers._get_local_constants = lambda: empty


_make_generation_deterministic()


class CheckFailed(AssertionError):
    """The student's answer is wrong on this example; the message says how, in plain words,
    and ``kind`` what kind of failure it is (``grader.judge.hints``), which chooses the hint.
    A check that says a ``StudentError`` in its own words passes the worker's ``info`` on,
    so that the hint can read the exception's evidence (``hints.from_exception``). A check whose
    probe confirmed the cause of the failure in this answer gives it as ``cause``
    (``grader.judge.causes``): it is explained once for all the checks it breaks."""

    def __init__(
        self,
        message: str,
        kind: str = hints.WRONG,
        info: dict | None = None,
        cause: causes.Cause | None = None,
    ):
        super().__init__(message)
        self.kind = kind
        self.info = info
        self.cause = cause


@dataclass(frozen=True)
class Check:
    """One graded behaviour.

    ``run(worker, example)`` raises ``CheckFailed`` (or lets a ``StudentError`` through) when the
    answer is wrong on ``example``; ``reproduce(example)`` returns Python source that shows the
    failure in the student's clone (importing the student's names with ``from exercises.<module>
    import ...``, which ``grader.judge.snippets`` points at the graded file);
    ``counterexample(example)`` its JSON-able description.
    ``hint`` is the check's own hint, for the kinds of failure in ``hint_kinds``; for others
    ``grader.judge.hints`` gives a hint that depends on the kind alone, or none.
    """

    name: str
    points: float
    strategy: st.SearchStrategy
    run: Callable[[WorkerHandle, Any], None]
    hint: str
    reproduce: Callable[[Any], str] | None = None
    counterexample: Callable[[Any], Any] | None = None
    max_examples: int = 20
    examples: tuple[Any, ...] = ()  # always tried first (e.g. the reference's own example)
    hint_kinds: tuple[str, ...] = hints.OWN_KINDS
    known: tuple[hints.Known, ...] = ()  # the pack's hints for known mistakes (``count:<m>``)
    # A declared check written without its ``answer``: the check for the exercise's file
    # (its stem) and the names it asks for, made when the exercise's checks are read
    # (``scoring.checks_for``).
    bind: Callable[[str, tuple[str, ...]], Check] | None = None


def check_seed(seed: int, exercise_id: str, check_name: str) -> int:
    return zlib.crc32(f"{seed}/{exercise_id}/{check_name}".encode())


# What a stub raises: "[Exercise <id> is ]not done yet: ..." (an id as packs.ID allows).
_STUB_SAYS = re.compile(
    r"^\s*(?:exercise\s+[A-Za-z0-9][\w.-]{0,31}\s+is\s+)?not done yet\s*[:.,-]?\s*", re.I
)


def is_shared(frame: dict) -> bool:
    """Whether a frame of the worker's description lies outside the student's files: in code
    every answer may share, which the worker names with its package (``pkg/module.py``),
    where a frame of the student's files is named by the file alone."""
    return "/" in str(frame.get("file", ""))


def is_stub(info: dict) -> bool:
    """Whether the student's code raised ``NotImplementedError`` itself (``raise
    NotImplementedError(...)`` on the line the traceback ends at in their file: a stub, or a part
    not written yet), rather than a library call it made (an operation PyTorch lacks): only the
    former is "not done yet"."""
    frames = info.get("frames") or []
    return (
        info.get("type") == "NotImplementedError"
        and bool(frames)
        and not is_shared(frames[-1])
        and "NotImplementedError" in str(frames[-1].get("code", ""))
    )


def not_done_text(text: str) -> str:
    """The message of an unwritten answer: ``not done yet: `` and what the stub says to do
    (its own "Exercise <id> is not done yet: " left out)."""
    text = _STUB_SAYS.sub("", text)
    return f"{NOT_DONE}: {text}" if text else f"{NOT_DONE} (NotImplementedError)"


def _frame_text(frame: dict) -> str:
    return f"{frame['file']}, line {frame['line']}, in {frame['function']}: {frame['code']}"


def explain_student_error(info: dict) -> str:
    """One readable paragraph for an exception raised in student code: where in the student's
    files (the innermost of their frames), and, when it was raised in shared code they called
    (a class they imported or aliased), that code's line too."""
    kind, text = info.get("type", "Exception"), info.get("message", "")
    if info.get("refused") and not text.startswith((TAMPERED, GRADER_FAILED)):
        return text  # the grader refused a value: the message says what came back, and why
    if is_stub(info):
        return not_done_text(text)
    frames = info.get("frames") or []
    own = [f for f in frames if not is_shared(f)]
    places = [f"in {_frame_text(own[-1])}"] if own else []
    if frames and is_shared(frames[-1]):
        places.append(f"raised in {_frame_text(frames[-1])}")
    where = f" ({'; '.join(places)})" if places else ""
    return f"your code raised {kind}: {text}{where}"


class NotDone(BaseException):  # noqa: N818 - an event, like WorkerLost
    """Student code raised NotImplementedError: a stub. A ``BaseException``, so that it leaves
    hypothesis at once: shrinking an input that no input can pass only costs time."""

    def __init__(self, info: dict):
        super().__init__(info.get("message", ""))
        self.info = info


def not_done(what: str) -> NotDone:
    """The event for an answer that still holds the stub's placeholder (an empty config dict):
    not a wrong answer, an unfinished one. ``what`` says which placeholder."""
    return NotDone({"type": "NotImplementedError", "message": what})


def run_check(
    check: Check, worker: WorkerHandle, exercise_id: str, seed: int, max_examples: int | None
) -> CheckResult:
    """Run ``check`` against ``worker``: hypothesis draws the examples, or, when this process
    saw the check pass before for the same seed, they are replayed (``grader.judge.replay``)."""
    last: dict[str, Any] = {}
    seen: list[Any] = []  # the examples of a hypothesis run, to record when it passes
    limit = max_examples or check.max_examples
    key = replay.key_of(check, exercise_id, seed, limit)
    examples = replay.recorded(check, key)

    def note(example: Any) -> None:
        last["example"] = example
        if examples is None:
            seen.append(copy.deepcopy(example))

    def body(example: Any) -> None:
        note(example)
        try:
            check.run(worker, example)
        except StudentError as exc:
            if is_stub(exc.info):
                raise NotDone(exc.info) from None
            raise

    def failed(
        message: str, kind: str, info: dict | None = None, cause: causes.Cause | None = None
    ) -> CheckResult:
        example = last.get("example")
        counterexample = _jsonable(
            check.counterexample(example) if check.counterexample else example
        )
        hint = (hints.from_exception(info, counterexample) if info else "") or hints.choose(
            kind, message, check.hint, check.hint_kinds, check.known
        )
        if cause is None and info is not None and kind != hints.NOT_DONE:
            cause = causes.from_exception(info, message.partition("\n")[0])
        if cause is not None:  # the hint goes with the cause, said once for its checks
            cause = dataclasses.replace(cause, hint=cause.hint or hint)
        return CheckResult(
            name=check.name,
            points=0.0,
            max_points=check.points,
            passed=False,
            message=f"{message}\nHint: {hint}" if hint and cause is None else message,
            counterexample=counterexample,
            reproduce=check.reproduce(example) if check.reproduce else None,
            cause=cause.as_dict() if cause is not None else None,
        )

    try:
        with torch.no_grad():
            if examples is None:
                _hypothesis_test(check, body, exercise_id, seed, limit)()
                replay.record(check, key, seen)
            elif (diverged := replay.replay(examples, body)) is not None:
                test = replay.answering(body, examples, diverged, note)
                _hypothesis_test(check, test, exercise_id, seed, limit)()
    except CheckFailed as exc:
        return failed(str(exc), exc.kind, exc.info, exc.cause)
    except NotDone as exc:
        return failed(not_done_text(exc.info.get("message", "")), hints.NOT_DONE)
    except StudentError as exc:
        return failed(explain_student_error(exc.info), hints.raised(exc.info), exc.info)
    except FlakyFailure as exc:  # hypothesis ran the failing input again and it passed
        return failed(inconsistent_text(exc), hints.INCONSISTENT)
    return CheckResult(check.name, check.points, check.points, True, "passed")


def inconsistent_text(exc: FlakyFailure) -> str:
    """The message of an answer that failed on an input and passed on the same input when
    hypothesis ran it again (state kept between calls, randomness of its own)."""
    first = exc.exceptions[0] if exc.exceptions else None
    if isinstance(first, StudentError):
        what = explain_student_error(first.info)
    elif isinstance(first, CheckFailed):
        what = str(first)
    else:
        what = f"{type(first).__name__}: {first}"
    return (
        "your code gives different results for the same input: it failed on this input, "
        f"and passed when the grader ran it again on the same input. The first time: {what}"
    )


def _hypothesis_test(
    check: Check, test: Callable[[Any], None], exercise_id: str, seed: int, limit: int
) -> Callable[[], None]:
    """``test`` as a hypothesis property over ``check``'s strategy, explicit examples first
    (one that fails is shrunk: ``grader.judge.explicit``), derandomized from the seed."""
    return shrinking(
        test, lambda t, first: _property(check, t, exercise_id, seed, limit, first), check.examples
    )


def _property(
    check: Check, test: Callable[[Any], None], exercise_id: str, seed: int, limit: int, first: bool
) -> Callable[[], None]:
    def prop(example: Any) -> None:
        test(example)

    for explicit in reversed(check.examples if first else ()):
        prop = hypothesis_example(explicit)(prop)
    prop = settings(
        max_examples=limit,
        database=None,
        deadline=None,
        derandomize=False,
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
    )(hypothesis_seed(check_seed(seed, exercise_id, check.name))(given(check.strategy)(prop)))
    # No example database: the key hypothesis would hash from the test's source is never used.
    prop._hypothesis_internal_database_key = None  # type: ignore[attr-defined]  # hypothesis reads it
    return prop


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, torch.Tensor):
        return tensor_text(value)
    return repr(value)


# --- comparisons and their messages ---------------------------------------------------------

RTOL, ATOL = 1e-4, 1e-5


def tensor_text(t: torch.Tensor, max_items: int = 64) -> str:
    """A tensor in full when small, else its shape and a few values. To show how two tensors
    differ, use ``differences.pair_text``: it shows where they differ, legibly."""
    return differences.tensor_text(t, max_items=max_items)


def expect_tensor(value: Any, what: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise CheckFailed(
            f"{what} should be a tensor, but it is {type(value).__name__}",
            hints.returned(type(value).__name__),
        )
    return value


def filled_dict(value: Any, name: str) -> dict:
    """``value``, the student's ``name``, which must be a dict and no longer the stub's empty
    placeholder (that is "not done yet", not a wrong answer)."""
    if not isinstance(value, dict):
        raise CheckFailed(
            f"{name} should be a dict, but it is a {type(value).__name__}",
            hints.returned(type(value).__name__),
        )
    if not value:
        raise not_done(f"{name} is still empty{STUB_PLACEHOLDER}")
    return value


def assert_close(
    actual: Any, expected: torch.Tensor, what: str, rtol: float = RTOL, atol: float = ATOL
) -> None:
    """Fail with a readable message unless ``actual`` equals ``expected`` up to float noise:
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise (``torch.allclose``)."""
    actual = expect_tensor(actual, what)
    if tuple(actual.shape) != tuple(expected.shape):
        raise CheckFailed(
            f"{what} has shape {tuple(actual.shape)}, expected {tuple(expected.shape)}",
            hints.SHAPE,
        )
    if actual.dtype != expected.dtype:
        actual = actual.to(expected.dtype)
    if not torch.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
        raise CheckFailed(
            f"{what} differs from the expected values "
            f"({differences.largest_text(expected, actual)}).\n"
            + differences.pair_text(expected, actual),
            hints.VALUES,
        )
