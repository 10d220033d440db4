"""Fair before strict (DESIGN §5.12): ordinary library use in an answer is never tampering.

The instructor's solution with one line added, as honest students write it (a progress bar at
import or inside a function, a thread pool, a daemon thread, ``torch.compile``, a leftover
``breakpoint()``, ``cProfile``, the ``gc.get_objects()`` snippet that hunts leaked tensors),
gets full marks through ``grade``; an explicit ``pdb.set_trace()`` gets a reason in the
student's terms that accuses no one. The acts that are tampering keep their verdict
(tests/hostile/tamper_*.py, tests/test_tripwire.py)."""

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
