"""A string a student's function returns reaches the check as the student's code made it
(the B.2 trial of issue 57: a right ``format_input`` scored 0 because the judge had spelled
out its control characters before comparing): a returned text with control, invisible or
bidi characters, or longer than a message's cut, is compared whole, and the report still
shows it only spelled out.

The pack is as short as a declared check allows: one check rather than a list, no ``answer``
(the exercise names one), no ``points`` (a weight of 1), its examples as tuples of the
arguments, and no ``probes`` (the declared checks' table for its names).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from test_pack_authoring import grade

TEXTS = ["a\x08b", "soft\xadhyphen", "\u202eevil", "bell\x07 escape\x1b[31m", "x" * 5000]

PACK_TOML = """\
[pack]
name = "text-pack"
title = "Returned text"
stubs = "../exercises"
solution = "../solution/exercises"

[[exercise]]
id = "T.1"
file = "ext_1_echo.py"
title = "Echo"
names = ["echo"]
points = 10
checks = "text_pack.checks:CHECKS"
"""

CHECKS = f"""\
from hypothesis import strategies as st

from grader.pack.judge import same_as_reference


def echo(text: str) -> str:
    return "<" + text + ">"


CHECKS = same_as_reference(
    name="echo(text) is the text in angle brackets",
    strategy={{"text": st.sampled_from({TEXTS!r})}},
    reference=echo,
    hint="put the text between < and >",
    examples=tuple((t,) for t in {TEXTS!r}),
)
"""


def make_pack(root: Path) -> None:
    package = root / "text_pack"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A pack whose answer returns text."""\n')
    (package / "pack.toml").write_text(PACK_TOML)
    (package / "checks.py").write_text(CHECKS)
    for folder, body in (
        ("exercises", "    raise NotImplementedError"),
        ("solution/exercises", "    return '<' + text + '>'"),
    ):
        (root / folder).mkdir(parents=True)
        (root / folder / "ext_1_echo.py").write_text(f"def echo(text):\n{body}\n")


def graded(root: Path, answer: str) -> dict:
    sub = root / "sub"
    (sub / "exercises").mkdir(parents=True, exist_ok=True)
    (sub / "exercises" / "ext_1_echo.py").write_text(textwrap.dedent(answer))
    done = grade("--pack", "text_pack", "sub", "--format", "json", cwd=root)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["exercises"][0]


def test_returned_text_is_compared_as_the_students_code_made_it(tmp_path):
    make_pack(tmp_path)
    right = graded(tmp_path, "def echo(text):\n    return f'<{text}>'\n")
    assert right["status"] == "passed", right["checks"][0]["message"]


def test_a_wrong_text_fails_and_its_report_spells_the_characters_out(tmp_path):
    make_pack(tmp_path)
    wrong = graded(tmp_path, "def echo(text):\n    return '<' + text.replace('\\x08', '') + '>'\n")
    message = wrong["checks"][0]["message"]
    assert wrong["status"] == "failed"
    assert message.startswith("echo(text) is '<ab>', expected '<a\\x08b>'")
