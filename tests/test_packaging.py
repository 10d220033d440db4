"""The built wheel (what ``pip install git+URL`` or a non-editable install gets, as on Colab)
carries everything the grader reads at run time: the HTML templates, which live at the top of
the repository and are copied into the package by ``setup.py``, and the result schema."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support import ROOT, SOLUTION


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"  # a copy: pip builds in the tree it is given (build/, egg-info)
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(".*", "build", "*.egg-info", "__pycache__", "tests"),
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (found,) = out.glob("*.whl")
    return found


def test_the_wheel_carries_every_template_and_the_schema(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in (ROOT / "templates").glob("*.j2"):
        assert f"grader/templates/{template.name}" in names
    assert "grader/result/result.schema.json" in names
    assert "grader/py.typed" in names  # a pack author's type checker reads grader's types


def test_the_installed_package_writes_html_reports_away_from_the_clone(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    html = tmp_path / "report.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.commands.cli",
            str(SOLUTION),
            "-e",
            "3.1",
            "--max-examples",
            "2",
            "--html",
            str(html),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = html.read_text()
    assert "3.1" in page and "</html>" in page
    check = subprocess.run(
        [sys.executable, "-c", "import grader; print(grader.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(site)},
    )
    assert check.stdout.strip().startswith(str(site))  # the wheel's grader, not the clone's
