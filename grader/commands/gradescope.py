"""``grade gradescope OUT.zip``: a Gradescope autograder bundle.

The zip holds, at its root, ``setup.sh`` (run once, as root, when Gradescope builds the image:
it makes a virtual environment and installs the student edition of this package with the
constraints file) and ``run_autograder`` (run for every submission: it calls
``grade gradescope --run``, which finds what the student uploaded in ``submission/`` - the
exercise files, an ``exercises/`` folder, a whole repository or a notebook - grades it and
writes ``results/results.json``). Both honour ``AUTOGRADER_ROOT`` (default ``/autograder``), so
that the bundle can be run in a simulated layout. The package inside is the student edition of
the packs in use (``grade release``, ``--pack`` chooses): the packs' checks, probes and stubs,
registered by its entry points, and no solution, no corpus; its run grades with those packs.

The bundle grades with the course's grading seed (``--seed``, else ``seed`` in the grading.toml
given with ``--config``, else one drawn when the bundle is built), kept only in ``bundle.json``
at the zip's root (readable by its owner only, outside the student edition); what students see
on Gradescope says "course seed". The rest of that grading.toml (exercises, points, limits)
applies too.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import sys
import tempfile
import zipfile
from pathlib import Path

from grader.commands.options import EXIT_PASSED, EXIT_USAGE
from grader.judge.seeds import PUBLIC_SEED, seed_argument
from grader.shared.errors import UsageError
from grader.shared.registry import EXERCISES

PACKAGE_DIR = "package"  # where the student edition sits inside the bundle
SETTINGS = "bundle.json"  # grading options chosen when the bundle was built

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu): a virtual
# environment with the grader installed, torch pinned by constraints.txt.
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
SOURCE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
VENV="$ROOT/venv"
# The CPU build of torch (no CUDA libraries); set GRADER_TORCH_INDEX= to use the default index.
TORCH_INDEX="${{GRADER_TORCH_INDEX-{torch_index}}}"

python_ok() {{ "$1" -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; }}
PY=""
for candidate in python3.13 python3.12 python3.11 python3.10 python3; do
  if command -v "$candidate" >/dev/null 2>&1 && python_ok "$candidate"; then
    PY="$candidate"; break
  fi
done
if [ -z "$PY" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq python3.11 python3.11-venv
  PY=python3.11
fi
if ! "$PY" -m venv "$VENV"; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq "$(basename "$(readlink -f "$(command -v "$PY")")")-venv" python3-venv
  "$PY" -m venv "$VENV"
fi
EXTRA=()
if [ -n "$TORCH_INDEX" ]; then EXTRA=(--extra-index-url "$TORCH_INDEX"); fi
"$VENV/bin/pip" install -q ${{EXTRA[@]+"${{EXTRA[@]}}"}} -c "$SOURCE/{package}/constraints.txt" \\
  -e "$SOURCE/{package}"
# Import everything once, so that the first submission does not pay for it.
"$VENV/bin/python" -c "import torch, hypothesis, grader.judge.engine, {modules}"
echo "setup.sh: grader installed in $VENV"
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission: grade what the student uploaded to
# $ROOT/submission and write $ROOT/results/results.json.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
mkdir -p "$ROOT/results"
cd "$ROOT"
"$ROOT/venv/bin/grade" gradescope --run "$ROOT"
status=$?
if [ ! -s "$ROOT/results/results.json" ]; then
  # The grader itself failed: say so to the student rather than leaving no result.
  message="The autograder could not run (status $status). Please tell your instructor."
  printf '{{"score": 0, "output": "%s", "tests": []}}\\n' "$message" > "$ROOT/results/results.json"
fi
exit 0
"""

TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


# --- building the bundle -------------------------------------------------------------------


def warm_modules() -> list[str]:
    """What ``setup.sh`` imports once: every pack's package and the modules its workers load."""
    from grader.shared.packs import packs

    return list(dict.fromkeys(m for p in packs() for m in (p.package, *p.worker)))


def _add(
    zf: zipfile.ZipFile, name: str, data: bytes, executable: bool = False, private: bool = False
) -> None:
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    mode = 0o755 if executable else 0o600 if private else 0o644
    info.external_attr = (mode | 0o100000) << 16
    zf.writestr(info, data)


