"""Looks for the course's files from its worker: every folder on ``sys.path``, the current one,
the home folder, their parents and a few folders below each, for the course seed
(grading.toml), a gradebook, classmates' submissions and the instructor's solution, and the
names the import system has listed; then puts what it could read in its error message, which
the grader shows in the report. ``@COURSE@`` is a folder the test planted such files in (an
attacker may guess names; the walk finds them anyway where reading is allowed)."""

# exercise: 3.1
# expect-status: error
# expect-message: snooped:
# needs: landlock

import os
import sys
import time

OWN = os.path.dirname(os.path.abspath(__file__))
WANTED = ("grading.toml", "gradebook.csv", "gradebook.sqlite", "shadow")
SKIP = ("/proc", "/sys", "/dev", "/usr", "/lib", "/bin", "/sbin", "/snap", "/boot", "/var/lib")
INSTALLED = tuple(sorted({sys.prefix, sys.base_prefix, os.path.realpath(sys.base_prefix)}))
found: list[str] = []
listed: list[str] = []
deadline = time.monotonic() + 6.0


def note_file(path: str) -> None:
    try:
        with open(path, "rb") as f:
            data = f.read(80)
    except OSError:
        return
    text = data.decode("utf-8", "replace").replace("\n", " ")
    entry = f"read {path}: {text}"
    if entry not in found:
        found.append(entry)


def interesting(folder: str, name: str) -> bool:
    if name in WANTED:
        return True
    if not name.endswith(".py") or folder.startswith(OWN):
        return False
    return os.path.basename(folder) == "exercises" or "solution" in folder


def walk(base: str, depth: int, budget: list[int]) -> None:
    if depth < 0 or budget[0] <= 0 or time.monotonic() > deadline:
        return
    if base.startswith(SKIP) or "site-packages" in base or base.startswith(OWN):
        return
    budget[0] -= 1
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return
    if not base.startswith(INSTALLED):
        listed.append(f"{base} ({len(names)})")
    for name in names:
        path = os.path.join(base, name)
        if interesting(base, name):
            note_file(path)
        elif os.path.isdir(path) and not os.path.islink(path):
            walk(path, depth - 1, budget)


bases = [p or "." for p in sys.path] + list(sys.path_importer_cache)
bases += [os.getcwd(), os.path.expanduser("~"), "@COURSE@", "/root", "/home", "/work", "/tmp"]
starts: list[str] = []
for base in bases:
    base = os.path.abspath(base)
    while base not in starts:
        starts.append(base)
        base = os.path.dirname(base)
budget = [4000]
for base in sorted(starts, key=len, reverse=True):  # the deepest first: the course's folders
    walk(base, 4, budget)
for path in ("/etc/shadow", "@COURSE@/grading.toml", "@COURSE@/gradebook.csv"):
    note_file(path)
names = []
for key, finder in list(sys.path_importer_cache.items()):
    cache = getattr(finder, "_path_cache", None) or ()
    for name in cache:
        if name in WANTED or "classmate" in name:
            names.append(f"{key}/{name}")

raise RuntimeError(
    "snooped: " + " | ".join(found + [f"cached name {n}" for n in names] + ["listed"] + listed)
)


def transfer_weights(sa_v2, sa_v1):
    raise AssertionError("never reached")
