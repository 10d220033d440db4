"""The ``grade`` command line (DESIGN §7).

Exit status: 0 when every check passed, 1 when some check failed, 2 on a usage error or a
failure of the grader itself.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from grader.commands.options import (
    EXIT_FAILED,
    EXIT_PASSED,
    EXIT_USAGE,
    add_exercise_option,
    add_grading_options,
    limit_options,
    pack_as_typed,
    take_pack_option,
)
from grader.result.formats import FORMATS as CI_FORMATS
from grader.shared import registry, timing
from grader.shared.errors import UsageError

if TYPE_CHECKING:
    from grader.intake.submission import Submission
    from grader.judge.launch.handle import Starter
    from grader.judge.seeds import Seed
    from grader.protocol.limits import Limits
    from grader.result.schema import GradeResult

FORMATS = ("text", "json", *CI_FORMATS)  # our own two, then the CI formats
SUBCOMMANDS = (
    *("batch", "merge", "export", "release", "notebook", "gradescope"),
    *("check-pack", "new-exercise"),
)
MODULES = {"check-pack": "check_pack", "new-exercise": "new_exercise"}  # else the command's name


def grade_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="grade",
        description="Grade the exercises of the installed pack. Other commands: "
        "grade batch | merge | export | release | notebook | gradescope | check-pack | "
        "new-exercise (see grade COMMAND -h). "
        "Before or after any command, --pack NAME|FOLDER grades with that exercise pack (an "
        "installed pack's name, or the folder of a pack.toml) instead of every installed one.",
    )
    p.add_argument(
        "path",
        nargs="?",
        default=".",
        type=Path,
        help="a folder with exercises/, or a notebook (default: .)",
    )
    add_exercise_option(p)
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the JSON result here")
    p.add_argument("--html", type=Path, metavar="FILE", help="also write an HTML report here")
    p.add_argument(
        "--format", choices=FORMATS, default="text", help="what to print on stdout (default: text)"
    )
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show every failure's counterexample and snippet",
    )
    p.add_argument(
        "--watch",
        action="store_true",
        help="grade, then grade again each time a graded file is saved (Ctrl-C, or the end of "
        "a piped input, stops it)",
    )
    add_grading_options(p)
    p.add_argument(
        "--version",
        action=VersionAction,
        help="print the versions that decide a grade (the grader, Python, torch, hypothesis)",
    )
    return p


class VersionAction(argparse.Action):
    """``--version``: its line is read only when asked for (a grade reads no metadata)."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(versions_line())
        parser.exit()


