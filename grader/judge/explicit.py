"""Explicit examples that fail are shrunk too.

A check's ``examples`` (the statement's own case, say) are tried first, and hypothesis never
shrinks them: a student would see a large counterexample. ``shrinking`` runs the check as usual;
when the example that failed is one of the explicit ones, it runs the check's search again
without them (drawn examples only, shrunk as usual, from the same seed) and reports the
smaller failure that search finds. When the search finds none (an explicit example catches a
mistake that drawn ones miss), the explicit failure is reported as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from grader.judge.launch.handle import StudentError


def _among(example: Any, explicit: Sequence[Any]) -> bool:
    for one in explicit:
        try:
            if one is example or bool(one == example):
                return True
        except Exception:  # values that do not compare (tensors of other shapes)
            continue
    return False


def _a_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is an answer's failure on one example (a check's ``CheckFailed``, an
    ``AssertionError``, or the student's code raising), not an event that ends the grade."""
    return isinstance(exc, AssertionError | StudentError)


def shrinking(
    test: Callable[[Any], None],
    build: Callable[[Callable[[Any], None], bool], Callable[[], None]],
    explicit: Sequence[Any],
) -> Callable[[], None]:
    """The property ``build(recording_test, with_explicit)`` returns, run with the explicit
    examples; if one of them fails, the failure of the property built without them when it
    fails too, else the explicit one (run once more, so that the caller's last example is the
    one reported)."""
    last: dict[str, Any] = {}

    def recording(example: Any) -> None:
        last["example"] = example
        test(example)

    def run() -> None:
        try:
            build(recording, True)()
        except Exception as failure:
            if not explicit or not _a_failure(failure) or not _among(last.get("example"), explicit):
                raise
            failing = last["example"]
            try:
                build(recording, False)()
            except Exception as smaller:
                if _a_failure(smaller):
                    raise smaller from None
            try:
                test(failing)
            except Exception:
                pass
            raise failure from None

    return run
