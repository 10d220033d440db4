"""``python -m grader`` run inside a class folder imports nothing from it (DESIGN §5.12).

``python -m`` puts the current folder first on ``sys.path``: a submission folder named
``reference/`` or ``llm_pack/``, or a ``*.dist-info`` folder among the submissions, was
imported by the batch's own process (as root, outside the sandbox), replaced the pack's checks,
or stopped the whole class. Here each is a folder of the class, with code that leaves a mark
if it is ever imported outside a worker."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from support import grade_cli

SOLUTION = Path(__file__).parent / "submissions" / "solution"
STUB = Path(__file__).parents[1] / "exercises" / "ex3_1_weight_transfer.py"
PACK_TOML = Path(__file__).parents[1] / "llm_pack" / "pack.toml"

pytestmark = pytest.mark.slow


def marker_code(mark: Path) -> str:
    return f"open({str(mark)!r}, 'w').write('imported')\n"


def test_python_m_grader_in_the_class_folder(tmp_path):
    klass, out, marks = tmp_path / "class", tmp_path / "out", tmp_path / "marks"
    marks.mkdir()
    shutil.copytree(SOLUTION, klass / "alice")
    for name in ("reference", "llm_pack"):  # submissions that are also importable packages
        (klass / name / "exercises").mkdir(parents=True)
        shutil.copy(STUB, klass / name / "exercises")
        (klass / name / "__init__.py").write_text(marker_code(marks / name))
    (klass / "llm_pack" / "pack.toml").write_text(PACK_TOML.read_text())  # would win the checks
    (klass / "llm_pack" / "checks").mkdir()
    (klass / "llm_pack" / "checks" / "__init__.py").write_text(marker_code(marks / "checks"))
    dist = klass / "evil-1.0.dist-info"
    dist.mkdir()
    (dist / "entry_points.txt").write_text("[grader.exercises]\nevil = nowhere\n")
    done = grade_cli("batch", ".", "-o", "../out", "-j", "2", "-e", "3.1", cwd=klass)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert not list(marks.iterdir()), "code of the class folder ran in the grader's process"
    rows = {r["name"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert rows["alice"]["total"] == "10"
    for stub in ("reference", "llm_pack"):  # graded as the stubs they are, by the real checks
        assert rows[stub]["total"] == "0" and rows[stub]["status"] == "failed", rows[stub]
