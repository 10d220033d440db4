"""A second exercise pack, tiny, written into a test's folder: one exercise ("t1": ``double(x)``
returns twice ``x``), its check (judge side) and probe (worker side), its stub, its solution
and a corpus answer: the stub in a folder of the package, the solution and the corpus beside
it, as a course's own pack keeps them. The tests of ``grade release``, ``grade notebook`` and
``grade gradescope`` make their outputs of it (``grade --pack FOLDER ...``) and grade with
them."""

from __future__ import annotations

from pathlib import Path

PACKAGE = "tiny_pack"
NAME = "tiny-course"
ID = "t1"
FILENAME = "double_it.py"
TITLE = "Double a number"
HEADING = "A tiny course: doubling numbers"
# Lines of the solution found nowhere else: the release's scan looks for them.
SOLUTION_LINES = ("doubled_value_of_the_input = x + x", "return doubled_value_of_the_input")
CORPUS_LINE = "tripled_by_mistake_here = 3 * x"

PACK_TOML = f'''\
[pack]
name = "{NAME}"
title = "The tiny course of the tests"
worker = ["{PACKAGE}.probes"]
shared = ["exercises"]
stubs = "stubs"
solution = "../tiny_solution"
corpus = "../tiny_corpus"

[text]
heading = "{HEADING}"
about = "the tiny course of the tests"
imports = "Nothing to import: `double` needs only Python."

[[exercise]]
id = "{ID}"
file = "{FILENAME}"
title = "{TITLE}"
names = ["double"]
points = 10
checks = "{PACKAGE}.checks:CHECKS"
probes = "{PACKAGE}.probes:PROBES"
'''

CHECKS = '''\
"""The judge's check of the tiny pack."""

from hypothesis import strategies as st

from grader.judge.properties import Check, CheckFailed


def check_double(worker, x):
    got = worker.call("double", x=x)
    if got != 2 * x:
        raise CheckFailed(f"double({x}) returned {got!r}, expected {2 * x}")


CHECKS = [
    Check(
        name="double(x) is twice x, for any integer x",
        points=10,
        strategy=st.integers(-1000, 1000),
        run=check_double,
        hint="multiply x by two",
        reproduce=lambda x: f"from exercises.double_it import double\\nprint(double({x}))\\n",
        max_examples=5,
    )
]
'''

PROBES = '''\
"""The worker's probe of the tiny pack."""

from grader.worker.probes import number


def _double(module, state, x):
    return number(module.double(x), "double(x)")


PROBES = {"double": _double}
'''

STUB = f'''\
"""Exercise {ID} - {TITLE}.

Your task: write ``double(x)``, which returns twice ``x``.

What is graded:
- ``double(x) == 2 * x`` for any integer ``x``.

Hint: there is more than one way to double.
"""


def double(x: int) -> int:
    raise NotImplementedError(
        "Exercise {ID} is not done yet: write double() in exercises/{FILENAME}"
    )
'''

SOLUTION = f"""\
def double(x: int) -> int:
    {SOLUTION_LINES[0]}
    {SOLUTION_LINES[1]}
"""

WRONG = f"""\
def double(x: int) -> int:
    {CORPUS_LINE}
    return tripled_by_mistake_here
"""


def make_tiny_pack(folder: Path) -> Path:
    """Write the tiny pack into ``folder`` (tiny_pack/, tiny_solution/, tiny_corpus/);
    return the pack's folder."""
    pack = folder / PACKAGE
    for sub in (f"{PACKAGE}/stubs", "tiny_solution", f"tiny_corpus/ex{ID}"):
        (folder / sub).mkdir(parents=True)
    (pack / "__init__.py").write_text('"""The tiny pack of the tests."""\n')
    (pack / "pack.toml").write_text(PACK_TOML)
    (pack / "checks.py").write_text(CHECKS)
    (pack / "probes.py").write_text(PROBES)
    (pack / "stubs" / FILENAME).write_text(STUB)
    (folder / "tiny_solution" / FILENAME).write_text(SOLUTION)
    (folder / "tiny_corpus" / f"ex{ID}" / "wrong_triples.py").write_text(WRONG)
    return pack
