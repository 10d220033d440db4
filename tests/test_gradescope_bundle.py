"""``grade gradescope OUT.zip``: the autograder bundle, run in a simulated ``/autograder``
(``AUTOGRADER_ROOT``) as Gradescope runs it: ``setup.sh`` once, ``run_autograder`` per upload.

Most tests give the simulated root the development environment as its ``venv`` (what
``setup.sh`` would build); a second, tiny pack (``tests/tinypack.py``) is bundled with ``grade
--pack FOLDER gradescope`` and its bundle graded with the pack it carries (``GRADER_PACK``
naming the bundle's copy: the development environment installs the first pack); the last one
runs ``setup.sh`` for real, which installs torch into a
new virtual environment (set GRADER_SKIP_INSTALL_TESTS=1 to skip it locally; CI runs it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import headstart
import pytest
import tinypack
from nbsupport import solution_notebook
from support import CORPUS, ROOT, grade_cli, grade_folder, make_submission

from grader.editions.release import distinctive_lines, solution_leaks
from grader.shared.registry import BY_ID, EXERCISES

MAX_EXAMPLES = headstart.GRADESCOPE_MAX_EXAMPLES  # the bundle of the install test too


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.commands.cli",
            "gradescope",
            str(out),
            "--max-examples",
            str(MAX_EXAMPLES),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def bundle_seed(bundle: Path) -> int:
    """The course seed the bundle grades with (drawn when it was built)."""
    with zipfile.ZipFile(bundle) as zf:
        return json.loads(zf.read("bundle.json"))["seed"]


def simulated_root(tmp_path: Path, bundle: Path, venv: Path | None = None) -> Path:
    root = tmp_path / "autograder"
    headstart.unpack(bundle, root)
    (root / "submission").mkdir()
    (root / "venv").symlink_to(venv or Path(sys.prefix))
    return root


def run_autograder(root: Path, **env: str) -> dict:
    proc = subprocess.run(
        [str(root / "run_autograder")],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=900,
        env={**os.environ, "AUTOGRADER_ROOT": str(root), **env},
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads((root / "results" / "results.json").read_text())


def test_setup_and_run_autograder_sit_at_the_zip_root_and_are_executable(bundle):
    with zipfile.ZipFile(bundle) as zf:
        infos = {i.filename: i for i in zf.infolist()}
    for name in ("setup.sh", "run_autograder"):
        assert name in infos
        assert (infos[name].external_attr >> 16) & 0o111, name
    assert "package/pyproject.toml" in infos and "package/constraints.txt" in infos
    assert "package/llm_pack/pack.toml" in infos and "package/reference/__init__.py" in infos
    for ex in EXERCISES:
        assert f"package/exercises/{ex.filename}" in infos
    assert not [n for n in infos if n.startswith(("package/tests/", "tests/"))]
    with zipfile.ZipFile(bundle) as zf:
        setup = zf.read("setup.sh").decode()
    # setup.sh imports the pack once (its package and the modules its workers load)
    assert "grader.judge.engine, llm_pack, reference, llm_pack.probes" in setup


def test_the_bundle_holds_no_solution(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(tmp_path)
    assert solution_leaks(tmp_path, distinctive_lines()) == []


def test_six_loose_files_are_scored_as_grade_scores_them(bundle, tmp_path):
    # The bundle grades with a seed drawn when it was built, with few examples: the mutant
    # must fail on every input (a reshape equals the transpose when a side is 1, and a few
    # examples of some seeds draw only such sizes).
    wrong = CORPUS / "ex3_1" / "wrong_forgets_value.py"
    known = make_submission(tmp_path / "known", {"3.1": wrong})
    expected = grade_folder(known, max_examples=MAX_EXAMPLES, seed=bundle_seed(bundle))
    assert 0 < expected.score < expected.max_score

    root = simulated_root(tmp_path, bundle)
    for ex in EXERCISES:  # the exercise files, uploaded without their folder
        shutil.copyfile(known / "exercises" / ex.filename, root / "submission" / ex.filename)
    results = run_autograder(root)
    assert results["score"] == pytest.approx(expected.score)
    assert results["tests"], results
    failed = {t.get("name", "") for t in results["tests"] if t.get("status") == "failed"}
    assert any(BY_ID["3.1"].title in name or "3.1" in name for name in failed), failed


def test_a_repository_or_zipped_folder_is_found_one_level_down(bundle, tmp_path):
    root = simulated_root(tmp_path, bundle)
    make_submission(root / "submission" / "my-clone")
    (root / "submission" / "my-clone" / "README.md").write_text("my work\n")
    assert run_autograder(root)["score"] == sum(e.max_score for e in EXERCISES)


def test_a_notebook_upload_is_graded_and_the_cells_used_are_shown(bundle, tmp_path):
    root = simulated_root(tmp_path, bundle)
    solution_notebook(root / "submission" / "answers.ipynb", tagged=False)
    results = run_autograder(root)
    assert results["score"] == sum(e.max_score for e in EXERCISES)
    assert "graded from cell" in results["output"]


def test_an_upload_without_exercises_scores_zero_with_a_reason(bundle, tmp_path):
    root = simulated_root(tmp_path, bundle)
    (root / "submission" / "notes.txt").write_text("I did not do it\n")
    results = run_autograder(root)
    assert results["score"] == 0
    assert "no exercise files found" in results["output"]
    assert "ex3_1_weight_transfer.py" in results["output"]


# --- a second pack ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_bundle(tmp_path_factory) -> tuple[Path, Path]:
    """(the tiny pack's course folder, its bundle), made by ``grade --pack FOLDER gradescope``."""
    course = tmp_path_factory.mktemp("tiny") / "course"
    folder = tinypack.make_tiny_pack(course)
    out = course.parent / "tiny-autograder.zip"
    proc = grade_cli(
        "--pack",
        str(folder),
        "gradescope",
        str(out),
        "--max-examples",
        "3",
        timeout=300,
        module="grader.commands.cli",
    )
    assert proc.returncode == 0, proc.stderr
    assert "maximum, 10)" in proc.stdout
    return course, out


def test_a_second_packs_bundle_carries_its_pack_and_stub_not_its_solution(tiny_bundle, tmp_path):
    course, bundle = tiny_bundle
    with zipfile.ZipFile(bundle) as zf:
        names = set(zf.namelist())
        zf.extractall(tmp_path / "unzipped")
        setup = zf.read("setup.sh").decode()
    package = f"package/{tinypack.PACKAGE}"
    for name in ("__init__.py", "pack.toml", "checks.py", "probes.py"):
        assert f"{package}/{name}" in names, name
    assert f"package/exercises/{tinypack.FILENAME}" in names
    left_out = (f"{package}/stubs", "package/llm_pack", "package/reference", "package/tests")
    assert not [n for n in names if n.startswith(left_out)]
    assert f"grader.judge.engine, {tinypack.PACKAGE}, {tinypack.PACKAGE}.probes" in setup
    for path in (tmp_path / "unzipped").rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            for line in (*tinypack.SOLUTION_LINES, tinypack.CORPUS_LINE):
                assert line not in text, (path, line)


def test_a_second_packs_bundle_grades_uploads_with_its_pack(tiny_bundle, tmp_path):
    course, bundle = tiny_bundle
    root = simulated_root(tmp_path, bundle)
    carried = str(root / "source" / "package" / tinypack.PACKAGE)  # the bundle's copy
    answer = root / "submission" / tinypack.FILENAME
    shutil.copyfile(course / "tiny_solution" / tinypack.FILENAME, answer)
    results = run_autograder(root, GRADER_PACK=carried)
    assert results["score"] == 10, results
    assert [t["status"] for t in results["tests"]] == ["passed"]
    shutil.copyfile(course / "tiny_corpus" / f"ex{tinypack.ID}" / "wrong_triples.py", answer)
    results = run_autograder(root, GRADER_PACK=carried)
    assert results["score"] == 0 and results["tests"][0]["status"] == "failed"
    answer.unlink()
    results = run_autograder(root, GRADER_PACK=carried)
    assert results["score"] == 0 and tinypack.FILENAME in results["output"]


@headstart.SKIP_INSTALL
@pytest.mark.install("gradescope")
def test_setup_sh_installs_the_grader_and_the_bundle_scores_a_known_submission(fresh_install):
    job = fresh_install
    job.check("bundle")
    job.check("setup.sh")
    setup_s = job.seconds["setup.sh"]
    bundle, root = job.paths["bundle"], job.paths["root"]
    assert (root / "venv" / "bin" / "grade").is_file()

    known = make_submission(
        root / "submission", {"3.1": CORPUS / "ex3_1" / "wrong_reshape_not_transpose.py"}
    )
    expected = grade_folder(known, max_examples=MAX_EXAMPLES, seed=bundle_seed(bundle))
    began = time.monotonic()
    results = run_autograder(root)
    print(f"\nsetup.sh: {setup_s:.0f} s; run_autograder: {time.monotonic() - began:.1f} s")
    assert results["score"] == pytest.approx(expected.score)
