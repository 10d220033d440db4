"""``grade gradescope OUT.zip``: write a Gradescope autograder bundle
(``grader.editions.gradescope``) and say how to use it; ``grade gradescope --run ROOT`` is what
the bundle's ``run_autograder`` calls for each submission (``grader.editions.autograder``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.commands.options import EXIT_PASSED, EXIT_USAGE
from grader.editions.autograder import run_autograder
from grader.editions.gradescope import SETTINGS, bundle_settings, write_bundle
from grader.judge.seeds import PUBLIC_SEED, seed_argument
from grader.shared.errors import UsageError
from grader.shared.registry import EXERCISES


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="grade gradescope",
        description="Write a Gradescope autograder bundle (setup.sh and run_autograder at the "
        "zip's root, the student edition of the packs in use inside: --pack chooses).",
    )
    p.add_argument("out", type=Path, nargs="?", help="the zip to write")
    p.add_argument(
        "--seed",
        type=seed_argument,
        default=None,
        metavar="N",
        help="the course's grading seed (default: seed in --config's grading.toml, else one "
        "drawn now); kept only in the bundle",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE",
        help="a grading.toml: its seed, exercises, points and limits",
    )
    p.add_argument("--max-examples", type=int, default=None, metavar="N", help="examples per check")
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    p.add_argument(
        "--run",
        type=Path,
        metavar="ROOT",
        help="(used by the bundle's run_autograder) grade ROOT/submission into "
        "ROOT/results/results.json",
    )
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.run is not None:
        run_autograder(args.run.resolve())  # a failure to grade is written in its results.json
        return EXIT_PASSED
    if args.out is None:
        raise UsageError("grade gradescope: give the zip to write (e.g. autograder.zip)")
    if args.out.suffix != ".zip":
        raise UsageError(f"{args.out}: the bundle's name must end in .zip")
    if args.out.exists() and not args.force:
        raise UsageError(f"{args.out} exists; add --force to replace it")
    if args.max_examples is not None and args.max_examples < 1:
        raise UsageError("--max-examples must be at least 1")
    settings, source = bundle_settings(args.seed, args.max_examples, args.config)
    count = write_bundle(args.out, settings)
    size = args.out.stat().st_size
    chosen = set(settings["exercises"])
    total = sum(settings["max_scores"].get(e.id, e.max_score) for e in EXERCISES if e.id in chosen)
    seed = {
        "drawn": "a course seed drawn now",
        "grading.toml": "the seed of grading.toml",
        "--seed": "the seed given with --seed",
    }[source]
    if settings["seed"] == PUBLIC_SEED:
        seed = "the public seed (the examples of a student's own grade)"
    print(
        f"wrote {args.out}: {count} files, {size / 1024:.0f} KiB; upload it as the "
        f"assignment's autograder (set the assignment's points to the grader's maximum, "
        f"{total:g}). It grades with {seed}, kept only in its {SETTINGS}."
    )
    return EXIT_PASSED if count else EXIT_USAGE
