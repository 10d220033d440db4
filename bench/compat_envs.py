"""The environments of the compatibility matrix (bench/compat.py): a Python, a torch release and
a hypothesis release, each in a virtual environment built once and kept in a cache.

The project is installed into each as a student installs it: without constraints.txt, and
without this machine's own pip constraints either (a cap such as ``torch<=2.14.1`` in
``/etc/xdg/pip``; a student's ``pip install torch`` gets the newest release). torch is named
by a release or ``newest`` (what pip installs for that Python); hypothesis by an end of the
range pyproject.toml gives it, ``oldest`` (its lower bound) or ``newest`` (the newest release
in the range that pip installs for that Python), or by a release.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
VERSION = "import {0}; print({0}.__version__.split('+')[0])"


def hypothesis_range() -> tuple[str, str]:
    """(the lower bound of hypothesis in pyproject.toml, the whole specifier)."""
    text = (ROOT / "pyproject.toml").read_text()
    found = re.search(r'"hypothesis\s*(>=\s*([\w.]+)[^";]*)', text)
    if not found:
        raise RuntimeError("pyproject.toml gives hypothesis no range (>=LOW)")
    return found.group(2), found.group(1).replace(" ", "")


def find_python(version: str, named: dict[str, str]) -> str | None:
    """A Python ``version`` interpreter: named, under pyenv, or on PATH (a pyenv shim on PATH
    may name a version that is not selected, so each candidate is asked its version)."""
    pyenv = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates = [named.get(version)]
    candidates += sorted(glob.glob(f"{pyenv}/versions/{version}.*/bin/python{version}"))[::-1]
    candidates.append(shutil.which(f"python{version}"))
    for candidate in filter(None, candidates):
        probe = [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"]
        try:
            said = subprocess.run(probe, capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        if said.strip() == version:
            return candidate
    return None


def pip(python: Path, *args: str) -> subprocess.CompletedProcess:
    """pip in that environment, with no constraints: PIP_CONSTRAINT names an empty file, which
    replaces any constraint file pip's configuration names (an empty value would not)."""
    env = {**os.environ, "PIP_CONSTRAINT": os.devnull}
    return subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=3600,
        env=env,
    )


def resolve(python: Path, requirement: str) -> str:
    """The release of ``requirement`` pip would install in this environment (metadata only)."""
    proc = pip(
        python,
        "install",
        "--dry-run",
        "--ignore-installed",
        "--no-deps",
        "-q",
        "--report",
        "-",
        requirement,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"pip cannot resolve {requirement}: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout)["install"][0]["metadata"]["version"]


def installed(python: Path, module: str) -> str:
    """The version of ``module`` in that environment, or ``""``."""
    proc = subprocess.run(
        [str(python), "-c", VERSION.format(module)], capture_output=True, text=True
    )
    return proc.stdout.strip() if proc.returncode == 0 else ""


def environment(base_python: str, version: str, torch: str, cache: Path) -> tuple[Path, str]:
    """A venv with ``torch`` and the project installed without constraints (built once)."""
    if torch == "newest":
        cache.mkdir(parents=True, exist_ok=True)
        probe = cache / f"py{version}-probe"
        if not (probe / "bin" / "python").exists():
            subprocess.run([base_python, "-m", "venv", str(probe)], check=True)
        torch = resolve(probe / "bin" / "python", "torch")
    venv = cache / f"py{version}-torch{torch}"
    python = venv / "bin" / "python"
    if not python.exists() or installed(python, "torch") != torch:
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
        # torch before 2.3 was built against numpy 1 (numpy 2 warns at import, then fails)
        numpy = "numpy<2" if tuple(map(int, torch.split(".")[:2])) < (2, 3) else "numpy"
        proc = pip(python, "install", "-q", f"torch=={torch}", numpy)
        if proc.returncode != 0:
            raise RuntimeError(f"pip cannot install torch {torch}: {proc.stderr.strip()[-300:]}")
    # As a student installs it: no constraints file.
    proc = pip(python, "install", "-q", "-e", str(ROOT))
    if proc.returncode != 0:
        raise RuntimeError(f"pip cannot install the project: {proc.stderr.strip()[-300:]}")
    return venv, torch


def use_hypothesis(venv: Path, end: str) -> str:
    """Install hypothesis at ``end`` of its range (``oldest``, ``newest``) or at a release in
    the venv; the release installed."""
    python = venv / "bin" / "python"
    low, spec = hypothesis_range()
    wanted = {"oldest": low, "newest": resolve(python, f"hypothesis{spec}")}.get(end, end)
    if installed(python, "hypothesis") != wanted:
        proc = pip(python, "install", "-q", f"hypothesis=={wanted}")
        if proc.returncode != 0:
            raise RuntimeError(f"pip cannot install hypothesis {wanted}: {proc.stderr[-300:]}")
    return installed(python, "hypothesis")


def default_cache(name: str = "llm-grader-compat") -> Path:
    """Where a benchmark keeps what it builds once: ``name`` in the user's cache folder."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / name
