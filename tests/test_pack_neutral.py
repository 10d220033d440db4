"""The grader names no exercise (issue 35; docs/architecture.md, rule 11 of the design): every
text file under ``grader/`` is searched for what belongs to a pack, so that a course's own pack
(chapter 5's ``"5.1"``, or ids that are no numbers at all) reads the grader's help, messages and
hints without the first pack's words in them.

What counts as naming an exercise, read from the packs (the first pack's ``pack.toml`` and every
pack installed), so the test follows them:

- an exercise id where it is used as one: quoted (``"3.1"``), after "exercise" (``exercise
  3.1``, the tag ``exercise-3.1``), after ``-e``/``--exercise``; and an id that looks like a
  number standing alone in prose (``a 4.2 helper``, ``3.3's mask``), unless it is a version
  (``torch 2.4``, ``>=3.1``), a quantity (``3.2 s``) or a number in code (``x = 0.5``);
- an exercise's module or file (``ex3_1``, ``ex3_1_weight_transfer.py``, any ``ex<digits>_``),
  the pack's name or package;
- the words chapter(s) (and ``ch34``), six, and the book;
- the names a pack's exercises ask the student for (``transfer_weights``, ...) and those its
  shared code defines (the first pack's ``reference``: ``MultiHeadAttention``,
  ``GPT_CONFIG_124M``, ...), read from its files, never imported; and a shared package named
  as a module (``from reference import``, ``reference/``, ``"reference"``). The submissions'
  folder ``exercises/`` is the grader's own layout, not a pack's.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from support import ROOT

from grader.shared.course import packs
from grader.shared.packs import Pack, PackError, read_pack

GRADER = ROOT / "grader"
FIRST_PACK = ROOT / "llm_pack"

# The folder a submission keeps its answers in: the grader's layout (grader.intake.load).
SUBMISSION_FOLDER = "exercises"

WORDS = re.compile(
    r"\b(?:[Cc]hapters?|CHAPTERS?|[Ss]ix|SIX|[Bb]ook)\b|From Scratch|(?<![A-Za-z0-9_])ch\d"
)
SIX_OF = re.compile(r"\b(?:all|the)\s+6\b|\b6\s+(?:exercises?|files|modules|stubs|checks)\b")
MODULE = re.compile(r"\bex\d+_\d+")
NUMBER_LIKE = re.compile(r"^\d+(?:\.\d+)+$")
PLAIN_WORD = re.compile(r"^[a-z]+$")  # a name that could be an English word
# Before a bare number: it is a version (torch 2.4, Python 3.10, >=3.1, v4.1) or a section
# (DESIGN 5.10, §5.1).
VERSION_BEFORE = re.compile(
    r"(?:\b(?:torch|[Pp]ython|[Vv]ersions?|release|jinja2?|numpy|pip|v|DESIGN|[Ss]ection)\s*"
    r"|[<>=~!]=?\s*|§\s*)$"
)
# After a bare number: a quantity (3.2 s, 4.1 MiB, 1.5x).
UNIT_AFTER = re.compile(r"^\s*(?:s|ms|us|µs|x|%|[KMG]i?B|seconds?|minutes?)\b")


@dataclass(frozen=True)
class Hit:
    where: str
    line: int
    what: str
    text: str

    def __str__(self) -> str:
        return f"{self.where}:{self.line}: {self.what}: {self.text.strip()[:120]}"


def the_packs() -> list[Pack]:
    """The first pack (read from its folder, whatever is installed) and every installed pack."""
    found = {FIRST_PACK.resolve(): read_pack(FIRST_PACK)}
    try:
        for pack in packs():
            found.setdefault(pack.folder, pack)
    except PackError:
        pass
    return list(found.values())


def shared_files(pack: Pack, package: str) -> list[Path]:
    """The ``.py`` files of a package (or module) a pack shares, found beside the pack or, for
    a top-level name, where it is installed; never imported."""
    here = pack.folder.parent.joinpath(*package.split("."))
    if here.with_suffix(".py").is_file():
        return [here.with_suffix(".py")]
    if not here.is_dir() and "." not in package:
        from importlib.util import find_spec

        spec = find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            here = Path(list(spec.submodule_search_locations)[0])
    return sorted(here.rglob("*.py")) if here.is_dir() else []


def defined_names(path: Path) -> set[str]:
    """The public names a module defines at its top (classes, functions, assignments)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


