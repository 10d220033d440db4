"""The judge behind ``grader.check`` in a notebook: a long-lived process of its own.

A notebook's kernel (``grader.nbcheck``) starts it once, with the kernel's interpreter but
fresh (``python -I``): nothing the notebook's cells did to ``torch``, ``reference`` or
``grader`` in the kernel exists here. It starts the sandbox's warm fork server, imports torch
and the checks while that server does the same, and then answers requests for the kernel's
lifetime, one JSON line each way (plain data only, never pickles):

    request: {"id": int, "inputs": [str, ...], "exercises": [str, ...] | null,
              "name": str, "seed": int | null, "max_examples": int | null}
    reply:   {"id": int, "result": <the schema-1 result>, "notes": [str, ...], "said": str}
           | {"id": int, "error": str}

``inputs`` is the kernel's input history (``inputs[n]`` ran as ``In [n]``). It is read, never
run, by ``grader.notebook`` into exercise files, which ``grader.judge.grade`` grades in
sandboxed workers exactly as ``grade`` grades a notebook (same checks, same seed handling: the
public seed unless ``seed`` or ``GRADE_SEED`` says otherwise). ``said`` is what the grader
wrote to stderr meanwhile (e.g. sandbox layers that are off here).

Requests come on stdin; replies go out on what was stdout when the process started, and
stdout itself then points at stderr, so that nothing printed by a library can break a reply.
The process exits when its stdin closes (the kernel exited, or closed it), and the fork server
with it (``grader.sandbox`` closes it at exit).
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
from typing import Any, TextIO

from grader.safetext import one_line

NAME = "notebook"  # the submission's name when the kernel knows no better


def reply_channel() -> TextIO:
    """The stream replies go out on: the original stdout, which now points at stderr."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    return channel


def answer(request: dict[str, Any], start) -> dict[str, Any]:
    """Grade the exercises ``request`` names from its inputs; the reply (without ``id``)."""
    from grader.judge import grade
    from grader.notebook import cells_submission, history_cells
    from grader.registry import select
    from grader.seeds import for_grade

    exercises = request.get("exercises") or None
    try:
        select(exercises)
    except KeyError as exc:
        return {"error": f"unknown exercise {exc.args[0]!r}"}
    seed = for_grade(request.get("seed"))
    name = str(request.get("name") or NAME)
    inputs = [str(text) for text in request.get("inputs") or []]
    submission = cells_submission(history_cells(inputs), name, name, ran=True)
    try:
        result = grade(
            submission,
            exercises,
            seed=seed.value,
            max_examples=request.get("max_examples"),
            start=start,
        )
    finally:
        submission.cleanup()
    if seed.hidden:  # the course's seed: never shown
        result = result.with_seed_hidden()
    return {"result": result.to_dict(), "notes": submission.notes}


def serve(requests: TextIO, replies: TextIO, start) -> None:
    """Answer every request line of ``requests`` on ``replies``, until end of file."""
    for line in requests:
        if not line.strip():
            continue
        said = io.StringIO()
        stderr, sys.stderr = sys.stderr, said
        request: dict[str, Any] = {}
        try:
            request = json.loads(line)
            reply = answer(request, start)
        except Exception as exc:  # a bug of ours, or a request we cannot read: one line
            reply = {"error": one_line(f"the grader failed: {type(exc).__name__}: {exc}", 500)}
        finally:
            sys.stderr = stderr
        reply = {"id": request.get("id"), **reply, "said": said.getvalue()}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main() -> None:
    """The process's entry (``grader.nbcheck`` starts it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel's interrupts are the kernel's
    replies = reply_channel()
    from grader.early import default_starter

    start = default_starter()  # the fork server imports torch in its process meanwhile
    import torch

    from grader.cli import freeze_imports
    from grader.judge import checks_for
    from grader.registry import EXERCISES

    for exercise in EXERCISES:  # torch, hypothesis and every check, once for all requests
        checks_for(exercise)
    torch.set_num_threads(1)  # as in grade: the judge's tensors are small, the cores are the
    freeze_imports()  # workers'
    serve(sys.stdin, replies, start)


if __name__ == "__main__":
    main()