def bundle_settings(
    seed: int | None = None, max_examples: int | None = None, config: Path | None = None
) -> tuple[dict, str]:
    """What ``bundle.json`` holds (the grading settings: ``config``, a grading.toml, then the
    options; and the course seed), and where the seed came from."""
    from grader.batch.config import ConfigError, build_settings, read_config
    from grader.judge.seeds import draw_seed

    try:
        values = read_config(config) if config is not None else {}
        settings = build_settings(values, None, seed, max_examples)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    source = "--seed" if seed is not None else "grading.toml" if "seed" in values else "drawn"
    doc = {
        "seed": draw_seed() if source == "drawn" else settings.seed,
        "max_examples": settings.max_examples,
        "exercises": list(settings.exercises),
        "limits": dataclasses.asdict(settings.limits),
        "max_scores": settings.max_scores,
        "check_points": settings.check_points,
    }
    return doc, source


def build_bundle(
    out: Path, seed: int | None = None, max_examples: int | None = None, config: Path | None = None
) -> int:
    """Write the bundle to ``out``; return the number of files in it."""
    return write_bundle(out, bundle_settings(seed, max_examples, config)[0])


def write_bundle(out: Path, settings: dict) -> int:
    """Write the bundle, grading with ``settings`` (see ``bundle_settings``), to ``out``;
    return the number of files in it."""
    from grader.editions.release import build_release

    with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
        package = Path(tmp) / PACKAGE_DIR
        files = build_release(package)
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(out.name + ".partial")
        with zipfile.ZipFile(partial, "w") as zf:
            setup = SETUP_SH.format(
                package=PACKAGE_DIR, torch_index=TORCH_CPU_INDEX, modules=", ".join(warm_modules())
            )
            _add(zf, "setup.sh", setup.encode(), executable=True)
            _add(zf, "run_autograder", RUN_AUTOGRADER.format().encode(), executable=True)
            _add(zf, SETTINGS, (json.dumps(settings, indent=2) + "\n").encode(), private=True)
            for path in files:
                name = f"{PACKAGE_DIR}/{path.relative_to(package).as_posix()}"
                _add(zf, name, path.read_bytes(), executable=path.stat().st_mode & 0o111 != 0)
        partial.replace(out)
    return len(files) + 3


# --- running inside Gradescope --------------------------------------------------------------


def exercise_files() -> set[str]:
    return {e.filename for e in EXERCISES}


SKIP_DIRS = {"__MACOSX", ".ipynb_checkpoints", "__pycache__", ".git", ".venv", "venv"}


def _walk(folder: Path, depth: int = 0, max_depth: int = 4):
    yield folder, depth
    if depth >= max_depth:
        return
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.is_symlink() and child.name not in SKIP_DIRS:
            yield from _walk(child, depth + 1, max_depth)


def find_submission(folder: Path) -> Path:
    """What to grade in Gradescope's ``submission/`` folder: the shallowest folder holding
    ``exercises/`` or exercise files (Gradescope unzips uploads, and a zipped folder or a
    GitHub repository adds a level), else the one notebook. ``UsageError`` when there is none
    or there are several notebooks and no exercise files."""
    candidates = []
    notebooks = []
    files = exercise_files()
    for path, depth in _walk(folder):
        names = {p.name for p in path.iterdir() if p.is_file()}
        if (path / "exercises").is_dir() and any((path / "exercises" / f).is_file() for f in files):
            candidates.append((depth, 0, path))
        elif names & files:
            candidates.append((depth, 1, path))
        notebooks += [path / n for n in sorted(names) if n.endswith(".ipynb")]
    if candidates:
        return min(candidates, key=lambda c: (c[0], c[1]))[2]
    if len(notebooks) == 1:
        return notebooks[0]
    if notebooks:
        listed = ", ".join(str(n.relative_to(folder)) for n in notebooks[:5])
        raise UsageError(f"several notebooks were uploaded ({listed}); upload only one")
    expected = ", ".join(sorted(files))
    raise UsageError(f"no exercise files found in the upload: upload {expected} (or a notebook)")


