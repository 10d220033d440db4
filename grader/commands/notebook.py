"""``grade notebook OUT.ipynb``: write the exercises of the packs in use as one student
notebook (``grader.editions.notebook``), and say what was written."""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.commands.options import EXIT_PASSED
from grader.editions import text as edition_text
from grader.editions.notebook import DEFAULT_INSTALL, build
from grader.shared.errors import UsageError
from grader.shared.registry import EXERCISES


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="grade notebook",
        description="Write the exercises of the packs in use as one student notebook "
        "(statements, tagged answer cells holding the stubs, each followed by a cell that checks "
        "it, an install cell and a cell that checks them all). --pack chooses the pack.",
    )
    p.add_argument("out", type=Path, help="the notebook to write (.ipynb)")
    p.add_argument(
        "--install",
        default=DEFAULT_INSTALL,
        metavar="PIP_ARGS",
        help=f"what the first cell passes to %%pip install (default: {DEFAULT_INSTALL!r})",
    )
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    return p


def main(argv: list[str]) -> int:
    import nbformat

    args = parser().parse_args(argv)
    out: Path = args.out
    if out.suffix != ".ipynb":
        raise UsageError(f"{out}: the notebook's name must end in .ipynb")
    if out.exists() and not args.force:
        raise UsageError(f"{out} exists (it may hold someone's answers); add --force to replace it")
    nb = build(args.install)
    nbformat.validate(nb)
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(out))
    tags = edition_text.tag_range(EXERCISES).replace("`", "")
    print(f"wrote {out}: {edition_text.counted(len(EXERCISES))}, answer cells tagged {tags}")
    return EXIT_PASSED
