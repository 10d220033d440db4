"""docs/architecture.md matches the tree: every file and folder it names exists.

A name in backticks that looks like a path (a ``/`` in it, or a file's extension) is looked up:
from the repository's root when it starts with a top-level folder or file (``grader/judge/``,
``templates/report.html.j2``, ``pyproject.toml``); under ``grader/`` when it starts with one of
its folders (``judge/engine.py``, as the walk-through says); and a bare file name
(``engine.py``, named inside its folder's paragraph) somewhere in the packages and templates;
``protocol/boot.spawn_arguments``, a module then an attribute, where the module is.
"""

from __future__ import annotations

import re

from support import ROOT

DOC = ROOT / "docs" / "architecture.md"
EXTENSIONS = (".py", ".md", ".toml", ".json", ".j2", ".txt", ".sh", ".ipynb", ".cfg", ".in")
SEARCHED = ("grader", "llm_pack", "reference", "templates", "exercises", "tests", "docs")


def named_paths(text: str) -> list[str]:
    """The path-like names in backticks, in order, once each."""
    names = []
    for code in re.findall(r"`([^`\n]+)`", text):
        if re.fullmatch(r"[\w.\-/]+", code) and ("/" in code or code.endswith(EXTENSIONS)):
            if code not in names:
                names.append(code)
    return names


def exists(name: str) -> bool:
    """Whether ``name`` is in the tree; ``protocol/boot.spawn_arguments`` (a module's name, as
    a path, then an attribute) when its module is."""
    if _found(name):
        return True
    folder, _, last = name.rpartition("/")
    return bool(folder) and "." in last and _found(f"{folder}/{last.split('.')[0]}.py")


def _found(name: str) -> bool:
    path = name.rstrip("/")
    first = path.split("/", 1)[0]
    if (ROOT / first).exists() and not (ROOT / "grader" / first).is_dir():
        return (ROOT / path).exists()
    if (ROOT / "grader" / first).exists():
        return (ROOT / "grader" / path).exists()
    return any(any((ROOT / top).rglob(path)) for top in SEARCHED if "/" not in path)


def test_the_doc_names_paths():
    names = named_paths(DOC.read_text(encoding="utf-8"))
    assert "judge/engine.py" in names and "grader/editions/" in names
    assert len(names) > 50


def test_every_path_architecture_md_names_exists():
    missing = [n for n in named_paths(DOC.read_text(encoding="utf-8")) if not exists(n)]
    assert not missing, f"docs/architecture.md names paths that are not in the tree: {missing}"


def test_every_folder_of_grader_has_a_row():
    """Each room of the grader is in the tree's table."""
    text = DOC.read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `(grader/[\w/]+/)` \|", text, re.M))
    folders = {
        f"grader/{p.name}/"
        for p in (ROOT / "grader").iterdir()
        if p.is_dir() and (p / "__init__.py").exists()
    }
    assert folders - rows == set(), f"folders of grader/ without a row: {folders - rows}"
