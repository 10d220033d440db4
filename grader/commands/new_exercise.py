"""``grade new-exercise ID --title TITLE``: the scaffold of a new exercise, in a pack.

Writes, as a worked example to replace (``grader.authoring.scaffold``): the stub students get,
the solution, a check module, a probe, a corpus folder with one wrong answer and one unusual
right one, a test, and the exercise's ``[[exercise]]`` table in ``pack.toml``. The places to
write the exercise carry ``TODO(pack):`` comments; ``grade check-pack`` refuses the pack until
none is left, then proves it.

Exit status: 0 when the files were written, 2 on a usage error (nothing is written then).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.commands.options import EXIT_PASSED
from grader.shared.errors import UsageError

WHICH_PACK = (
    "Which pack: --pack FOLDER (given after the command); else the folder of --pack given "
    "before it (grade --pack FOLDER new-exercise ...); else the pack in the current folder "
    "(./pack.toml) or the only one in a folder of it (./*/pack.toml); else a new pack, "
    "./{default}/ (a Python package: its pack.toml, checks/ and probes.py), with the stubs in "
    "./exercises/, the solution in ./solution/exercises/ and the corpus and tests in ./tests/, "
    "beside it. A --pack FOLDER without pack.toml becomes a new pack laid out the same way, "
    "around FOLDER. Nothing is overwritten."
)


def parser() -> argparse.ArgumentParser:
    from grader.authoring.scaffold import DEFAULT_PACK

    p = argparse.ArgumentParser(
        prog="grade new-exercise",
        description="Write the scaffold of a new exercise: a stub with its statement, the "
        "solution, a check module (a hypothesis property against a reference, with a hint and "
        "a reproduce snippet), a probe, a corpus folder (one wrong answer, one unusual right "
        "one), a test and the [[exercise]] table of pack.toml. It is a worked example (a "
        "running sum): replace each place marked TODO(pack) with your exercise, then run "
        "grade check-pack on the pack. " + WHICH_PACK.format(default=DEFAULT_PACK),
    )
    p.add_argument("id", metavar="ID", help="the exercise's id (letters, digits, . - _)")
    p.add_argument("--title", required=True, help="the exercise's title, as students see it")
    p.add_argument("--pack", type=Path, metavar="FOLDER", help="the pack's folder (see above)")
    p.add_argument(
        "--file",
        metavar="NAME",
        help="the student's file (default: ex<ID>_<words of the title>.py)",
    )
    p.add_argument(
        "--function",
        metavar="NAME",
        help="the function the student writes (default: the title's words, snake_case)",
    )
    p.add_argument("--points", type=float, default=10.0, help="the exercise's points (default: 10)")
    p.add_argument(
        "--simple",
        action="store_true",
        help="the declarative form: the check is one same_as_reference (the student's function "
        "against a reference on drawn inputs, within a tolerance) and the probe one "
        "answer_probes line",
    )
    return p


def pack_folder(given: Path | None) -> tuple[Path, str]:
    """The pack's folder and how it was chosen (see ``WHICH_PACK``)."""
    from grader.authoring.scaffold import DEFAULT_PACK
    from grader.shared.course import chosen_in_environment
    from grader.shared.packs import FILE

    if given is not None:
        return given, "--pack"
    chosen = chosen_in_environment()
    if chosen and Path(chosen).is_dir():
        return Path(chosen), "--pack"
    if Path(FILE).is_file():
        return Path.cwd(), "the current folder"
    found = sorted(p.parent for p in Path(".").glob(f"*/{FILE}"))
    if len(found) > 1:
        raise UsageError(
            f"several packs here ({', '.join(str(f) for f in found)}): choose one with "
            "--pack FOLDER"
        )
    if found:
        return found[0], "the only pack here"
    return Path(DEFAULT_PACK), "none here: a new pack"


def main(argv: list[str]) -> int:
    from grader.authoring.scaffold import TODO, ScaffoldError, todo_count, write

    args = parser().parse_args(argv)
    folder, how = pack_folder(args.pack)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder}: not a folder")
    if args.points <= 0:
        raise UsageError("--points must be more than 0")
    try:
        written = write(
            folder, args.id, args.title, args.file, args.function, args.points, args.simple
        )
    except ScaffoldError as exc:
        raise UsageError(str(exc)) from None
    state = "a new pack" if written.new_pack else "the pack"
    print(f"new-exercise: exercise {args.id} ({args.title}) in {state} {_shown(folder)}/ ({how})")
    for path, what in written.files:
        print(f"  {_shown(path)}: {what}")
    for note in written.notes:
        print(f"note: {note}")
    print(
        f"Next: replace the worked example (a running sum) with your exercise at the "
        f"{todo_count(written)} places marked {TODO} (grep -rn '{TODO}'), then prove the pack: "
        f"grade check-pack {_shown(folder)}"
    )
    return EXIT_PASSED


def _shown(path: Path) -> str:
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd())) or "."
    except ValueError:
        return str(path)