def versions_line() -> str:
    """``grade 0.1.0 (Python 3.11.2, torch 2.13.0, hypothesis 6.168.5)``: what a bug report
    or a CI log needs, read from the installed packages' metadata (torch is not imported)."""
    from importlib import metadata

    from grader.shared.version import __version__

    def installed(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    python = ".".join(map(str, sys.version_info[:3]))
    return (
        f"grade {__version__} (Python {python}, torch {installed('torch')}, "
        f"hypothesis {installed('hypothesis')})"
    )


def limits_from(args: argparse.Namespace) -> Limits:
    from grader.protocol.limits import Limits

    return Limits(**limit_options(args))


def workers_needed(exercises: list[str] | None, submission: Submission) -> int:
    """The workers one grade of ``submission`` asks for: one per exercise graded whose file it
    has (a missing file is a missing exercise, graded with no worker); at least one."""
    return max(1, sum(ex.id in submission.files for ex in registry.select(exercises)))


def starter_from(args: argparse.Namespace, submission: Submission) -> Starter:
    """The worker starter the options ask for (``--no-sandbox``, ``--strict-sandbox``, or
    neither: the default)."""
    from grader.judge.launch.starter import chosen_starter

    # As many spare workers as this grade uses; a grade that runs once needs no replacements
    # (--watch does, and its files may come later).
    spares = workers_needed(args.exercises, submission)
    return chosen_starter(args.no_sandbox, args.strict_sandbox, spares, refill=args.watch)


def rerun_command(args: argparse.Namespace) -> str:
    """``grade`` with what this run was given that decides what it grades: ``--pack``, the
    path (unless the default ``.``), ``--seed`` and ``--max-examples``; the report adds ``-e ID
    -v``."""
    parts = ["grade"]
    typed = pack_as_typed()
    if typed is not None:
        parts += ["--pack", shlex.quote(typed)]
    if args.path != Path("."):
        parts.append(shlex.quote(str(args.path)))
    if args.seed is not None:
        parts += ["--seed", str(args.seed)]
    if args.max_examples is not None:
        parts += ["--max-examples", str(args.max_examples)]
    return " ".join(parts)


def emit(result, args: argparse.Namespace) -> None:
    """Write the result in the requested format(s)."""
    from grader.result import report_text

    if args.json:
        args.json.write_text(result.to_json() + "\n", encoding="utf-8")
    if args.html:
        from grader.result.report_html import write_html

        write_html(result, args.html)
    if args.format == "text":
        report_text.write(result, sys.stdout, verbose=args.verbose, command=rerun_command(args))
    elif args.format == "json":
        sys.stdout.write(result.to_json() + "\n")
    else:
        from grader.result import formats

        formats.emit(args.format, result, sys.stdout, root=args.path)


def checked(args: argparse.Namespace) -> tuple[Seed, Submission]:
    """The seed and the submission the arguments ask for; a ``UsageError`` for anything the
    user can get wrong, found before torch is imported (a second)."""
    from grader.judge.seeds import SeedError, for_grade

    try:  # --seed, else the course's GRADE_SEED (CI), else the public seed
        seed = for_grade(args.seed)
    except SeedError as exc:
        raise UsageError(str(exc)) from None
    from grader import pipeline

    try:
        registry.select(args.exercises)
    except KeyError as exc:
        raise UsageError(
            f"unknown exercise {exc.args[0]!r}; choose from "
            + ", ".join(e.id for e in registry.EXERCISES)
        ) from None
    if args.max_examples is not None and args.max_examples < 1:
        raise UsageError("--max-examples must be at least 1")
    try:
        submission = pipeline.open_path(args.path)
    except pipeline.SubmissionError as exc:
        raise UsageError(str(exc)) from None
    return seed, submission


def grade_once(
    args: argparse.Namespace,
    submission: Submission,
    exercises: list[str] | None,
    seed: Seed,
    limits: Limits,
    start: Starter,
) -> GradeResult:
    """Grade ``exercises`` of ``submission`` through the pipeline (then remove its temporary
    files); the result as a student may see it. Imports torch the first time, its workers
    starting meanwhile."""
    from grader import pipeline

    request = pipeline.Request(
        seed=seed,
        exercises=exercises,
        max_examples=args.max_examples,
        limits=limits,
        start=start,
        overlap=True,
    )
    return pipeline.finish(submission, request)


def show(result: GradeResult, args: argparse.Namespace, submission: Submission) -> int:
    """Write the result where the arguments ask; the exit status it deserves."""
    emit(result, args)
    for note in submission.notes:  # e.g. which notebook cells were graded
        print(f"note: {note}", file=sys.stdout if args.format == "text" else sys.stderr)
    not_started = [
        c.message
        for ex in result.exercises
        if ex.verdict == "worker-not-started"
        for c in ex.checks
    ]
    if not_started:  # one line, not one an exercise: it is the installation, not the answers
        print(
            f"grade: {not_started[0]} (a problem of the grader, not of your code)", file=sys.stderr
        )
    return exit_status(result)


def exit_status(result: GradeResult) -> int:
    """The exit status a result deserves, read from its exercises' verdicts and checks (never
    from a message's words): 2 when the grade itself failed on some exercise (reported, but a
    failure of ours or of the pack), else 0 when every check passed, else 1."""
    from grader.result.schema import grader_failed

    if any(grader_failed(ex) for ex in result.exercises):
        return EXIT_USAGE
    return EXIT_PASSED if result.all_passed else EXIT_FAILED


def other_pack_here(path: Path) -> str | None:
    """For a folder that holds none of the course's files: the pack declared in it
    (``pack.toml`` there or one level down) that is not the one graded, and how to grade its
    exercises (a course author's release, tried where another pack is installed); else None."""
    from grader.shared.course import packs
    from grader.shared.packs import read_pack

    folder = path if path.is_dir() else path.parent
    graded = {p.name for p in packs()}
    for toml in [folder / "pack.toml", *sorted(folder.glob("*/pack.toml"))]:
        try:
            other = read_pack(toml.parent)
        except (registry.PackError, OSError):
            continue
        if other.name not in graded:
            where = os.path.relpath(toml.parent)
            return (
                f"{where} holds the pack {other.name!r}: grade --pack {where} grades its exercises"
            )
    return None


def run_grade(argv: list[str]) -> int:
    args = grade_parser().parse_args(argv)
    try:
        seed, submission = checked(args)
    except UsageError as exc:
        other = other_pack_here(args.path)
        if other is None:
            raise
        raise UsageError(f"{exc}; {other}") from None
    timing.mark("arguments")
    # The starter's fork server imports torch while this process does; grade_once asks it for
    # the workers (which import the student's files) meanwhile.
    limits = limits_from(args)
    start = starter_from(args, submission)
    if args.watch:
        from grader.commands.watch import watch

        return watch(
            args,
            submission,
            lambda sub, ids: grade_once(args, sub, ids, seed, limits, start),
            lambda result, sub: show(result, args, sub),
        )
    result = grade_once(args, submission, args.exercises, seed, limits, start)
    # The whole run's time, the interpreter's start-up and the imports included.
    result = dataclasses.replace(result, duration_s=round(timing.since_start(), 3))
    timing.mark("graded")
    code = show(result, args, submission)
    other = None if submission.files else other_pack_here(args.path)
    if other is not None:
        print(f"grade: none of these exercises' files is here, but {other}", file=sys.stderr)
    timing.mark("reported")
    timing.write()
    return code


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    for stream in (sys.stdout, sys.stderr):  # a stream that cannot encode a character
        if hasattr(stream, "reconfigure"):  # shows it escaped rather than failing
            stream.reconfigure(errors="backslashreplace")
    try:
        if argv[:1] != ["new-exercise"]:  # its --pack may name a pack it is to create
            argv = take_pack_option(argv)
        if argv and argv[0] in SUBCOMMANDS:
            import importlib

            module = importlib.import_module(f"grader.commands.{MODULES.get(argv[0], argv[0])}")
            code = module.main(argv[1:])
        else:
            code = run_grade(argv)
    except (UsageError, registry.PackError) as exc:  # may name the user's files: one safe line
        from grader.shared.safetext import one_line

        print(f"grade: error: {one_line(exc, 1000)}", file=sys.stderr)
        code = EXIT_USAGE
    except KeyboardInterrupt:
        print("grade: interrupted", file=sys.stderr)
        code = EXIT_USAGE
    except Exception as exc:  # a bug of ours: say so in one line, never a traceback wall
        from grader.shared.safetext import one_line

        print(
            f"grade: internal error: {one_line(f'{type(exc).__name__}: {exc}', 500)}",
            file=sys.stderr,
        )
        code = EXIT_USAGE
    sys.stdout.flush()
    return code


def entry() -> None:
    code = main()
    if "torch" not in sys.modules:
        sys.exit(code)
    # Tearing down an interpreter that holds torch costs a few tenths of a second, which a
    # student waits for after every edit: run the exit handlers (they stop the fork server and
    # its workers), flush, and leave without the teardown.
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can reach the reader
            pass
    os._exit(code)


if __name__ == "__main__":
    entry()
