"""The worked example course pack (``examples/ch5-pack``, chapter 5: ``generate`` with
temperature and top-k, and the settings that make it deterministic) graded from its own folder
by every front end, with no change to the grader: ``grade``, ``grade batch``, ``pytest
--grade``, ``grader.check`` in a real kernel, the Gradescope bundle, ``grade release``; found
when installed (its entry point); proved by ``grade check-pack``, which fails on a copy whose
solution is broken. Every front end gives the same verdicts."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT, grade_cli
from test_gradescope_bundle import run_autograder, simulated_root

from grader.authoring.pastes import pasting_env

COURSE = ROOT / "examples" / "ch5-pack"
PACK = COURSE / "llm_ch5_pack"
SOLUTION = COURSE / "solution"
WRONG = {
    "5.1": COURSE / "corpus" / "ex5_1" / "wrong_temperature_multiplies.py",
    "5.2": COURSE / "corpus" / "ex5_2" / "wrong_sum_reduction.py",
    "5.3": COURSE / "corpus" / "ex5_3" / "wrong_only_temperature_zero.py",
}
FILES = {
    "5.1": "ex5_1_generate.py",
    "5.2": "ex5_2_calc_loss_batch.py",
    "5.3": "ex5_3_deterministic.py",
}

pytestmark = pytest.mark.slow


def run(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=900,
        env=env or pasting_env(),
    )


def grade(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return grade_cli(*args, env=env or pasting_env(), timeout=900)


def scores(result: dict) -> dict[str, float]:
    return {ex["id"]: ex["score"] for ex in result["exercises"]}


@pytest.fixture(scope="module")
def wrong(tmp_path_factory) -> Path:
    """A submission with one wrong answer per exercise."""
    folder = tmp_path_factory.mktemp("wrong")
    (folder / "exercises").mkdir()
    for ex_id, path in WRONG.items():
        shutil.copy(path, folder / "exercises" / FILES[ex_id])
    return folder


@pytest.fixture(scope="module")
def graded(wrong) -> dict[str, dict]:
    """``grade --pack FOLDER``'s results: the reference every other front end must match."""
    out = {}
    for name, folder in (("solution", SOLUTION), ("wrong", wrong)):
        done = grade("--pack", str(PACK), str(folder), "--format", "json")
        assert done.returncode in (0, 1), done.stderr
        out[name] = json.loads(done.stdout)
    return out


def test_grade_from_the_packs_folder(graded):
    assert scores(graded["solution"]) == {"5.1": 10, "5.2": 10, "5.3": 10}
    wrong = scores(graded["wrong"])
    assert wrong["5.1"] < 10 and wrong["5.2"] < 10 and wrong["5.3"] < 10
    sampling = next(ex for ex in graded["wrong"]["exercises"] if ex["id"] == "5.1")
    failed = [c for c in sampling["checks"] if not c["passed"]]
    assert any("softmax" in c["name"] for c in failed)  # the distribution check caught it
    assert all(c["reproduce"] for c in failed if c["counterexample"] is not None)


def test_grade_batch(graded, wrong, tmp_path):
    (tmp_path / "class").mkdir()
    shutil.copytree(SOLUTION, tmp_path / "class" / "alice")
    shutil.copytree(wrong, tmp_path / "class" / "bob")
    done = grade("--pack", str(PACK), "batch", str(tmp_path / "class"), "-o", str(tmp_path / "o"))
    assert done.returncode in (0, 1), done.stderr
    with open(tmp_path / "o" / "gradebook.csv", encoding="utf-8") as f:
        rows = {r["name"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"alice", "bob"}
    for name, which in (("alice", "solution"), ("bob", "wrong")):
        assert float(rows[name]["total"]) == graded[which]["score"]
        for ex_id, score in scores(graded[which]).items():  # a column per exercise of the pack
            assert float(rows[name][ex_id]) == score
    assert (tmp_path / "o" / "index.html").is_file()


def test_pytest_grade(graded, wrong, tmp_path):
    env = {**pasting_env(), "GRADER_PACK": str(PACK)}
    done = run(
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-n",
        "0",
        "--grade",
        str(wrong),
        "-q",
        "-rA",
        cwd=tmp_path,
        env=env,
    )
    failing = {
        c["name"] for ex in graded["wrong"]["exercises"] for c in ex["checks"] if not c["passed"]
    }
    assert done.returncode == 1, done.stdout[-2000:]
    assert f"{len(failing)} failed" in done.stdout.splitlines()[-1], done.stdout[-1500:]


def test_grader_check_in_a_kernel():
    from nbclient import NotebookClient
    from nbformat import v4

    source = (SOLUTION / "exercises" / FILES["5.1"]).read_text(encoding="utf-8")
    nb = v4.new_notebook()
    nb.cells = [v4.new_code_cell(source), v4.new_code_cell('import grader\ngrader.check("5.1")')]
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True)
    client.execute(env={**pasting_env(), "GRADER_PACK": str(PACK)})
    (shown,) = [o for o in nb.cells[1].outputs if o.output_type == "execute_result"]
    text = shown.data["text/plain"]
    assert "5.1" in text and "10/10" in text.replace(" ", ""), text


