"""Writing a pack (issue 35): ``grade new-exercise`` writes a scaffold whose marked places,
once filled in, give a pack that ``grade check-pack`` accepts; ``check-pack`` refuses the
untouched scaffold (its TODO places), fails a pack whose solution is broken or whose corpus
header names a check that passes, and says in one line that a folder is not a pack.

The places are filled here as an author would: each ``TODO(pack)`` comment block and the
statement right below it (or the docstring that holds one) is replaced by the new exercise's
code, found by the statement's name; every marked place must be replaced (a place the test
does not know fails it)."""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest
from support import ROOT, grade_cli

from grader.authoring.pastes import pasting_env

TODO = "TODO(pack)"


def grade(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``grade ARGS`` in ``cwd``, as a user runs it."""
    env = pasting_env()
    return grade_cli(*args, cwd=cwd, env=env, timeout=900)


# --- filling the marked places -------------------------------------------------------------


def _name(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.FunctionDef | ast.ClassDef):
        return stmt.name
    if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    raise AssertionError(f"a marked place this test cannot name: {ast.unparse(stmt)[:60]}")


def places(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, name) of every marked place of a module, 1-based."""
    lines = text.splitlines()
    found = []
    for stmt in ast.parse(text).body:
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            if TODO in stmt.value.value:
                found.append((stmt.lineno, stmt.end_lineno, "__doc__"))
            continue
        above = stmt.lineno - 1  # index of the statement's first line
        start = above
        while start > 0 and lines[start - 1].startswith("#"):
            start -= 1
        block = lines[start:above]
        marked = [i for i, line in enumerate(block) if TODO in line]
        if marked:
            found.append((start + marked[0] + 1, stmt.end_lineno, _name(stmt)))
    return found


def fill(path: Path, code: dict[str, str], every: bool = True) -> None:
    """Replace the marked places of ``path`` named in ``code`` with their code; ``every``:
    they must be all its marked places."""
    text = path.read_text()
    lines = text.splitlines()
    found = places(text)
    names = {name for *_, name in found}
    assert names == set(code) if every else names >= set(code), (path, found)
    for first, last, name in sorted(found, reverse=True):
        if name in code:
            lines[first - 1 : last] = code[name].strip("\n").splitlines()
    path.write_text("\n".join(lines) + "\n")
    assert not every or TODO not in path.read_text(), path


STUB = {
    "__doc__": '''"""Exercise 5.1: Scaled softmax.

Write ``scaled_softmax(x, temperature)``: the softmax of ``x / temperature`` over the last
dimension of the 1-D float tensor ``x``, for any ``temperature > 0``; ``x`` is left unchanged.
"""''',
    "scaled_softmax": '''def scaled_softmax(x, temperature):
    """softmax(x / temperature)."""
    raise NotImplementedError(
        "Exercise 5.1 is not done yet: write scaled_softmax() in "
        "exercises/ex5_1_scaled_softmax.py."
    )''',
}
SOLUTION = {
    "scaled_softmax": """def scaled_softmax(x, temperature):
    return torch.softmax(x / temperature, dim=-1)"""
}
CHECKS = {
    "examples": """def examples() -> st.SearchStrategy[dict]:
    values = st.floats(min_value=-5, max_value=5, allow_nan=False, width=32)
    return st.fixed_dictionaries(
        {
            "x": st.lists(values, min_size=1, max_size=6),
            "temperature": st.floats(min_value=0.25, max_value=4.0, width=32),
        }
    )""",
    "expected": """def expected(ex: dict) -> torch.Tensor:
    return torch.softmax(torch.tensor(ex["x"]) / ex["temperature"], dim=-1)""",
    "check_values": """def ask(worker, ex: dict) -> dict:
    return worker.call("call", x=torch.tensor(ex["x"]), temperature=ex["temperature"])


def check_values(worker, ex: dict) -> None:
    got = ask(worker, ex)["y"]
    if not isinstance(got, torch.Tensor):
        kind = returned(type(got).__name__)
        raise CheckFailed(f"scaled_softmax returned a {type(got).__name__}, not a tensor", kind)
    assert_close(got, expected(ex), f"scaled_softmax(x, {ex['temperature']}) for x = {ex['x']}")


def check_unchanged(worker, ex: dict) -> None:
    if not torch.equal(ask(worker, ex)["x_after"], torch.tensor(ex["x"])):
        raise CheckFailed("scaled_softmax changed x: divide into a new tensor")""",
    "reproduce": '''def reproduce(ex: dict) -> str:
    return f"""\\
import torch
from exercises.ex5_1_scaled_softmax import scaled_softmax

x = torch.tensor({ex["x"]!r})
print("got:     ", scaled_softmax(x.clone(), {ex["temperature"]!r}))
print("expected:", torch.softmax(x / {ex["temperature"]!r}, dim=-1))
"""''',
    "CHECKS": """CHECKS = [
    Check(
        name="scaled_softmax(x, temperature) is softmax(x / temperature), for any x",
        points=7,
        strategy=examples(),
        run=check_values,
        hint="divide x by the temperature, then take the softmax over the last dimension.",
        reproduce=reproduce,
    ),
    Check(
        name="scaled_softmax leaves x unchanged",
        points=3,
        strategy=examples(),
        run=check_unchanged,
        hint="x / temperature makes a new tensor; x /= temperature changes the caller's x.",
        reproduce=reproduce,
        max_examples=5,
    ),
]""",
}
PROBE = {
    "_ex5_1_call": """def _ex5_1_call(module, state, x, temperature):
    y = module.scaled_softmax(x, temperature)
    return {"y": plain(y, "scaled_softmax returned"), "x_after": plain(x, "x")}"""
}
WRONG = {
    "__doc__": '"""Multiplies by the temperature instead of dividing."""',
    "scaled_softmax": """# expect-failing: is softmax(x / temperature)
def scaled_softmax(x, temperature):
    return torch.softmax(x * temperature, dim=-1)""",
}
CORRECT = {
    "__doc__": '"""The softmax written out, with the maximum subtracted first."""',
    "scaled_softmax": """def scaled_softmax(x, temperature):
    z = x / temperature
    e = torch.exp(z - z.max())
    return e / e.sum()""",
}


def running_sum(path: Path) -> None:
    """Keep the worked example (a running sum) of a marked place: only its comments go."""
    text = path.read_text()
    lines = text.splitlines()
    for first, last, name in sorted(places(text), reverse=True):
        if name == "__doc__":
            lines[first - 1 : last] = [
                line.replace(f"{TODO}: ", "") for line in lines[first - 1 : last]
            ]
            continue
        end = first
        while lines[end - 1].startswith("#"):
            end += 1
        kept = [line for line in lines[first - 1 : end - 1] if line.startswith("# expect-")]
        lines[first - 1 : end - 1] = kept
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def scaffold(tmp_path_factory) -> Path:
    """A new pack with two exercises, as ``grade new-exercise`` writes it, untouched."""
    root = tmp_path_factory.mktemp("course")
    made = grade("new-exercise", "5.1", "--title", "Scaled softmax", cwd=root)
    assert made.returncode == 0, made.stderr
    assert "new pack course_pack/" in made.stdout and TODO in made.stdout
    again = grade("new-exercise", "5.2", "--title", "Running sum", cwd=root)
    assert again.returncode == 0, again.stderr
    assert "the only pack here" in again.stdout  # the second exercise joins the first's pack
    return root


@pytest.fixture(scope="module")
def filled(scaffold, tmp_path_factory) -> Path:
    """The scaffold with every marked place filled: 5.1 becomes a scaled softmax with two
    checks, 5.2 keeps the worked example."""
    root = tmp_path_factory.mktemp("filled") / "course"
    shutil.copytree(scaffold, root)
    pack = root / "course_pack"
    fill(root / "exercises" / "ex5_1_scaled_softmax.py", STUB)
    fill(root / "solution" / "exercises" / "ex5_1_scaled_softmax.py", SOLUTION)
    fill(pack / "checks" / "ex5_1.py", CHECKS)
    corpus = root / "tests" / "corpus" / "ex5_1"
    fill(corpus / "wrong_answer_1.py", WRONG)
    (corpus / "wrong_answer_1.py").rename(corpus / "wrong_multiplies.py")
    fill(corpus / "correct_unusual_1.py", CORRECT)
    (corpus / "correct_unusual_1.py").rename(corpus / "correct_written_out.py")
    fill(pack / "probes.py", PROBE, every=False)  # and 5.2's probe
    for path in sorted(root.rglob("*.py")):  # 5.2's files, and its probe
        if "5_2" in path.as_posix() or path.name == "probes.py":
            running_sum(path)
    left = [str(p) for p in root.rglob("*") if p.is_file() and TODO in p.read_text()]
    assert not left, left
    return root


def test_the_scaffold_is_a_whole_exercise_with_its_places_marked(scaffold):
    pack = scaffold / "course_pack"
    toml = (pack / "pack.toml").read_text()
    assert toml.count("[[exercise]]") == 2 and 'id = "5.2"' in toml
    assert 'names = ["scaled_softmax"]' in toml
    assert 'probes = "course_pack.probes:EX5_1"' in toml
    for path in (
        scaffold / "exercises" / "ex5_1_scaled_softmax.py",
        scaffold / "solution" / "exercises" / "ex5_1_scaled_softmax.py",
        pack / "checks" / "ex5_1.py",
        pack / "probes.py",
        scaffold / "tests" / "corpus" / "ex5_1" / "wrong_answer_1.py",
        scaffold / "tests" / "corpus" / "ex5_1" / "correct_unusual_1.py",
        scaffold / "tests" / "test_ex5_1.py",
    ):
        text = path.read_text()
        compile(text, str(path), "exec")
        assert path.name == "test_ex5_1.py" or places(text), path
    stub = (scaffold / "exercises" / "ex5_1_scaled_softmax.py").read_text()
    assert "raise NotImplementedError" in stub and "Exercise 5.1 is not done yet" in stub
    checks = (pack / "checks" / "ex5_1.py").read_text()
    assert "hint=" in checks and "reproduce=reproduce" in checks and "strategy=" in checks


def test_new_exercise_refuses_what_exists_in_one_line(scaffold):
    before = sorted(p for p in scaffold.rglob("*") if p.is_file())
    proc = grade("new-exercise", "5.1", "--title", "Again", cwd=scaffold)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "grade: error: the pack course-pack already has an exercise '5.1'"
    ]
    bad = grade("new-exercise", "5 1", "--title", "x", "--pack", "course_pack", cwd=scaffold)
    assert bad.returncode == 2 and "is not a short name" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert sorted(p for p in scaffold.rglob("*") if p.is_file()) == before


