"""Intake, fuzzed: whatever bytes a student hands in, taking them in ends in a submission (with
each file that must not run refused in one line) or in one ``SubmissionError`` line; never
in another exception, which every front end would report as the grader's "internal error".

The inputs: random bytes as an exercise file; files declaring a coding (every codec name
Python knows, and names it does not); notebooks of random JSON, of random nbformat-like
structure with random (surrogate-holding) strings, and of random bytes; a kernel's random
inputs; random zips, whole and damaged. The intake functions are called directly (no CLI), with
hypothesis derandomized and no example database, as the rest of the suite: a few seconds.
"""

from __future__ import annotations

import codecs
import encodings
import encodings.aliases
import io
import json
import pkgutil
import shutil
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.intake.files import file_problem
from grader.pipeline import Submission, SubmissionError, open_cells, open_path, open_zip
from grader.shared.registry import EXERCISES

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

FIRST = EXERCISES[0]
SOLUTION = Path(__file__).parent / "submissions" / "solution"
SOLUTION_SOURCES = [(SOLUTION / "exercises" / e.filename).read_text() for e in EXERCISES]
# Short definitions of every name an exercise asks for: a notebook's answers, cheap to select.
DEFINITIONS = [f"def {name}(*args):\n    return torch\n" for e in EXERCISES for name in e.names]

# Every codec name Python knows: the aliases, what they name, and every module of encodings/.
CODEC_NAMES = sorted(
    set(encodings.aliases.aliases)
    | set(encodings.aliases.aliases.values())
    | {m.name for m in pkgutil.iter_modules(encodings.__path__)}
    | {"rot13", "punycode", "idna", "utf-16", "utf-32", "utf-7", "mbcs", "oem", "ansi"}
)

# --- strategies ---------------------------------------------------------------------------------

# Text with lone surrogates and the characters that are line breaks for str.splitlines only.
awkward_chars = st.one_of(
    st.characters(),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=()),
    st.sampled_from(["\x00", "\r", "\n", "\x0c", "\x0b", "\u2028", "\x1c", "\ufeff", "\\"]),
)
awkward_text = st.text(awkward_chars, max_size=30)

code_pieces = st.one_of(
    st.sampled_from(DEFINITIONS),
    st.sampled_from(
        [
            "def transfer_weights(a, b):\n    pass\n",
            "import torch\n",
            "%%time\n",
            "%%bash\nls\n",
            "!pip install torch\n",
            "x = f(?\n",
            "GPT2_CONFIGS = {}\n",
            "x = '\ud800'\n",
            "def transfer_weights(a, b):\n    return '\udfff'\n",
            "def f():\n  return '\ud83d",
            "\ude00'\n",
            "# \u2028 note\n",
            "x = 1\x0cy = 2\n",
            "\x00",
            "\r\n",
            "class GPTModel:\n  pass\n",
            "# -*- coding: rot13 -*-\n",
            "if True:\n",
            "  x = 1\n",
            "(" * 300 + ")" * 300,
        ]
    ),
    awkward_text,
)
code_text = st.lists(code_pieces, max_size=3).map("".join)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | awkward_text,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(awkward_text, kids, max_size=3),
    max_leaves=8,
)

exercise_tags = st.lists(
    st.sampled_from([f"exercise-{e.id}" for e in EXERCISES] + ["exercise-9.9", "x"]), max_size=2
)
tags = st.one_of(
    exercise_tags, st.lists(awkward_text, max_size=3), st.just(f"exercise-{FIRST.id}"), json_values
)
good_cells = st.fixed_dictionaries(
    {
        "cell_type": st.sampled_from(["code", "code", "markdown"]),
        "source": code_text | st.lists(code_text, max_size=3),
        "metadata": st.fixed_dictionaries({}, optional={"tags": exercise_tags}),
        "outputs": st.just([]),
        "execution_count": st.none() | st.integers(1, 50),
    }
)
cells = st.one_of(
    good_cells,
    st.fixed_dictionaries(
        {
            "cell_type": st.sampled_from(["code", "markdown", "raw"]) | awkward_text,
            "source": code_text | st.lists(code_text, max_size=3) | json_values,
        },
        optional={
            "metadata": st.fixed_dictionaries({}, optional={"tags": tags}) | json_values,
            "execution_count": st.none() | st.integers() | json_values,
            "outputs": st.just([]) | json_values,
            "id": awkward_text,
        },
    ),
    json_values,
)
nbformat_notebooks = st.fixed_dictionaries(  # as nbformat writes them
    {
        "cells": st.lists(good_cells, max_size=4),
        "metadata": st.just({}),
        "nbformat": st.just(4),
        "nbformat_minor": st.integers(0, 5),
    }
)
notebooks = st.one_of(
    nbformat_notebooks,
    st.fixed_dictionaries(  # of any shape
        {
            "cells": st.lists(cells, max_size=4),
            "nbformat": st.just(4) | json_values,
            "nbformat_minor": st.integers(-1, 10) | json_values,
        },
        optional={"metadata": st.just({}) | json_values},
    ),
    st.fixed_dictionaries(
        {"cells": st.lists(cells, max_size=4)},
        optional={
            "metadata": st.just({}) | json_values,
            "nbformat": st.sampled_from([4, 3, 5, 1, "4"]) | json_values,
            "nbformat_minor": st.integers(-1, 10) | json_values,
            "worksheets": st.lists(st.fixed_dictionaries({"cells": st.lists(cells, max_size=3)})),
        },
    ),
    json_values,
)

