"""``grade check-pack PATH``: prove an exercise pack before students see it.

PATH is the pack's folder (the one holding ``pack.toml``); it need not be installed. First,
``grade release`` is run into a scratch folder: every file it would refuse as holding a
solution is listed, with the remedy. Then, with that pack chosen and the public seed, through
``grader.pipeline``, the pack's solution must get full marks, its stubs must read "not done
yet" with 0 points, and every corpus case must get what its name and header say (and a wrong
answer's snippets must run as pasted); then mutants of the solution files are graded and the
survivors shown with their diffs (``grader.authoring.proof``). A pack whose ``TODO(pack)``
places (left by ``grade new-exercise``) are not all filled in is refused before anything is
graded.

Exit status: 0 when the pack holds (survivors are reported, not failures), 1 when a step
fails, 2 on a usage error (PATH is not a pack: one line).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from grader.commands.options import EXIT_FAILED, EXIT_PASSED, add_exercise_option
from grader.shared.errors import UsageError


def parser() -> argparse.ArgumentParser:
    from grader.authoring.proof import DEFAULT_MUTANTS

    p = argparse.ArgumentParser(
        prog="grade check-pack",
        description="Prove an exercise pack before students see it: grade release would hand "
        "out no solution, its solution gets full marks, its stubs read 'not done yet' with 0 "
        "points, every corpus case (wrong_*.py, correct_*.py with their '# expect-failing:' "
        "headers) gets what it must and every failing check's snippet of a wrong answer runs "
        "as pasted, and mutants of the solution are graded (survivors are shown, not "
        "failures). Exit status 0 when the pack holds, 1 when a step fails, 2 when PATH is "
        "not a pack.",
    )
    p.add_argument("path", type=Path, metavar="PATH", help="the pack's folder (with pack.toml)")
    p.add_argument(
        "--mutants",
        type=int,
        default=DEFAULT_MUTANTS,
        metavar="N",
        help=f"mutants graded per solution file, spread over it (default: {DEFAULT_MUTANTS}; "
        "0 skips the step)",
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="judge processes (default: one per core)",
    )
    p.add_argument(
        "--no-snippets",
        action="store_true",
        help="do not paste the wrong answers' reproduce snippets (a quicker run that proves less)",
    )
    add_exercise_option(p, help="prove only this exercise of the pack; repeatable")
    p.add_argument(
        "--max-examples",
        type=int,
        default=None,
        metavar="N",
        help="examples per check (default: each check's own, as students are graded)",
    )
    return p


def chosen_pack(path: Path):
    """The pack at ``path`` (its folder, or its pack.toml), chosen for this process and every
    one it starts; a ``UsageError`` in one line when it is none."""
    from grader.shared.course import choose
    from grader.shared.packs import FILE, PackError

    if path.name == FILE and path.is_file():
        path = path.parent
    if not path.exists():
        raise UsageError(f"{path}: no such folder")
    if not path.is_dir():
        raise UsageError(f"{path}: not an exercise pack (give the folder that holds {FILE})")
    if not (path / FILE).is_file():
        raise UsageError(f"{path}: not an exercise pack (no {FILE} in it)")
    try:
        (pack,) = choose(str(path)).packs
    except PackError as exc:
        raise UsageError(str(exc)) from None
    return pack


def release_step(pack):
    """``grade release`` of ``pack`` into a scratch folder: FAIL with what it would refuse
    (every file that holds a solution's lines, and the remedy), else PASS."""
    from grader.authoring.proof import FAIL, PASS, SKIP, TODO, Step, todo_places
    from grader.editions.leaks import SolutionLeaked
    from grader.editions.release import build_release

    if todo_places(pack):  # a scaffold's own code is no solution to hand out yet
        return Step("release", SKIP, f"not run: fill in the {TODO} places first")
    began = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="check-pack-release-"))
    try:
        build_release(scratch / "edition", packs=(pack,))
        step = Step("release", PASS, "grade release writes the edition: no file holds a solution")
    except SolutionLeaked as exc:
        said = f"grade release would refuse: {len(exc.leaks)} file(s) hold a solution's lines"
        step = Step("release", FAIL, said, [*exc.leaks, exc.remedy])
    except UsageError as exc:
        step = Step("release", FAIL, f"grade release would refuse: {exc}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    step.seconds = round(time.monotonic() - began, 1)
    return step


def show_step(step) -> None:
    print(f"  {step.name:<10} {step.status:<4}  {step.summary} ({step.seconds:g} s)")
    from grader.authoring.proof import MAX_DETAILS

    for line in step.details[:MAX_DETAILS]:
        print(f"{'':18}{line}")
    if len(step.details) > MAX_DETAILS:
        print(f"{'':18}... and {len(step.details) - MAX_DETAILS} more")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.mutants < 0:
        raise UsageError("--mutants must be 0 or more")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.max_examples is not None and args.max_examples < 1:
        raise UsageError("--max-examples must be at least 1")
    pack = chosen_pack(args.path)
    exercises = list(pack.exercises)
    if args.exercises:
        known = {e.id for e in exercises}
        unknown = [i for i in args.exercises if i not in known]
        if unknown:
            raise UsageError(
                f"the pack has no exercise {unknown[0]!r}; choose from {', '.join(sorted(known))}"
            )
        exercises = [e for e in exercises if e.id in set(args.exercises)]

    from grader.authoring.mutation import survivors_text
    from grader.authoring.proof import Settings, prove
    from grader.judge.seeds import PUBLIC_SEED

    print(
        f"check-pack: {pack.name} ({pack.folder}), {len(exercises)} exercise(s), "
        f"public seed {PUBLIC_SEED}"
    )
    sys.stdout.flush()
    settings = Settings(args.max_examples, args.jobs, snippets=not args.no_snippets)
    release = release_step(pack)  # what students will be handed, before it is graded
    show_step(release)
    proof = prove(pack, exercises, args.mutants, settings, show_step)
    failed = ["release"] * (release.status == "FAIL") + proof.failed
    survivors = [v for v in proof.verdicts if not v.killed]
    if survivors:
        print("\nsurvivors (each a change to the solution that every check lets pass):")
        print(survivors_text(survivors))
    if not failed:
        print(f"check-pack: {pack.name} holds (solution, stubs and corpus)")
        return EXIT_PASSED
    print(f"check-pack: {pack.name} does not hold: {', '.join(failed)} failed")
    return EXIT_FAILED
