"""Causes: what the evidence in one answer says went wrong, once for all the checks it breaks.

A check that fails says what it saw; several checks often fail for one reason (a config key the
classes read and the config lacks breaks every check that builds the model; an activation with a
wrong constant breaks every check that compares outputs). A failure may carry a ``Cause``: a
key that tells two failures of one reason apart from two of different reasons, the cause in
words with its evidence, and the hint that goes with it. Where does a cause come from:

- an exception: the same type raised on the same line is one cause (``from_exception``);
- a check's own probe that confirmed the cause in this answer (the first part of a module whose
  output departs from the reference's for the same input, a parameter that holds another's
  weights, one module listed twice): the check raises ``CheckFailed(..., cause=...)``.

``diagnosis`` groups an exercise's failing checks by cause, the cause that breaks the most
checks first (on a tie, the one the first check meets): each is explained once, with the names
of the checks it breaks; those checks' messages keep their evidence and carry no hint of their own.
A failure without a cause keeps its own message and hint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from grader.result.common import PART, ROOT, STATEMENT, follows, rank_of
from grader.result.schema import CheckResult

__all__ = ["PART", "ROOT", "STATEMENT", "Cause", "diagnosis", "from_exception"]


@dataclass(frozen=True)
class Cause:
    """One reason for failures: ``key`` is equal for failures of the same reason; ``text`` says
    the cause with its evidence, in the student's terms; ``hint`` says what to do (may be
    empty: the text can say it all)."""

    key: str
    text: str
    hint: str = ""
    # How far up the chain of causes this one sits: an answer that is not the structure the
    # statement asks for (another class than the one asked for) explains everything the checks
    # find in it (STATEMENT); a probe that found an argument ignored or a part renamed explains
    # the exceptions and differences that follow from it (ROOT), a part found to compute
    # something else explains the checks that compare outputs (PART).
    rank: int = 0

    def as_dict(self) -> dict[str, Any]:
        said: dict[str, Any] = {"key": self.key, "text": self.text, "hint": self.hint}
        return {**said, "rank": self.rank} if self.rank else said


def from_exception(info: dict, text: str, hint: str = "") -> Cause:
    """The cause of a failure in which the answer raised (the worker's ``info``): the exception's
    type and the line it was raised on (the innermost frame, the student's or shared code's),
    said as ``text``."""
    frames = info.get("frames") or []
    where = f"{frames[-1].get('file')}:{frames[-1].get('line')}" if frames else ""
    return Cause(f"raised:{info.get('type', 'Exception')}:{where}", text, hint)


def diagnosis(checks: Sequence[CheckResult]) -> list[dict]:
    """The causes of the failing ``checks``, root cause first (the highest rank, then the one
    that breaks the most checks, then the first met): ``{"key", "cause", "hint", "checks"}``
    each, its text and hint those of the first check it breaks. A cause that follows from the
    first (``grader.result.common.follows``) keeps no hint: what to do is the root's hint, and
    a report lists its checks under the root cause without saying it apart."""
    found: dict[str, dict] = {}
    ranks: dict[str, int] = {}
    for check in checks:
        cause = check.cause if not check.passed else None
        if not cause:
            continue
        entry = found.setdefault(
            cause["key"],
            {"key": cause["key"], "cause": cause["text"], "hint": cause["hint"], "checks": []},
        )
        entry["checks"].append(check.name)
        ranks[cause["key"]] = max(ranks.get(cause["key"], 0), rank_of(cause))
    order = list(found)
    ranked = sorted(
        found.values(),
        key=lambda d: (-ranks[d["key"]], -len(d["checks"]), order.index(d["key"])),
    )
    for entry in ranked[1:]:
        if follows(ranks[entry["key"]], ranks[ranked[0]["key"]]):
            entry["hint"] = ""
    return ranked