cookie_names = st.one_of(
    st.sampled_from(CODEC_NAMES),
    st.text("abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=15),
    st.text(max_size=8),
)
cookie_lines = st.sampled_from(
    ["# -*- coding: {} -*-\n", "# coding={}\n", "#!/usr/bin/env python\n# vim: fileencoding={}\n"]
)
bodies = st.one_of(
    st.binary(max_size=200),
    code_text.map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from(SOLUTION_SOURCES).map(str.encode),
)


@st.composite
def declared_files(draw) -> bytes:
    """An exercise file that declares a coding: every name Python knows, and others."""
    bom = draw(st.sampled_from([b"", codecs.BOM_UTF8]))
    line = draw(cookie_lines).format(draw(cookie_names)).encode("utf-8", "surrogatepass")
    return bom + line + draw(bodies)


# --- the property ---------------------------------------------------------------------------------


def taken_in(take, written: bool = True) -> Submission | None:
    """``take()``'s submission, or None for its ``SubmissionError`` (one line); any other
    exception fails the test. An exercise is a file or a problem (one line), never both; a file
    the intake ``written`` (from a notebook's cells) is UTF-8 text."""
    try:
        submission = take()
    except SubmissionError as exc:
        assert str(exc) and "\n" not in str(exc), repr(str(exc))
        return None
    try:
        for ex_id, path in submission.files.items():
            assert ex_id not in submission.problems
            if written:
                path.read_bytes().decode("utf-8")
        for problem in submission.problems.values():
            assert problem and "\n" not in problem, repr(problem)
        return submission
    finally:
        submission.cleanup()


@pytest.fixture(scope="module")
def scratch():
    folder = Path(tempfile.mkdtemp(prefix="intake-fuzz-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def a_folder_with(scratch: Path, data: bytes) -> Path:
    folder = scratch / "sub"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "exercises").mkdir(parents=True)
    (folder / "exercises" / FIRST.filename).write_bytes(data)
    return folder


# --- exercise files -------------------------------------------------------------------------------


@FUZZ
@given(data=st.one_of(st.binary(max_size=400), declared_files()))
def test_any_bytes_as_an_exercise_file(scratch, data):
    problem = file_problem(f"exercises/{FIRST.filename}", data)
    assert problem is None or (problem and "\n" not in problem)
    submission = taken_in(lambda: open_path(a_folder_with(scratch, data)), written=False)
    assert submission is not None  # a folder with its exercises/ is always taken in
    assert (FIRST.id in submission.files) != (FIRST.id in submission.problems)
    if problem:
        assert submission.problems[FIRST.id] == problem


def test_every_codec_name_as_a_coding_cookie():
    """A file declaring any codec Python knows is taken in, or refused in one line; a plain
    ASCII program taken in is one Python reads in that coding."""
    crashes = {}
    for name in CODEC_NAMES:
        plain = f"# -*- coding: {name} -*-\nx = 1\n".encode()
        if file_problem("exercises/x.py", plain) is None:
            compile(plain, "x.py", "exec", dont_inherit=True)
        for body in (b"x = 1\n", "x = 'caf\u00e9'\n".encode(), b"\xff\xfe\x00x\n", b"k = 1\n" * 40):
            data = f"# -*- coding: {name} -*-\n".encode() + body
            try:
                problem = file_problem("exercises/x.py", data)
            except Exception as exc:
                crashes[name] = f"{type(exc).__name__}: {exc}"
                continue
            assert problem is None or (problem.startswith("exercises/x.py") and "\n" not in problem)
    assert not crashes


# --- notebooks ------------------------------------------------------------------------------------


def a_notebook_with(scratch: Path, data: bytes) -> Path:
    path = scratch / "answers.ipynb"
    path.write_bytes(data)
    return path


@FUZZ
@given(notebook=nbformat_notebooks)
def test_any_cells_in_a_well_formed_notebook(scratch, notebook):
    data = json.dumps(notebook).encode()  # a lone surrogate is written as "\ud800"
    submission = taken_in(lambda: open_path(a_notebook_with(scratch, data), scratch_in=scratch))
    assert submission is not None  # its cells may be anything: the notebook is readable
    for ex in EXERCISES:  # each exercise is a file, a refused cell, or absent
        assert [
            ex.id in submission.files,
            ex.id in submission.problems,
            ex.id in submission.absent,
        ].count(True) == 1, ex.id


@FUZZ
@given(notebook=notebooks)
def test_any_notebook_json(scratch, notebook):
    data = json.dumps(notebook).encode()
    taken_in(lambda: open_path(a_notebook_with(scratch, data), scratch_in=scratch))


@FUZZ
@given(
    data=st.one_of(
        st.binary(max_size=300),
        notebooks.map(lambda nb: json.dumps(nb, ensure_ascii=False).encode("utf-8", "replace")),
    )
)
def test_any_bytes_as_a_notebook(scratch, data):
    taken_in(lambda: open_path(a_notebook_with(scratch, data), scratch_in=scratch))


@FUZZ
@given(inputs=st.lists(code_text, max_size=5))
def test_any_kernel_inputs(inputs):
    taken_in(lambda: open_cells(["", *inputs], "kernel"))


# --- zips -----------------------------------------------------------------------------------------

MODES = [0, 0o100644, 0o040755, 0o120777, 0o010644, 0o020644, 0o140644]
member_names = st.one_of(
    st.sampled_from(
        [
            f"exercises/{FIRST.filename}",
            f"alice/exercises/{FIRST.filename}",
            FIRST.filename,
            "exercises/",
            "exercises",
            "alice.ipynb",
            "../evil.py",
            "/abs.py",
            "C:/x.py",
            "a\\b.py",
            "__MACOSX/x",
            ".hidden/exercises/x.py",
            "a//b/./c.py",
        ]
    ).map(str.encode),
    st.binary(min_size=3, max_size=12),  # not UTF-8, perhaps flagged UTF-8 all the same
)


@st.composite
def zips(draw) -> bytes:
    """A zip of random members (names as any bytes, data, modes, flags), perhaps damaged."""
    buffer = io.BytesIO()
    names, flags = [], []
    with zipfile.ZipFile(buffer, "w") as zf:
        for k in range(draw(st.integers(0, 4))):
            names.append(draw(member_names))
            flags.append(draw(st.sampled_from([0, 0x1, 0x800, 0x801])))  # encrypted, UTF-8
            info = zipfile.ZipInfo(f"{k}".rjust(len(names[-1]), "@"))  # its bytes, set below
            info.external_attr = draw(st.sampled_from(MODES) | st.integers(0, 0xFFFF)) << 16
            info.compress_type = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
            data = draw(bodies | st.sampled_from([b"", json.dumps({"cells": []}).encode()]))
            zf.writestr(info, data)
    data = buffer.getvalue()
    for k, name in enumerate(names):  # in the local header and the central directory
        data = data.replace(f"{k}".rjust(len(name), "@").encode(), name)
    data = bytearray(data)
    for signature, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # the members' flags
        pos = -1
        for flag in flags:
            pos = data.find(signature, pos + 1)
            if pos >= 0:
                data[pos + at] |= flag & 0xFF
                data[pos + at + 1] |= flag >> 8
    for _ in range(draw(st.integers(0, 3))):  # damage: a byte changed anywhere
        if data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    if draw(st.booleans()) and data:  # or the zip cut short
        data = data[: draw(st.integers(0, len(data)))]
    return bytes(data)


@FUZZ
@given(data=zips())
def test_any_zip(scratch, data):
    path = scratch / "alice.zip"
    path.write_bytes(data)
    unpacked = scratch / "unpacked"
    taken_in(lambda: open_zip(path, unpacked, max_bytes=2**20, max_files=20), written=False)
