"""What ``grade release`` says when the student edition would hold a solution: every file that
holds one (``grader.editions.release.solution_leaks``) and what to change in ``pack.toml``.

A pack's checks, reference and probes ship to students. A check that computes the expected
answer with the solution's own lines hands the solution out. When those lines are code that
every answer may contain (published code, a model the exercise builds on), the pack says so
with ``shared = [...]``: the scan leaves the lines of shared modules out. ``grade check-pack``
runs the same refusal and shows the same list.
"""

from __future__ import annotations

from pathlib import Path

from grader.shared.errors import UsageError
from grader.shared.packs import FILE, Pack

REFUSING = "refusing to release a solution: "


def leaking_file(leak: str) -> str:
    """The file (from the edition's root) a leak of ``solution_leaks`` names."""
    return leak.split(" holds ", 1)[0]


def module_of(path: str) -> str | None:
    """The module a shipped ``.py`` file is (``my_pack/checks/sums.py`` ->
    ``my_pack.checks.sums``); None for another file."""
    if not path.endswith(".py"):
        return None
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or None


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def remedy(leaks: list[str], packs: tuple[Pack, ...]) -> str:
    """What to do about ``leaks``: the ``shared`` line each pack's ``pack.toml`` would need
    (its modules that leak, added to what it shares), or to take the lines out."""
    lines = []
    for pack in packs:
        own = [leaking_file(leak) for leak in leaks if f" of {pack.name}'s solution " in leak]
        modules = [m for m in map(module_of, own) if m and m.split(".")[0] == pack.package]
        if modules:
            shared = ", ".join(f'"{m}"' for m in dict.fromkeys([*pack.shared, *modules]))
            lines.append(f"shared = [{shared}] in {_shown(pack.folder / FILE)}")
    said = " and ".join(lines) if lines else f"shared = [...] in the pack's {FILE}"
    return (
        "Students get every file listed. If the lines are code every answer may contain "
        "(code the course publishes, a model the exercise builds on), say so with "
        f"{said}; else take the solution's lines out of those files (compute the expected "
        "answer another way)"
    )


def refusal(leaks: list[str], packs: tuple[Pack, ...]) -> str:
    """One line: every leaking file (the first with the line it holds) and the remedy."""
    listed = [leaks[0], *(leak.split(", e.g. ", 1)[0] for leak in leaks[1:])]
    count = f" ({len(leaks)} files)" if len(leaks) > 1 else ""
    return f"{REFUSING}{'; '.join(listed)}{count}. {remedy(leaks, packs)}"


class SolutionLeaked(UsageError):
    """The edition would hold a solution: ``leaks`` lists every file, ``remedy`` what to do."""

    def __init__(self, leaks: list[str], packs: tuple[Pack, ...]):
        super().__init__(refusal(leaks, packs))
        self.leaks = list(leaks)
        self.remedy = remedy(leaks, packs)
