"""``grade release OUT``: write the student edition of the packs in use
(``grader.editions.release``) into a new folder, and say what was written: each pack's files,
shipped or left out, and why (``grader.editions.shipping``)."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from grader.commands.options import EXIT_PASSED
from grader.editions import text as edition_text
from grader.editions.release import build_release, git_init
from grader.editions.shipping import notes
from grader.shared.course import packs as packs_in_use
from grader.shared.errors import UsageError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="grade release",
        description="Write the student edition of the packs in use (their stubs as exercises/, "
        "their checks and probes, the grader, README, CI workflow; no solutions, no corpus, no "
        "instructor tests) into a new folder. --pack chooses the pack.",
    )
    p.add_argument("out", type=Path, help="a new (or empty) folder")
    p.add_argument("--git", action="store_true", help="make it a git repository with one commit")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    files = build_release(args.out)
    size = sum(p.stat().st_size for p in files)
    packs = packs_in_use()
    if args.git:
        try:
            git_init(args.out, edition_text.course_title(packs))
        except (OSError, subprocess.CalledProcessError) as exc:
            raise UsageError(f"wrote {args.out}, but git init failed: {exc}") from None
    count = edition_text.counted(sum(len(p.exercises) for p in packs))
    names = ", ".join(p.name for p in packs)
    print("\n".join(notes(packs)))
    print(f"wrote {args.out}: {count} of {names}, {len(files)} files, {size / 1024:.0f} KiB")
    return EXIT_PASSED
