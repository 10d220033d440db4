"""The Python examples of docs/writing-an-exercise.md run (issue 42): every fenced ``python``
block is executed on its own, in a fresh namespace, in a temporary folder, so that what an
author copies from the page imports and works as written (a block's own ``assert`` lines say
what it shows)."""

from __future__ import annotations

import re

import pytest
from support import ROOT

PAGE = ROOT / "docs" / "writing-an-exercise.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[int, str]]:
    text = PAGE.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in BLOCK.finditer(text)]


def test_the_page_has_examples():
    assert len(blocks()) >= 5


@pytest.mark.parametrize(("line", "code"), blocks(), ids=[f"line{n}" for n, _ in blocks()])
def test_the_example_runs(line, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{PAGE.name}:{line}", "exec"), {"__name__": f"doc_example_{line}"})