def test_check_pack_refuses_the_untouched_scaffold(scaffold):
    proc = grade("check-pack", "course_pack", cwd=scaffold)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    (refusal,) = [line for line in lines if line.startswith("  filled in ")]
    assert "FAIL" in refusal and "TODO(pack) place(s)" in refusal and "not filled in" in refusal
    assert "exercises/ex5_1_scaled_softmax.py:3:" in proc.stdout  # where, file and line
    assert all("SKIP" in line for line in lines if line.startswith(("  solution", "  corpus")))
    assert lines[-1] == "check-pack: course-pack does not hold: filled in failed"


def test_the_filled_in_scaffold_is_accepted(filled):
    proc = grade("check-pack", "course_pack", "--mutants", "4", cwd=filled)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for step in ("filled in", "solution", "stubs", "corpus"):
        (line,) = [line for line in out.splitlines() if line.startswith(f"  {step} ")]
        assert "PASS" in line, line
    assert "2 of 2 exercise(s) get full marks" in out
    assert "4 case(s), 2 wrong and 2 correct: every wrong answer loses points" in out
    (mutants,) = [line for line in out.splitlines() if line.startswith("  mutants ")]
    assert "of 8 mutant(s) killed" in mutants  # 4 a file, spread over it
    assert out.splitlines()[-1] == "check-pack: course-pack holds (solution, stubs and corpus)"


