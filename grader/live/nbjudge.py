"""The judge behind ``grader.check`` in a notebook: a long-lived process of its own.

A notebook's kernel (``grader.live.nbcheck``) starts it once, with the kernel's interpreter but
fresh (``python -I``): nothing the notebook's cells did to ``torch``, a pack's reference or
``grader`` in the kernel exists here. It starts the sandbox's warm fork server, imports torch
and the checks while that server does the same, and then answers requests for the kernel's
lifetime, one JSON line each way (plain data only, never pickles):

    request: {"id": int, "inputs": [str, ...], "exercises": [str, ...] | null,
              "name": str, "seed": int | null, "max_examples": int | null}
    reply:   {"id": int, "result": <the schema-1 result>, "notes": [str, ...], "said": str}
           | {"id": int, "error": str}

``inputs`` is the kernel's input history (``inputs[n]`` ran as ``In [n]``). It is read, never
run, by ``grader.intake.notebook`` into exercise files, which ``grader.pipeline.finish`` grades
in sandboxed workers exactly as ``grade`` grades a notebook (same checks, same seed handling:
the public seed unless ``seed`` or ``GRADE_SEED`` says otherwise); an exercise whose file is the
same as at an earlier check gets that check's result (``Verdicts``). ``said`` is what the
grader wrote to stderr meanwhile (e.g. sandbox layers that are off here).

Requests come on stdin; replies go out on what was stdout when the process started, and
stdout itself then points at stderr, so that nothing printed by a library can break a reply.
The process exits when its stdin closes (the kernel exited, or closed it), and the fork server
with it (``grader.judge.launch.starter`` closes it at exit).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from grader.shared.safetext import one_line

if TYPE_CHECKING:
    from grader.intake.submission import Submission
    from grader.result.schema import ExerciseResult, GradeResult

NAME = "notebook"  # the submission's name when the kernel knows no better


def reply_channel() -> TextIO:
    """The stream replies go out on: the original stdout, which now points at stderr."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    return channel


class Verdicts:
    """The exercises this process has graded, by what decided their result: the exercise file's
    text, the seed and the number of examples. Grading is deterministic (DESIGN §5.4), so code
    that has not changed since its last check (every exercise but one, in a ``check_all``
    after ``check``s) gets its result again without being run again. Only ``passed`` and
    ``failed`` are kept: a timeout or a lost worker may go otherwise next time."""

    KEPT = ("passed", "failed")
    SIZE = 64

    def __init__(self) -> None:
        self.kept: dict[tuple, ExerciseResult] = {}
        self.last: GradeResult | None = None  # the last result graded here (its versions)

    @staticmethod
    def key(exercise_id: str, submission: Submission, seed: int, max_examples) -> tuple | None:
        path = submission.files.get(exercise_id)
        if path is None:
            return None
        return exercise_id, hashlib.sha256(path.read_bytes()).hexdigest(), seed, max_examples

    def keep(self, key: tuple | None, result: ExerciseResult) -> None:
        if key is not None and result.status in self.KEPT:
            self.kept.pop(key, None)
            self.kept[key] = result
            while len(self.kept) > self.SIZE:
                self.kept.pop(next(iter(self.kept)))


def answer(request: dict[str, Any], start, verdicts: Verdicts) -> dict[str, Any]:
    """Grade the exercises ``request`` names from its inputs; the reply (without ``id``)."""
    from grader import pipeline
    from grader.judge.seeds import for_grade
    from grader.shared.registry import select

    try:
        chosen = [e.id for e in select(request.get("exercises") or None)]
    except KeyError as exc:
        return {"error": f"unknown exercise {exc.args[0]!r}"}
    seed = for_grade(request.get("seed"))
    max_examples = request.get("max_examples")
    name = str(request.get("name") or NAME)
    inputs = [str(text) for text in request.get("inputs") or []]
    began = time.monotonic()
    submission = pipeline.open_cells(inputs, name)
    keys = {i: verdicts.key(i, submission, seed.value, max_examples) for i in chosen}
    done = {i: verdicts.kept[k] for i, k in keys.items() if k in verdicts.kept}
    todo = [i for i in chosen if i not in done]
    ask = pipeline.Request(seed=seed, exercises=todo, max_examples=max_examples, start=start)
    if todo:
        verdicts.last = pipeline.finish(submission, ask)
        for ex in verdicts.last.exercises:
            verdicts.keep(keys[ex.id], ex)
            done[ex.id] = ex
    else:
        submission.cleanup()
    assert verdicts.last is not None  # a kept result was graded by an earlier request
    exercises = [done[i] for i in chosen]
    result = dataclasses.replace(
        verdicts.last,
        submission=submission.name,
        score=round(sum(e.score for e in exercises), 6),
        max_score=sum(e.max_score for e in exercises),
        seed=seed.value,
        duration_s=round(time.monotonic() - began, 3),
        exercises=exercises,
    )
    result = pipeline.visible(result, ask)
    return {"result": result.to_dict(), "notes": submission.notes}


def serve(requests: TextIO, replies: TextIO, start) -> None:
    """Answer every request line of ``requests`` on ``replies``, until end of file."""
    verdicts = Verdicts()
    for line in requests:
        if not line.strip():
            continue
        said = io.StringIO()
        stderr, sys.stderr = sys.stderr, said
        request: dict[str, Any] = {}
        try:
            request = json.loads(line)
            reply = answer(request, start, verdicts)
        except Exception as exc:  # a bug of ours, or a request we cannot read: one line
            reply = {"error": one_line(f"the grader failed: {type(exc).__name__}: {exc}", 500)}
        finally:
            sys.stderr = stderr
        reply = {"id": request.get("id"), **reply, "said": said.getvalue()}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main(_config: dict | None = None) -> None:
    """The process's entry (``grader.live.nbcheck`` starts it; its boot passes the
    ``sys.path`` it restored, nothing else)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel's interrupts are the kernel's
    replies = reply_channel()
    from grader.pipeline import default_start

    start = default_start()  # the fork server imports torch in its process meanwhile
    from grader.judge.ready import ready_to_judge

    ready_to_judge()  # every check, once for all requests
    serve(sys.stdin, replies, start)


if __name__ == "__main__":
    main()