@dataclass
class Vocabulary:
    ids: set[str]
    names: set[str]  # the student's names and the shared code's
    words: set[str]  # modules, files, packs: matched as words
    packages: set[str]  # shared packages, matched where named as modules


def vocabulary() -> Vocabulary:
    v = Vocabulary(set(), set(), set(), set())
    for pack in the_packs():
        v.words.update({pack.name, pack.package})
        for ex in pack.exercises:
            v.ids.add(ex.id)
            v.names.update(ex.names)
            v.words.update({ex.module, ex.filename, ex.filename.removesuffix(".py")})
        for package in pack.shared:
            if package != SUBMISSION_FOLDER:
                v.packages.add(package)
            for path in shared_files(pack, package):
                v.names.update(defined_names(path))
    return v


def alternatives(words: set[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


@dataclass(frozen=True)
class Patterns:
    """The vocabulary's regular expressions, compiled once."""

    ids: re.Pattern  # an id where it is used as one: quoted, after "exercise", after -e
    bare: re.Pattern | None  # an id that looks like a number, standing alone
    names: re.Pattern
    as_module: re.Pattern | None

    @classmethod
    def of(cls, v: Vocabulary) -> Patterns:
        ids, end = alternatives(v.ids), r"(?![\w]|\.\d)"
        numbers = {i for i in v.ids if NUMBER_LIKE.match(i)}
        packages = alternatives(v.packages)
        plain = {n for n in v.names | v.words if PLAIN_WORD.match(n)}
        coined = (v.names | v.words) - plain
        words = alternatives(plain)
        return cls(
            re.compile(
                rf"[\"'`](?:{ids})[\"'`]"
                rf"|\b(?i:exercises?)[\s-]+(?:{ids}){end}"
                rf"|(?:^|\s)(?:-e|--exercise)[\s=]+(?:{ids}){end}"
            ),
            re.compile(rf"(?<![\w.])(?:{alternatives(numbers)}){end}") if numbers else None,
            re.compile(
                # torch's own classes (nn.LayerNorm) are not the pack's
                rf"(?<!\w)(?<!nn\.)(?:{alternatives(coined)})(?!\w)"
                # a name that is also a plain word ("generate") where it is used as a name
                + (rf"|`(?:{words})`|(?<![\w.])(?:{words})\(" if plain else "")
            ),
            re.compile(
                rf"\b(?:from|import)\s+(?:{packages})\b|[\"'`](?:{packages})[\"'`]"
                rf"|(?<![\w/.])(?:{packages})/"
            )
            if packages
            else None,
        )


def named_id(match: str, ids: set[str]) -> str:
    """The id that a match of ``Patterns.ids`` holds (the longest that fits)."""
    return max((i for i in ids if i in match), key=len)


def code_numbers(text: str) -> set[tuple[int, int]]:
    """(line, column) of every number in a Python file's code (not in its strings)."""
    found = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NUMBER:
                found.add(token.start)
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def search(path: Path, text: str, v: Vocabulary, patterns: Patterns | None = None) -> list[Hit]:
    """Every place of ``text`` (the file ``path``) that names something of a pack."""
    where = path.relative_to(ROOT).as_posix()
    patterns = patterns or Patterns.of(v)
    numbers: set[tuple[int, int]] | None = None  # read when a bare number is found
    hits = []
    for number, line in enumerate(text.splitlines(), start=1):
        found = [f"exercise id {named_id(m.group(0), v.ids)}" for m in patterns.ids.finditer(line)]
        for m in patterns.bare.finditer(line) if patterns.bare else ():
            if VERSION_BEFORE.search(line[: m.start()]) or UNIT_AFTER.match(line[m.end() :]):
                continue
            if numbers is None:
                numbers = code_numbers(text) if path.suffix == ".py" else set()
            if (number, m.start()) not in numbers:  # a number in code is no id
                found.append(f"exercise id {m.group(0)}")
        found += [f"the module {m.group(0)}" for m in MODULE.finditer(line)]
        found += [f"word {m.group(0)!r}" for m in WORDS.finditer(line)]
        found += [f"the number six ({m.group(0)!r})" for m in SIX_OF.finditer(line)]
        found += [
            f"the pack's name {m.group(0).strip('`(')}"
            for m in patterns.names.finditer(line)
            if not MODULE.match(m.group(0))  # said once, above
        ]
        if patterns.as_module:
            found += [f"shared package {m.group(0)!r}" for m in patterns.as_module.finditer(line)]
        hits += [Hit(where, number, what, line) for what in dict.fromkeys(found)]
    return hits


def text_files() -> list[Path]:
    files = []
    for path in sorted(GRADER.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        files.append(path)
    return files


def read_text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def all_hits() -> list[Hit]:
    v = vocabulary()
    patterns = Patterns.of(v)
    hits = []
    for path in text_files():
        text = read_text(path)
        if text is not None:
            hits += search(path, text, v, patterns)
    return hits


def test_no_file_of_the_grader_names_an_exercise():
    hits = all_hits()
    assert not hits, f"{len(hits)} places name a pack's exercise:\n" + "\n".join(map(str, hits))


def test_the_vocabulary_is_read_from_the_packs():
    v = vocabulary()
    assert {"3.1", "4.3"} <= v.ids
    assert {"transfer_weights", "GPT_CONFIG_SPLIT_DROPOUT"} <= v.names
    assert {"SelfAttention_v1", "MultiHeadAttention", "GPT_CONFIG_124M"} <= v.names
    assert {"ex3_1", "ex3_1_weight_transfer.py"} <= v.words
    assert "reference" in v.packages and SUBMISSION_FOLDER not in v.packages


def test_the_search_finds_what_names_an_exercise_and_not_versions():
    v = vocabulary()
    v.ids |= {"5.1", "intro"}
    v.names |= {"generate"}
    lines = {
        "grade only this exercise (3.1 ... 4.3); repeatable": 2,
        'exercises = ["5.1"]  # 5.1 alone': 1,
        "cells tagged exercise-intro hold it": 1,
        "grade -e intro -v": 1,
        "a 4.2 helper written before 4.3's model": 2,
        "# the chapter 3-4 pack": 1,
        "https://example.invalid/llm-ch34-grader/": 1,
        "grades all six exercises": 1,
        "the book's classes": 1,
        "from reference import MultiHeadAttention": 2,
        "files under reference/ are shared": 1,
        "# exercises/ex3_1_weight_transfer.py::<check>": 1,
        "torch>=2.4, Python 3.10 to 3.13, jinja2 3.1 and torch 4.1": 0,
        "as DESIGN 4.3 and §3.1 say": 0,
        "it took 3.2 s and 4.1 MiB": 0,
        "the intro of the exercise; six_of = 6; nn.LayerNorm": 0,
        "a submission holds exercises/ with its answers": 0,
        "we generate examples": 0,
        "call ``generate`` or generate(model)": 1,
    }
    for line, expected in lines.items():
        found = search(GRADER / "example.txt", line + "\n", v)
        assert len(found) == expected, (line, [str(h) for h in found])
    # a number in code is no id; the same number in a comment or a string is one
    code = 'timeout = 4.1\nlimit = 3.1  # for 3.1\nhelp = "the 4.3 model"\n'
    assert [h.line for h in search(GRADER / "example.py", code, v)] == [2, 3]