def _results(result, notes: list[str]) -> dict:
    from grader.result import formats

    buffer = io.StringIO()
    formats.emit("gradescope", result, buffer)
    doc = json.loads(buffer.getvalue())
    if notes:
        extra = "How your upload was read:\n" + "\n".join(f"- {n}" for n in notes)
        doc["output"] = (doc.get("output", "") + "\n\n" + extra).strip()
    return doc


def _failure(message: str) -> dict:
    return {"score": 0.0, "output": message, "tests": []}


def run_autograder(root: Path) -> int:
    """Grade ``root/submission`` and write ``root/results/results.json``."""
    from grader import pipeline
    from grader.judge.seeds import course_seed
    from grader.protocol.limits import Limits
    from grader.result import report_text

    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    settings_file = root / "source" / SETTINGS
    settings = json.loads(settings_file.read_text()) if settings_file.is_file() else {}
    try:
        path = find_submission(root / "submission")
        submission = pipeline.open_path(path, name=path.name, elsewhere=True)
    except (UsageError, pipeline.SubmissionError) as exc:
        results.write_text(json.dumps(_failure(f"Nothing was graded: {exc}"), indent=2) + "\n")
        print(f"grade gradescope: {exc}")
        return EXIT_PASSED
    seed = settings.get("seed")  # the course's (None: a bundle built before there was one)
    request = pipeline.Request(
        seed=course_seed(PUBLIC_SEED if seed is None else seed, "bundle"),  # students see it
        exercises=settings.get("exercises"),
        max_examples=settings.get("max_examples"),
        limits=Limits(**settings["limits"]) if settings.get("limits") else None,
        max_scores=settings.get("max_scores"),
        check_points=settings.get("check_points"),
    )
    notes = list(submission.notes)
    result = pipeline.finish(submission, request)
    doc = _results(result, notes)
    results.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"graded {path.relative_to(root)}")
    report_text.write(result, sys.stdout, verbose=True)  # for the instructor's stdout view
    return EXIT_PASSED


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="grade gradescope",
        description="Write a Gradescope autograder bundle (setup.sh and run_autograder at the "
        "zip's root, the student edition of the packs in use inside: --pack chooses).",
    )
    p.add_argument("out", type=Path, nargs="?", help="the zip to write")
    p.add_argument(
        "--seed",
        type=seed_argument,
        default=None,
        metavar="N",
        help="the course's grading seed (default: seed in --config's grading.toml, else one "
        "drawn now); kept only in the bundle",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE",
        help="a grading.toml: its seed, exercises, points and limits",
    )
    p.add_argument("--max-examples", type=int, default=None, metavar="N", help="examples per check")
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    p.add_argument(
        "--run",
        type=Path,
        metavar="ROOT",
        help="(used by the bundle's run_autograder) grade ROOT/submission into "
        "ROOT/results/results.json",
    )
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.run is not None:
        return run_autograder(args.run.resolve())
    if args.out is None:
        raise UsageError("grade gradescope: give the zip to write (e.g. autograder.zip)")
    if args.out.suffix != ".zip":
        raise UsageError(f"{args.out}: the bundle's name must end in .zip")
    if args.out.exists() and not args.force:
        raise UsageError(f"{args.out} exists; add --force to replace it")
    if args.max_examples is not None and args.max_examples < 1:
        raise UsageError("--max-examples must be at least 1")
    settings, source = bundle_settings(args.seed, args.max_examples, args.config)
    count = write_bundle(args.out, settings)
    size = args.out.stat().st_size
    chosen = set(settings["exercises"])
    total = sum(settings["max_scores"].get(e.id, e.max_score) for e in EXERCISES if e.id in chosen)
    seed = {"drawn": "a course seed drawn now", "grading.toml": "the seed of grading.toml",
            "--seed": "the seed given with --seed"}[source]  # fmt: skip
    if settings["seed"] == PUBLIC_SEED:
        seed = "the public seed (the examples of a student's own grade)"
    print(
        f"wrote {args.out}: {count} files, {size / 1024:.0f} KiB; upload it as the "
        f"assignment's autograder (set the assignment's points to the grader's maximum, "
        f"{total:g}). It grades with {seed}, kept only in its {SETTINGS}."
    )
    return EXIT_PASSED if count else EXIT_USAGE
