"""What student code prints in a worker: ``sys.stdout`` and ``sys.stderr`` behave as text
streams with a working ``.buffer``, all on one capped budget (grader/worker/bounds.py)."""

from __future__ import annotations

import os

from support import SOLUTION, grade_folder, make_submission

from grader.worker.bounds import CappedStream, OutputBudget


def test_text_and_bytes_share_one_budget_and_the_cap_cuts_both():
    r, w = os.pipe()
    budget = OutputBudget(10)
    out, err = CappedStream(w, budget, "<stdout>"), CappedStream(w, budget, "<stderr>")
    assert out.write("abc") == 3
    assert out.buffer.write(b"defg") == 4
    assert err.buffer.write(memoryview(bytearray(b"hijklmnop"))) == 9  # told all was written
    assert out.buffer.fileno() == w and out.buffer.writable() and out.errors == "replace"
    os.close(w)
    with os.fdopen(r, "rb") as f:
        assert f.read() == b"abcdefghijk"  # the cap, and one byte past it: output was cut


def test_a_file_that_writes_bytes_to_stdout_is_graded_as_in_python(tmp_path):
    source = (SOLUTION / "exercises" / "ex3_1_weight_transfer.py").read_text()
    answer = tmp_path / "ex3_1_weight_transfer.py"
    answer.write_text(
        "import sys\nsys.stdout.buffer.write(b'bytes\\n')\nsys.stderr.buffer.flush()\n" + source
    )
    result = grade_folder(make_submission(tmp_path / "sub", {"3.1": answer}), ["3.1"])
    (exercise,) = result.exercises
    assert exercise.status == "passed", [c.message for c in exercise.checks]
