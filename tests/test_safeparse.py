"""Deep code gets the same refusal on every Python (grader/shared/safeparse.py): Python 3.10
crashes on it and 3.11-3.13 refuse it at different depths, so the grader sets its own bound."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.shared.safeparse import MAX_DEPTH, depth_bound, parse, tree_depth

DEEP = [
    "x = " + "1+" * 200_000 + "1",  # crashed Python 3.10
    "x = a" + ".b" * 50_000,
    "x = f" + "()" * 50_000,
    "x = " + "-" * 50_000 + "1",
    "x = " + "not " * 50_000 + "y",
    "f = " + "lambda: " * 20_000 + "0",
    "x = " + "1+" * 2_000 + "1",  # refused by 3.11 and 3.12, not by 3.13
    "x = " + "1+" * (MAX_DEPTH + 5) + "1",  # refused by no Python, but by the grader
]


@pytest.mark.parametrize("source", DEEP, ids=lambda s: s[:12] + f"..({len(s)})")
def test_deep_code_is_refused_in_a_separate_interpreter(source):
    """In a fresh interpreter, so that a crash (3.10) fails this test instead of the run."""
    code = (
        "import sys; from grader.shared.safeparse import parse\n"
        "try:\n    parse(sys.stdin.read())\nexcept RecursionError as e:\n    print(e)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], input=source, capture_output=True, text=True, timeout=120
    )
    said = f"code nested deeper than {MAX_DEPTH} levels"
    assert proc.returncode == 0 and proc.stdout.strip() == said, proc.stderr[-500:]


def test_code_a_student_writes_parses_as_ast_parse_does():
    source = (
        "import torch\nclass A(torch.nn.Module):\n    def f(self, x):\n"
        "        return [(-i) ** 2 for i in range(x) if not i % 2 and i > 1]\n"
        "W = [[-1.0, -2.0] * 3] * 4000\n"
        "s = 'a' + 'b' + 'c'\n"
    )
    assert ast.dump(parse(source)) == ast.dump(ast.parse(source))


def test_flat_data_stays_low_and_chains_count_one_a_link():
    assert depth_bound("x = [" + "-1, " * 50_000 + "]") < 10
    assert depth_bound("x = " + "1+" * 5_000 + "1") >= 5_000
    assert depth_bound("x = a" + ".b" * 5_000) >= 5_000


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.sampled_from(["1+", "-", "a.", "not ", "(", "["]))
def test_the_bound_is_never_below_the_depth(n, link):
    closing = {"(": ")", "[": "]"}.get(link, "")
    source = "x = " + link * n + "1" + closing * n
    try:
        tree = ast.parse(source)
    except (SyntaxError, RecursionError):
        return  # more than 200 nested brackets: no Python parses it
    assert depth_bound(source) >= tree_depth(tree) - 3  # Module, Assign, Name: not per line


def test_threads_parse_one_at_a_time(monkeypatch):
    """CPython 3.11 and 3.12 may fail a parse with ``SystemError: AST constructor recursion
    depth mismatch`` while another thread parses (gh-106905; it failed
    test_sandbox.py::test_threads_can_share_one_server once): every parse of the grader's is
    one at a time, including the plain ones of a notebook's cells."""
    import threading
    import time

    from grader.shared import safeparse

    inside, most, lock, real = [0], [0], threading.Lock(), ast.parse

    def slow_parse(source, *args, **kwargs):
        if source != "x = 1":  # pytest's own parses
            return real(source, *args, **kwargs)
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.02)  # long enough for the other threads to come in, if they may
        with lock:
            inside[0] -= 1
        return ast.Module(body=[], type_ignores=[])

    monkeypatch.setattr(safeparse.ast, "parse", slow_parse)
    calls = [parse, safeparse.plain_parse] * 3
    threads = [threading.Thread(target=call, args=("x = 1",)) for call in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork here")
def test_a_child_forked_while_another_thread_parses_can_parse():
    """The lock is new in a forked child: the thread that held it in the parent is not there
    to let it go (in a fresh interpreter: the child would hang, not this test process)."""
    code = (
        "import os, threading\n"
        "from grader.shared import safeparse\n"
        "held, done = threading.Event(), threading.Event()\n"
        "def hold():\n"
        "    with safeparse._ONE_AT_A_TIME:\n"
        "        held.set(); done.wait()\n"
        "threading.Thread(target=hold).start(); held.wait()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    safeparse.plain_parse('x = 1'); os._exit(7)\n"
        "status = os.waitpid(pid, 0)[1]; done.set()\n"
        "print(os.waitstatus_to_exitcode(status))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20)
    assert proc.stdout.strip() == "7", proc.stderr
