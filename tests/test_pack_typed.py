"""A pack outside the tree that imports the face (``grader.pack``) type-checks under
``mypy --strict``, and mypy reads the face's annotations: a wrong argument is caught.

mypy finds ``grader`` through ``MYPYPATH`` here: the editable install of the tests is an
import hook, which mypy does not follow. An installed wheel is found in site-packages, read as
typed because it ships ``py.typed`` (PEP 561; ``tests/test_packaging.py`` checks the wheel
carries it)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from support import ROOT

pytest.importorskip("mypy")

CHECKS = '''
"""The judge side of a tiny pack: one check of an answer ``double``."""

from typing import Any

from hypothesis import strategies as st

from grader.pack.judge import Check, CheckFailed, Worker


def _run(worker: Worker, x: int) -> None:
    got: Any = worker.call("call", args=[["x", x]])
    if got != 2 * x:
        raise CheckFailed(f"double({x}) returned {got!r}, expected {2 * x}")


CHECKS: list[Check] = [
    Check(name="doubles", points=1.0, strategy=st.integers(), run=_run, hint="x + x"),
]
'''

PROBES = '''
"""The worker side of the tiny pack: its probe table."""

from grader.pack.worker import Probe, answer_probes

PROBES: dict[str, Probe] = answer_probes("double")
'''


def strict(tmp_path, checks: str, probes: str) -> subprocess.CompletedProcess[str]:
    pack = tmp_path / "tiny_pack"
    pack.mkdir()
    (pack / "__init__.py").write_text('"""A tiny pack, outside the grader\'s tree."""\n')
    (pack / "checks.py").write_text(textwrap.dedent(checks))
    (pack / "probes.py").write_text(textwrap.dedent(probes))
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir=/dev/null"]
        + ["--ignore-missing-imports", "--follow-imports=silent", "tiny_pack"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(ROOT)},
        timeout=600,
    )


@pytest.mark.slow
def test_a_pack_outside_the_tree_type_checks_strictly_against_the_face(tmp_path):
    done = strict(tmp_path, CHECKS, PROBES)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_the_face_is_read_typed_so_a_misuse_is_caught(tmp_path):
    """Were ``grader`` untyped to mypy (no py.typed), a wrong argument would pass unseen."""
    wrong = CHECKS.replace("points=1.0", 'points="one"')
    done = strict(tmp_path, wrong, PROBES)
    assert done.returncode == 1 and "points" in done.stdout, done.stdout + done.stderr
