"""Compare two ``grade --json`` results verdict by verdict (``bench/compat_compare.py``): the
score, each exercise's status and score, each check's outcome. Differences in words alone
(paths written the Windows way, torch's messages) are printed as notes and pass.

    python bench/compare_results.py REFERENCE.json OTHER.json   # exit 1 on a verdict difference

The GitHub Actions workflow ``.github/workflows/platforms.yml`` compares each Windows and macOS
result with the Linux reference this way.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compat_compare import differences  # noqa: E402


def compare(reference: dict, other: dict, name: str = "result") -> tuple[list[str], list[str]]:
    """(verdicts that differ, results whose words differ) between two ``grade --json``
    results."""
    wrong, text, quoted, _shrunk = differences(
        {"results": {name: reference}, "stderr": {}}, {"results": {name: other}, "stderr": {}}
    )
    return wrong, text + quoted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", type=Path, help="grade --json's result on the reference")
    parser.add_argument("other", type=Path, help="the same command's result elsewhere")
    args = parser.parse_args(argv)
    reference, other = (
        json.loads(p.read_text(encoding="utf-8")) for p in (args.reference, args.other)
    )
    wrong, words = compare(reference, other, args.other.name)
    for line in words:
        print(f"note: words differ (not a verdict): {line}")
    for line in wrong:
        print(f"verdicts differ: {line}")
    print(
        f"{args.other}: {other.get('score')}/{other.get('max_score')}, "
        f"reference {reference.get('score')}/{reference.get('max_score')}: "
        + ("different verdicts" if wrong else "same verdicts")
    )
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