def test_the_gradescope_bundle(graded, wrong, tmp_path):
    bundle = tmp_path / "autograder.zip"
    done = grade("--pack", str(PACK), "gradescope", str(bundle))
    assert done.returncode == 0, done.stderr
    for name, folder in (("solution", SOLUTION / "exercises"), ("wrong", wrong / "exercises")):
        root = simulated_root(tmp_path / name, bundle)
        for path in folder.glob("ex*.py"):
            shutil.copy(path, root / "submission" / path.name)
        # the pack the bundle carries (the dev venv registers the first pack as installed)
        carried = root / "source" / "package" / PACK.name
        results = run_autograder(root, GRADER_PACK=str(carried))
        # the bundle grades with the course's seed, not the public one: these answers are
        # right, or wrong, on every example
        if name == "solution":
            assert results["score"] == 30
        else:
            assert 0 < results["score"] < 30


def test_grade_release_ships_the_stubs_and_no_solution(tmp_path):
    out = tmp_path / "edition"
    done = grade("--pack", str(PACK), "release", str(out))
    assert done.returncode == 0, done.stderr
    for ex_id, name in FILES.items():
        stub = (out / "exercises" / name).read_text(encoding="utf-8")
        assert "NotImplementedError" in stub, ex_id
    shipped = "\n".join(p.read_text(errors="replace") for p in out.rglob("*.py"))
    assert "is_deterministic" in shipped  # the stub's function
    assert not (out / "solution").exists() and not list(out.rglob("corpus"))
    graded = run(
        "-m",
        "grader",
        "--pack",
        str(out / PACK.name),
        str(out),
        "--format",
        "json",
        env={**pasting_env(), "PYTHONPATH": str(out)},
    )
    assert scores(json.loads(graded.stdout)) == {"5.1": 0, "5.2": 0, "5.3": 0}, graded.stderr


def test_found_when_installed(tmp_path):
    """``pip install`` of the example (not editable) registers its entry point: ``grade
    --pack llm-ch5`` finds it by name, beside the first pack."""
    target, copy = tmp_path / "site", tmp_path / "course"  # a build writes beside the source
    shutil.copytree(COURSE, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__py*"))
    done = run(
        "-m",
        "pip",
        "install",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        "--target",
        str(target),
        str(copy),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    env = {**pasting_env(), "PYTHONPATH": str(target)}
    done = grade("--pack", "llm-ch5", str(SOLUTION), "--format", "json", env=env)
    assert scores(json.loads(done.stdout)) == {"5.1": 10, "5.2": 10, "5.3": 10}, done.stderr
    both = grade("-e", "5.3", str(SOLUTION), "--format", "json", env=env)  # every pack in use
    assert scores(json.loads(both.stdout)) == {"5.3": 10}, both.stderr


def test_check_pack_passes_and_fails_on_a_broken_solution(tmp_path):
    done = grade("check-pack", str(PACK), "--mutants", "0")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
    broken = tmp_path / "ch5-pack"
    shutil.copytree(COURSE, broken, ignore=shutil.ignore_patterns("__pycache__"))
    solution = broken / "solution" / "exercises" / FILES["5.1"]
    text = solution.read_text(encoding="utf-8")
    assert "/ temperature" in text
    solution.write_text(text.replace("/ temperature", "* temperature"), encoding="utf-8")
    # Only what the break touches: 5.1, with one wrong and one correct case of its corpus
    # (the run above proved them all, snippets pasted; each 5.1 case takes about 2 s).
    cases = sorted((broken / "corpus" / "ex5_1").glob("*.py"))
    kept = [next(p for p in cases if p.name.startswith(k)) for k in ("wrong_", "correct_")]
    for path in set(cases) - set(kept):
        path.unlink()
    done = grade(
        "check-pack", str(broken / PACK.name), "-e", "5.1", "--mutants", "0", "--no-snippets"
    )
    assert done.returncode == 1
    assert "solution" in done.stdout and "FAIL" in done.stdout, done.stdout[-3000:]
    assert any(line.split()[:2] == ["solution", "FAIL"] for line in done.stdout.splitlines())


def test_grade_where_another_pack_lies_says_how_to_grade_it(tmp_path):
    """`grade` in a folder that holds none of the installed course's files but another pack's
    pack.toml (an author's release, tried where the first pack is installed) says which pack
    lies there and how to grade it, beside the report of the missing exercises."""
    shutil.copytree(PACK, tmp_path / PACK.name, ignore=shutil.ignore_patterns("__pycache__"))
    said = f"{PACK.name} holds the pack 'llm-ch5': grade --pack {PACK.name} grades its exercises"
    done = grade_cli(cwd=tmp_path, env=pasting_env(), timeout=300)  # no exercises/ at all
    assert done.returncode == 2 and said in done.stderr, done.stderr
    shutil.copytree(PACK / "stubs" / "exercises", tmp_path / "exercises")  # a release's
    done = grade_cli(cwd=tmp_path, env=pasting_env(), timeout=300)
    assert done.returncode == 1 and said in done.stderr, done.stderr


def test_the_commands_a_report_gives_choose_the_same_pack(wrong):
    """The report's "More: grade ... -v" and "--html" commands repeat ``--pack`` as it was
    typed: without it they would grade the installed pack instead."""
    done = grade("--pack", str(PACK), str(wrong))
    assert done.returncode == 1, done.stderr
    assert f"More: grade --pack {PACK} {wrong} -e " in done.stdout, done.stdout
    assert f"grade --pack {PACK} {wrong} --html FILE" in done.stdout