def test_a_broken_solution_fails_check_pack(filled, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(filled, root)
    solution = root / "solution" / "exercises" / "ex5_1_scaled_softmax.py"
    solution.write_text(solution.read_text().replace("x / temperature", "x * temperature"))
    proc = grade("check-pack", str(root / "course_pack"), "--mutants", "0", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (line,) = [line for line in proc.stdout.splitlines() if line.startswith("  solution ")]
    assert "FAIL" in line and "1 of 2 exercise(s) do not get full marks" in line
    assert "5.1: 3/10 (failed)" in proc.stdout  # x is left unchanged: 3 points of 10
    assert "is softmax(x / temperature)" in proc.stdout  # the check that failed, named
    assert proc.stdout.splitlines()[-1].endswith("does not hold: solution failed")


def test_a_corpus_header_naming_a_passing_check_fails_check_pack(filled, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(filled, root)
    wrong = root / "tests" / "corpus" / "ex5_1" / "wrong_multiplies.py"
    text = wrong.read_text()
    header = "# expect-failing: is softmax(x / temperature)"
    assert header in text
    wrong.write_text(text.replace(header, "# expect-failing: unchanged"))
    proc = grade("check-pack", "course_pack", "-e", "5.1", "--mutants", "0", cwd=root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (line,) = [line for line in proc.stdout.splitlines() if line.startswith("  corpus ")]
    assert "FAIL" in line
    assert "wrong_multiplies.py: expect-failing: 'unchanged' names no failing check" in proc.stdout
    assert "solution   PASS" in proc.stdout and "stubs      PASS" in proc.stdout


@pytest.mark.parametrize("make", ["empty", "missing", "file"])
def test_a_path_that_is_not_a_pack_is_one_usage_line(tmp_path, make):
    path = tmp_path / "notapack"
    if make == "empty":
        path.mkdir()
    elif make == "file":
        path.write_text("x")
    proc = grade("check-pack", str(path), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"grade: error: {path}: ")
    assert "no such folder" in line if make == "missing" else "not an exercise pack" in line


@pytest.mark.slow
def test_check_pack_holds_for_the_first_pack():
    """The first pack as check-pack reads it (its pack.toml's paths, its headers and hints),
    on two of its exercises with few examples: tests/test_corpus.py grades every case of
    every exercise already, so this only proves that check-pack reads the pack as they do."""
    proc = grade(
        *("check-pack", "llm_pack", "--mutants", "0", "--max-examples", "4"),
        *("-e", "3.1", "-e", "4.1"),
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 of 2 exercise(s) get full marks" in proc.stdout
    assert "22 case(s)" in proc.stdout  # 12 of 3.1 and 10 of 4.1
    assert "holds (solution, stubs and corpus)" in proc.stdout


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Sliding window input and target pairs", "sliding_window_input"),
        ("Accuracy of a classifier", "accuracy_of_a_classifier"),
        ("Split the heads and merge them", "split_the_heads"),
        ("Scaled softmax", "scaled_softmax"),
        ("The", "the"),
    ],
)
def test_a_scaffolds_file_name_is_not_cut_after_a_small_word(title, name):
    from grader.authoring.scaffold import slug

    assert slug(title) == name
