"""Mark the slowest tests ``slow`` by measurement: read a JUnit report of a whole run of the
suite and rewrite the measured part of ``tests/slow.txt`` with every test whose setup, call
and teardown took longer than ``--over`` seconds there. ``tests/conftest.py`` marks what that
file names (``pytest -m "not slow"`` leaves them out, README: Development).

    python -m pytest -q --junitxml=run.xml
    python bench/slow_tests.py run.xml [--over 1.0]

A test whose module fixture is costly passes that cost to the next test of the module once
the first is marked: run ``pytest -m "not slow" --junitxml=rest.xml`` and add it with
``python bench/slow_tests.py rest.xml --add``, until nothing is left over the limit.
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from pathlib import Path

LIST = Path(__file__).resolve().parents[1] / "tests" / "slow.txt"
MEASURED = "# measured:"


def node_id(classname: str, name: str) -> str:
    """``tests.test_x.TestY`` and ``test_z[a]`` as conftest matches them:
    ``test_x.py::TestY::test_z[a]``."""
    parts = classname.split(".")
    module = next(i for i, p in enumerate(parts) if p.startswith("test_"))
    return "::".join([parts[module] + ".py", *parts[module + 1 :], name])


def slow_ids(report: Path, over: float) -> list[str]:
    tree = ET.parse(report)
    return sorted(
        node_id(case.get("classname", ""), case.get("name", ""))
        for case in tree.iter("testcase")
        if float(case.get("time", 0)) > over and case.find("skipped") is None
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report", type=Path, help="pytest's --junitxml report of a run")
    p.add_argument("--over", type=float, default=1.0, help="seconds (default 1.0)")
    p.add_argument("--add", action="store_true", help="keep the measured ids already listed")
    args = p.parse_args()
    text = LIST.read_text(encoding="utf-8")
    head, _, listed = text.partition(MEASURED)
    kept = [line for line in listed.splitlines()[1:] if line.strip()] if args.add else []
    by_hand = tuple(i.strip() for i in head.splitlines() if i.strip() and not i.startswith("#"))
    # an id the hand-kept part names already (itself, or a start of it) is not listed twice
    ids = sorted(
        i for i in set(kept) | set(slow_ids(args.report, args.over)) if not i.startswith(by_hand)
    )
    LIST.write_text(
        f"{head}{MEASURED} over {args.over:g} s in a run of the whole suite "
        f"(bench/slow_tests.py)\n" + "".join(f"{i}\n" for i in ids),
        encoding="utf-8",
    )
    print(f"{len(ids)} measured slow tests listed in {LIST.name}")


if __name__ == "__main__":
    main()
