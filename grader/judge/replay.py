"""A check's examples, drawn by hypothesis once per judge process and replayed after that.

For one seed, hypothesis draws a check's examples from the seed and from the outcomes of the
examples before; the test body never talks to hypothesis (no ``assume``, ``note`` or
``data.draw`` in the checks). While every example passes the outcomes are all the same, so
every answer that passes a check is given the same examples, in the same order. A judge that
grades many answers (a batch, a notebook's later checks, ``--watch``) records that sequence the
first time the check passes (``record``), and for the next answer runs the test body on the
recorded examples directly (``replay``), without hypothesis's engine: the worker gets exactly
the calls a hypothesis run would send it.

When a replayed example fails (the ``index``-th), hypothesis runs after all, to shrink it. Its
first ``index + 1`` examples are the replayed ones (so far the outcomes are the same), so
``answering`` gives hypothesis the outcomes the worker already gave (passes, then the same
failure) instead of calling the worker again: the worker sees the same sequence of calls as in a
plain hypothesis run, even when student code keeps state between calls. Results, messages and
counterexamples are those of a plain run (tests/test_replay.py compares the two).

Hypothesis seeds the global generators (``random``, numpy's, its own) around each example it
runs. A replay does not: no check draws from them (the checks seed torch's generator from the
example, ``grader.shared.torchseed``), so their state cannot change an outcome, while seeding
and restoring them costs about 90 microseconds an example, some 250 examples a submission.
tests/test_replay.py holds the checks to that.
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grader.judge import memo

ENTRIES = 512  # recorded runs kept (about 30 checks a seed; a few hundred bytes each)
PLAIN = (type(None), bool, int, float, str)

enabled = True  # tests turn it off to compare with plain hypothesis runs
# key -> (what draws the check's examples, the examples): kept and compared by identity, so that
# a check made anew under the same name (as tests do) never gets another's examples, while the
# same check with the course's weights (``dataclasses.replace``: new points) does
_recorded: OrderedDict[tuple, tuple[tuple, list[Any]]] = OrderedDict()
_new: list[tuple] = []  # the keys recorded since ``since_fork`` (a forked judge's own)
memo.on_forget(_recorded.clear)
memo.on_forget(_new.clear)


@dataclass
class Diverged:
    """The first recorded example that failed this time, and how it failed."""

    index: int
    error: Exception


def key_of(check: Any, exercise_id: str, seed: int, max_examples: int) -> tuple:
    return (check.name, exercise_id, seed, max_examples)


def _drawn_by(check: Any) -> tuple:
    """What decides a check's examples and their outcomes (its points do not)."""
    return (check.strategy, check.examples, check.run)


def _same(a: tuple, b: tuple) -> bool:
    return all(x is y for x, y in zip(a, b, strict=True))


def is_plain(value: Any) -> bool:
    """Whether ``value`` is JSON-like data, which a deep copy reproduces exactly."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_plain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(is_plain(v) for v in value)
    return type(value) in PLAIN


def recorded(check: Any, key: tuple) -> list[Any] | None:
    """The examples of ``check``'s last passing run under ``key``, or None."""
    if not enabled or key not in _recorded or not _same(_recorded[key][0], _drawn_by(check)):
        return None
    _recorded.move_to_end(key)
    return _recorded[key][1]


def record(check: Any, key: tuple, examples: list[Any]) -> None:
    """Keep the examples of a run of ``check`` that passed (only plain data: a copy must equal
    the draw)."""
    if not enabled or not all(is_plain(ex) for ex in examples):
        return
    _recorded[key] = (_drawn_by(check), examples)
    _new.append(key)
    if len(_recorded) > ENTRIES:
        _recorded.popitem(last=False)


# --- forked judge processes (grader.judge.parallel) hand their recordings to their parent ---


def since_fork() -> None:
    """In a forked judge process: from now on, what is recorded is this process's own."""
    _new.clear()


def exported() -> list[dict]:
    """The runs recorded since ``since_fork``, as JSON; only those JSON gives back exactly
    (no tuples, no NaN: a replayed example must equal the one hypothesis would draw)."""
    out = []
    for key in dict.fromkeys(_new):
        if key in _recorded:
            examples = _recorded[key][1]
            if json.loads(json.dumps(examples)) == examples:
                out.append({"key": list(key), "examples": examples})
    return out


def adopt(runs: list[dict], check_named: Callable[[str, str], Any]) -> None:
    """Record the runs a forked judge process ``exported``; ``check_named(exercise_id, name)``
    gives the check (this process's own object) or None."""
    for run in runs:
        try:
            name, exercise_id, seed, limit = run["key"]
            check, examples = check_named(exercise_id, name), list(run["examples"])
        except (KeyError, TypeError, ValueError):  # never lose the results for a recording
            continue
        if check is not None:
            record(check, key_of(check, exercise_id, seed, limit), examples)


def fresh_copy(value: Any) -> Any:
    """A copy of a recorded example (plain data, ``is_plain``) that the check may change
    freely: what ``copy.deepcopy`` gives, without its bookkeeping (a few times faster)."""
    kind = type(value)
    if kind is dict:
        return {k: fresh_copy(v) for k, v in value.items()}
    if kind is list:
        return [fresh_copy(v) for v in value]
    if kind is tuple:
        return tuple(fresh_copy(v) for v in value)
    if kind in PLAIN:
        return value
    return copy.deepcopy(value)  # a subclass of dict, list or tuple keeps its type


def replay(examples: list[Any], body: Callable[[Any], None]) -> Diverged | None:
    """Run ``body`` on a fresh copy of each example in turn; the first failure, if any.
    A ``BaseException`` (the worker lost, a stub) leaves at once, as it leaves hypothesis."""
    for i, example in enumerate(examples):
        try:
            body(fresh_copy(example))
        except Exception as error:  # noqa: BLE001 - the check's verdict, handed to hypothesis
            return Diverged(i, error)
    return None


def answering(
    body: Callable[[Any], None],
    examples: list[Any],
    diverged: Diverged,
    seen: Callable[[Any], None],
) -> Callable[[Any], None]:
    """``body`` for hypothesis's run after a replay failed: its first calls, on the replayed
    examples, get the outcomes the worker gave (``seen`` is told of each example); later calls
    run ``body``. An example other than the recorded one (never, while hypothesis draws as it
    did) ends the answering: from there on ``body`` runs."""
    answered = [0]

    def test(example: Any) -> None:
        i = answered[0]
        if i <= diverged.index:
            answered[0] += 1
            if example == examples[i]:
                seen(example)
                if i < diverged.index:
                    return
                raise diverged.error
            answered[0] = diverged.index + 1
        body(example)

    return test
