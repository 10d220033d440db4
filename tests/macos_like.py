"""A macOS-like Python on Linux, for tests: a venv of this interpreter's Python (made with
``--without-pip``) whose ``site-packages`` holds ``tests/macos_like_site.py`` (as
``_macos_like``) and a ``.pth`` file that imports it first, then adds this venv's
``site-packages`` (torch, the grader). ``.pth`` files are read at every start, ``-I`` or not, so
every process the grader starts with ``sys.executable`` (its workers) is macOS-like too.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

SIMULATION = Path(__file__).with_name("macos_like_site.py")


def build(where: Path) -> Path:
    """Make the macOS-like venv at ``where``; return its interpreter."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120
    )
    python = where / "bin" / "python"
    site_packages = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    shutil.copyfile(SIMULATION, site_packages / "_macos_like.py")
    ours = sysconfig.get_paths()["purelib"]
    (site_packages / "_macos_like.pth").write_text(
        f"import _macos_like\nimport site; site.addsitedir({ours!r})\n", encoding="utf-8"
    )
    return python


class Lines:
    """A process's stdout, read line by line in a thread."""

    def __init__(self, proc: subprocess.Popen):
        import threading

        self.seen: list[str] = []
        threading.Thread(target=lambda: self.seen.extend(proc.stdout), daemon=True).start()
        self.proc = proc

    def wait_for(self, text: str, after: int = 0, timeout: float = 600) -> int:
        """The number of lines up to the first after ``after`` that holds ``text``."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for n, line in enumerate(list(self.seen)[after:], after):
                if text in line:
                    return n + 1
            if self.proc.poll() is not None and not any(text in x for x in self.seen[after:]):
                break
            time.sleep(0.2)
        raise AssertionError(f"no {text!r}:\n{''.join(self.seen)[-3000:]}")
