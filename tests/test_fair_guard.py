"""Fair before strict (DESIGN §5.12): ordinary library use in an answer is never tampering.

The instructor's solution with one line added, as honest students write it (a progress bar at
import or inside a function, a thread pool, a daemon thread, ``torch.compile``, a leftover
``breakpoint()``, ``cProfile``, the ``gc.get_objects()`` snippet that hunts leaked tensors),
gets full marks through ``grade``; an explicit ``pdb.set_trace()`` gets a reason in the
student's terms that accuses no one. The acts that are tampering keep their verdict
(tests/hostile/tamper_*.py, tests/test_tripwire.py).

What ``python exercises/exN.py`` finds is found (issue 55): a helper module beside the exercise
(the book's ``previous_chapters.py``), data files at the root or beside it, as a file, in a
notebook, through ``grader.check`` and in a batch; ``import numba`` is no tampering; what
grading lacks (network, keyboard input, process pools) is said in one sentence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import grader.commands.cli
from grader.result.schema import TAMPERED

SOLUTION = Path(__file__).parent / "submissions" / "solution"
FILE = "ex4_2_scaled_configs.py"

AT_IMPORT = {
    "tqdm at import": "from tqdm import tqdm\nfor _ in tqdm(range(3)):\n    pass\n",
    "thread pool": (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "_pool = ThreadPoolExecutor(2)\n_pool.submit(abs, -1).result()\n"
    ),
    "daemon thread": (
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n"
    ),
    "cProfile.run": "import cProfile\ncProfile.run('sum(range(10))')\n",
    "gc.get_objects": (
        "import gc, torch\n_live = sum(1 for o in gc.get_objects() if torch.is_tensor(o))\n"
    ),
    "a trace left set": "import sys\nsys.settrace(lambda *a: None)\n",
    "torch.compile at import": (
        "import torch\nassert torch.compile(lambda t: t + 1)(torch.ones(2)).sum().item() == 4.0\n"
    ),
}
IN_FUNCTION = {
    "tqdm in total_params": (
        "    from tqdm import tqdm\n    for _ in tqdm(range(3)):\n        pass\n"
    ),
    "breakpoint()": "    breakpoint()\n",
    "torch.compile in total_params": (
        "    import torch\n"
        "    count = torch.compile(lambda m: sum(p.numel() for p in m.parameters()))\n"
        "    return count(GPTModel(cfg))\n"
    ),
}


def with_line(tmp_path: Path, top: str = "", inner: str = "") -> Path:
    """The solution, with ``top`` added at the end of 4.2's file and ``inner`` as the first
    lines of its ``total_params``."""
    dest = tmp_path / "sub"
    shutil.copytree(SOLUTION, dest)
    path = dest / "exercises" / FILE
    text = path.read_text(encoding="utf-8")
    head = "def total_params(cfg):\n"
    assert head in text
    path.write_text(text.replace(head, head + inner) + "\n" + top, encoding="utf-8")
    return dest


def grade_42(submission: Path, monkeypatch, capsys) -> dict:
    monkeypatch.delenv("PYTHONBREAKPOINT", raising=False)
    code = grader.commands.cli.main([str(submission), "-e", "4.2", "--format", "json"])
    out = capsys.readouterr().out
    assert code in (0, 1), f"the grader failed: exit status {code}"
    return json.loads(out[out.index("{") :])["exercises"][0]


@pytest.mark.parametrize(
    "top,inner",
    [(line, "") for line in AT_IMPORT.values()] + [("", line) for line in IN_FUNCTION.values()],
    ids=[*AT_IMPORT, *IN_FUNCTION],
)
def test_ordinary_library_use_gets_full_marks(top, inner, tmp_path, monkeypatch, capsys):
    exercise = grade_42(with_line(tmp_path, top, inner), monkeypatch, capsys)
    messages = [c["message"] for c in exercise["checks"] if not c["passed"]]
    assert exercise["status"] == "passed", messages
    assert exercise["score"] == exercise["max_score"]


def test_a_debugger_call_is_told_in_the_students_terms(tmp_path, monkeypatch, capsys):
    sub = with_line(tmp_path, inner="    import pdb\n    pdb.set_trace()\n")
    exercise = grade_42(sub, monkeypatch, capsys)
    messages = " ".join(c["message"] for c in exercise["checks"])
    assert exercise["status"] == "failed"
    assert "stopped at a debugger" in messages and "Remove the call" in messages
    assert TAMPERED not in messages and "changed the grader" not in messages


# --- what `python exercises/exN.py` finds: helper modules, data files (issue 55) ------------

HELPER = "from reference import MultiHeadAttention  # the book's previous_chapters.py\n"
# Named like modules the worker (or the pack) uses: with the exercise's folder first on the
# path, none of them may replace what the worker needs before the student's code runs.
SHADOWS = ("reference", "linecache", "json", "tripwire")
USES_FILES = (
    "import os\n"
    "from previous_chapters import MultiHeadAttention\n"
    "HERE = os.path.dirname(os.path.abspath(__file__))\n"
    "with open('the-verdict.txt', encoding='utf-8') as _f:  # the current folder\n"
    "    assert _f.read().startswith('I HAD always')\n"
    "with open(os.path.join(HERE, 'notes.txt'), encoding='utf-8') as _f:  # beside the file\n"
    "    assert _f.read() == 'beside'\n"
)


def with_helpers(folder: Path) -> None:
    """``previous_chapters.py`` and a data file beside the exercises, one at ``folder``."""
    (folder / "previous_chapters.py").write_text(HELPER, encoding="utf-8")
    (folder / "notes.txt").write_text("beside", encoding="utf-8")
    for name in SHADOWS:
        (folder / f"{name}.py").write_text("raise RuntimeError('shadowed')\n", encoding="utf-8")


def answer_33(folder: Path, top: str) -> Path:
    """3.3's solution in ``folder`` with ``top`` first and its own class import left out."""
    text = (SOLUTION / "exercises" / "ex3_3_gpt2_attention.py").read_text(encoding="utf-8")
    path = folder / "ex3_3_gpt2_attention.py"
    path.write_text(top + "\n" + text, encoding="utf-8")
    return path


