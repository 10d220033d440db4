"""``grade --watch``: grade once, then again each time a graded file is saved.

The judge process stays up between grades: torch, hypothesis and the checks are imported once,
and the workers of a regrade come from the fork server that is already running (its spare
workers wait ready), so a regrade costs about what grading that exercise costs, not a cold
start. What is graded again is what changed (``grader.live.saves``): after a save the
submission is read again (a notebook is extracted again) and every exercise whose code differs
from the last grade is graded; a change to another Python file beside the exercise files (a
helper module the student imports) grades every exercise again. The report on screen is always
the whole submission: the exercises graded last, with the others as they were. Ctrl-C ends the
watch with exit status 0, and so does the end of its standard input when that is a pipe (a
script or an editor that drives the watch closes it); a terminal's input is left alone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from grader import pipeline
from grader.live.saves import InputEnded, Saves, changed, fingerprint, input_ended, merged, watched
from grader.pipeline import Submission
from grader.result.report_text import ansi_console
from grader.shared.registry import select as select_exercises

if TYPE_CHECKING:
    from grader.result.schema import GradeResult

Grade = Callable[[Submission, list[str]], "GradeResult"]  # (submission, exercise ids) -> result
Show = Callable[["GradeResult", Submission], int]  # writes the report, returns an exit status

CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear the screen (the scrollback is left alone)


def _say(text: str, args: argparse.Namespace) -> None:
    print(text, file=sys.stdout if args.format == "text" else sys.stderr, flush=True)


def watch(args: argparse.Namespace, submission: Submission, grade: Grade, show: Show) -> int:
    """Grade ``submission``, then again after every save that changes what is graded, until
    Ctrl-C (exit status 0)."""
    ids = [e.id for e in select_exercises(args.exercises)]
    folder, counts, shown = watched(args.path)
    waiting = f"Watching {shown} - graded again when you save (Ctrl-C to stop)"
    clear = sys.stdout.isatty() and ansi_console(sys.stdout)
    saves = Saves(folder, counts)
    try:
        before = fingerprint(submission, ids)
        result = grade(submission, ids)
        show(result, submission)
        saves.wait_ready(ended=input_ended)  # "Watching" is said once saves are seen
        _say(waiting, args)
        while True:
            saves.wait(ended=input_ended)
            try:
                submission = pipeline.open_path(args.path)
            except pipeline.SubmissionError as exc:  # a notebook saved half-way: wait for the next
                from grader.shared.safetext import one_line

                print(f"grade: {one_line(exc, 1000)}", file=sys.stderr, flush=True)
                continue
            after = fingerprint(submission, ids)
            again = changed(before, after, ids)
            if not again:  # saved unchanged, or a file that is not graded
                submission.cleanup()
                continue
            before = after
            _say(f"Saved: grading {', '.join(again)} ...", args)  # the report stays meanwhile
            result = merged(result, grade(submission, again))
            if clear:
                sys.stdout.write(CLEAR)
            show(result, submission)
            _say(f"Graded again: {', '.join(again)}. {waiting}", args)
    except KeyboardInterrupt:
        print(file=sys.stderr)
    except InputEnded:  # a script or an editor drove the watch through a pipe, and is done
        pass
    finally:
        saves.close()
        submission.cleanup()
    return 0
