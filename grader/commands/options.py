"""What every command shares: its exit statuses and the grading options (seed, examples per
check, limits, sandbox) that ``grade`` and ``grade batch`` accept alike."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def ids_in_use() -> str:
    """The ids of the exercises in use, for a help text: ``A``, ``A, B`` or ``A ... Z`` (the
    first and the last); ``""`` when no pack can be read (grading says why)."""
    from grader.shared.registry import EXERCISES, PackError

    try:
        ids = [e.id for e in EXERCISES]
    except PackError:
        return ""
    return ", ".join(ids) if len(ids) < 3 else f"{ids[0]} ... {ids[-1]}"


def add_exercise_option(p: argparse.ArgumentParser, help: str | None = None) -> None:
    """``-e ID``, repeatable: grade only these exercises (the ids of the packs in use, read
    when the parser is built: after ``--pack``); ``help`` says it otherwise."""
    if help is None:
        ids = ids_in_use()
        help = (
            f"grade only this exercise ({ids}); repeatable"
            if ids
            else ("grade only the exercise with this id; repeatable")
        )
    p.add_argument("-e", "--exercise", action="append", dest="exercises", metavar="ID", help=help)


def take_pack_option(argv: list[str]) -> list[str]:
    """``argv`` without ``--pack NAME|FOLDER`` (allowed before or after any command), whose
    pack is this process's course, handed to every process it starts (``grader.shared.course``).
    Raises ``UsageError`` when the pack cannot be used."""
    from grader.shared.course import choose
    from grader.shared.errors import UsageError
    from grader.shared.packs import PackError

    rest, chosen, i = [], None, 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--pack":
            if i + 1 >= len(argv):
                raise UsageError("--pack needs an installed pack's name or a pack's folder")
            chosen, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--pack="):
            chosen = arg.partition("=")[2]
        else:
            rest.append(arg)
        i += 1
    if chosen is not None:
        try:
            choose(chosen)
        except PackError as exc:
            raise UsageError(str(exc)) from None
        _TYPED[:] = [chosen]
    return rest


_TYPED: list[str] = []  # the --pack this process was given, as typed


def pack_as_typed() -> str | None:
    """The ``--pack`` this process was given, as the user typed it (a command the report tells
    them to run must choose the same pack), or None."""
    return _TYPED[0] if _TYPED else None


def add_out_option(p: argparse.ArgumentParser, what: str) -> None:
    """``-o OUT`` (required): the folder ``what`` goes to."""
    p.add_argument("-o", "--out", type=Path, required=True, metavar="OUT", help=f"where {what} go")


def add_grading_options(p: argparse.ArgumentParser, seed_help: str | None = None) -> None:
    """``--seed``, ``--max-examples``, the worker limits and the sandbox switches."""
    from grader.judge.seeds import seed_argument

    p.add_argument(
        "--seed",
        type=seed_argument,
        default=None,
        metavar="N",
        help=seed_help
        or "draw other examples (default: the public seed, or the course's GRADE_SEED if set)",
    )
    p.add_argument(
        "--max-examples",
        type=int,
        default=None,
        metavar="N",
        help="examples per check (default: each check's own)",
    )
    p.add_argument(
        "--call-timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds one call into student code may take",
    )
    p.add_argument(
        "--exercise-budget",
        type=float,
        default=None,
        metavar="S",
        help="seconds all checks of one exercise may take",
    )
    p.add_argument(
        "--memory-mb", type=int, default=None, metavar="MB", help="memory a worker may use"
    )
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run workers as plain subprocesses, without OS isolation",
    )
    p.add_argument(
        "--strict-sandbox",
        action="store_true",
        help="refuse to grade when a sandbox layer is unavailable",
    )


def limit_options(args: argparse.Namespace) -> dict[str, Any]:
    """The worker limits the options of ``add_grading_options`` set, by ``Limits`` field name
    (only those given: the rest keep ``Limits``' or grading.toml's values)."""
    given = {
        "call_timeout_s": args.call_timeout,
        "exercise_budget_s": args.exercise_budget,
        "memory_mb": args.memory_mb,
    }
    return {name: value for name, value in given.items() if value is not None}