def grade_one(path: Path, exercise: str, monkeypatch, capsys) -> dict:
    monkeypatch.chdir(path.parent if path.is_file() else path)
    code = grader.commands.cli.main([str(path), "-e", exercise, "--format", "json"])
    out = capsys.readouterr().out
    assert code in (0, 1), f"the grader failed: exit status {code}"
    return json.loads(out[out.index("{") :])["exercises"][0]


def assert_full_marks(exercise: dict) -> None:
    messages = [c["message"] for c in exercise["checks"] if not c["passed"]]
    assert exercise["status"] == "passed", messages
    assert exercise["score"] == exercise["max_score"]


def test_helper_modules_and_data_files_as_python_finds_them(tmp_path, monkeypatch, capsys):
    sub = tmp_path / "sub"
    shutil.copytree(SOLUTION, sub)
    (sub / "the-verdict.txt").write_text("I HAD always thought", encoding="utf-8")
    with_helpers(sub / "exercises")
    answer_33(sub / "exercises", USES_FILES)
    assert_full_marks(grade_one(sub, "3.3", monkeypatch, capsys))


def test_a_notebook_finds_the_files_beside_it(tmp_path, monkeypatch, capsys):
    from nbsupport import solution_source, write_notebook

    folder = tmp_path / "work"
    folder.mkdir()
    with_helpers(folder)
    (folder / "the-verdict.txt").write_text("I HAD always thought", encoding="utf-8")
    source = solution_source("3.3").replace("from reference import MultiHeadAttention\n", "")
    notebook = write_notebook(
        folder / "answers.ipynb", [("code", USES_FILES), ("code", source, ["exercise-3.3"])]
    )
    assert_full_marks(grade_one(notebook, "3.3", monkeypatch, capsys))


@pytest.mark.slow
def test_in_a_batch_helpers_and_data_files_are_each_students_own(tmp_path):
    import csv
    import zipfile

    from nbsupport import solution_source, write_notebook
    from support import grade_cli

    klass = tmp_path / "class"
    shutil.copytree(SOLUTION, klass / "alice")
    (klass / "alice" / "the-verdict.txt").write_text("I HAD always thought", encoding="utf-8")
    with_helpers(klass / "alice" / "exercises")
    answer_33(klass / "alice" / "exercises", USES_FILES)
    bob = tmp_path / "bob"
    bob.mkdir()
    with_helpers(bob)
    (bob / "the-verdict.txt").write_text("I HAD always thought", encoding="utf-8")
    source = solution_source("3.3").replace("from reference import MultiHeadAttention\n", "")
    write_notebook(bob / "bob.ipynb", [("code", USES_FILES), ("code", source, ["exercise-3.3"])])
    with zipfile.ZipFile(klass / "bob.zip", "w") as z:
        for path in bob.iterdir():
            z.write(path, path.name)
    done = grade_cli("batch", str(klass), "-o", str(tmp_path / "out"), "-e", "3.3")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    rows = {r["name"]: r for r in csv.DictReader((tmp_path / "out" / "gradebook.csv").open())}
    assert rows["alice"]["total"] == "10" and rows["bob"]["total"] == "10", rows


def test_numba_is_no_tampering(tmp_path, monkeypatch, capsys):
    """llvmlite resolves its own library's symbols through ctypes (hundreds of ``dlsym``),
    numba reads the hash secret with ``in_dll`` and writes its JIT's globals with
    ``from_address``: the library's own business (tests/test_tripwire.py simulates it)."""
    pytest.importorskip("numba")
    top = "from numba import njit\n\n@njit\ndef _twice(x):\n    return 2 * x\n\n"
    top += "assert _twice(2) == 4\n"
    exercise = grade_42(with_line(tmp_path, top), monkeypatch, capsys)
    assert_full_marks(exercise)


# --- what grading does not offer: one sentence, the student's line, what to do --------------

LACKS = {
    "network at import": (
        "import urllib.request\n"
        # .invalid never resolves: the same error with a network or without (RFC 2606)
        "urllib.request.urlopen('https://the-verdict.invalid/the-verdict.txt').read()\n",
        ("without a network", "urllib.request.urlopen", 'if __name__ == "__main__":'),
    ),
    "input() at import": (
        "name = input('your name: ')\n",
        ("no keyboard input", "input('your name: ')", 'if __name__ == "__main__":'),
    ),
}


@pytest.mark.parametrize("habit", LACKS, ids=list(LACKS))
def test_what_grading_lacks_is_said(habit, tmp_path, monkeypatch, capsys):
    top, words = LACKS[habit]
    exercise = grade_42(with_line(tmp_path, top), monkeypatch, capsys)
    message = " ".join(c["message"] for c in exercise["checks"])
    assert exercise["verdict"] != TAMPERED, message
    for word in words:
        assert word in message, message
    assert "name resolution" not in message and "EOF when reading" not in message


def test_a_process_pool_works_or_is_explained(tmp_path, monkeypatch, capsys):
    top = (
        "from concurrent.futures import ProcessPoolExecutor\n"
        "with ProcessPoolExecutor(2) as _pool:\n"
        "    assert list(_pool.map(abs, [-1, -2])) == [1, 2]\n"
    )
    exercise = grade_42(with_line(tmp_path, top), monkeypatch, capsys)
    message = " ".join(c["message"] for c in exercise["checks"])
    if exercise["status"] != "passed":
        assert "grading does not offer here" in message, message
        assert "ThreadPoolExecutor" in message and "Read-only file system" not in message
    assert exercise["verdict"] != TAMPERED, message


def test_grader_check_in_a_kernel_takes_the_files_beside_the_notebook(tmp_path, monkeypatch):
    """``grader.check`` grades the cells a kernel ran: the files of its current folder (the
    notebook's) go with them, helper modules and data files alike."""
    from nbsupport import solution_source

    import grader.pipeline

    with_helpers(tmp_path)
    (tmp_path / "the-verdict.txt").write_text("I HAD always thought", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    source = solution_source("3.3").replace("from reference import MultiHeadAttention\n", "")
    submission = grader.pipeline.open_cells(["", USES_FILES, source], "kernel")
    try:
        folder = submission.files["3.3"].parent
        assert (folder / "previous_chapters.py").read_text(encoding="utf-8") == HELPER
        assert (folder / "the-verdict.txt").read_text(encoding="utf-8").startswith("I HAD")
    finally:
        submission.cleanup()
