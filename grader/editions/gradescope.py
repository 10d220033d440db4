"""The Gradescope autograder bundle (``grade gradescope OUT.zip``).

The zip holds, at its root, ``setup.sh`` (run once, as root, when Gradescope builds the image:
it makes a virtual environment and installs the student edition of this package with the
constraints file) and ``run_autograder`` (run for every submission: it calls
``grade gradescope --run``, ``grader.editions.autograder``, which finds what the student
uploaded in ``submission/``, grades it and writes ``results/results.json``), both from
``templates/edition/``. Both honour ``AUTOGRADER_ROOT`` (default ``/autograder``), so that the
bundle can be run in a simulated layout. The package inside is the student edition of the packs
in use (``grade release``, ``--pack`` chooses): the packs' checks, probes and stubs, registered
by its entry points, and no solution, no corpus; its run grades with those packs.

The bundle grades with the course's grading seed (``--seed``, else ``seed`` in the grading.toml
given with ``--config``, else one drawn when the bundle is built), kept only in ``bundle.json``
at the zip's root (readable by its owner only, outside the student edition); what students see
on Gradescope says "course seed". The rest of that grading.toml (exercises, points, limits)
applies too.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import zipfile
from pathlib import Path

from grader.editions import text as edition_text
from grader.editions.release import TORCH_CPU_INDEX, build_release
from grader.shared.errors import UsageError

PACKAGE_DIR = "package"  # where the student edition sits inside the bundle
SETTINGS = "bundle.json"  # grading options chosen when the bundle was built

# --- building the bundle -------------------------------------------------------------------


def warm_modules() -> list[str]:
    """What ``setup.sh`` imports once: every pack's package and the modules its workers load."""
    from grader.shared.course import packs

    return list(dict.fromkeys(m for p in packs() for m in (p.package, *p.worker)))


def setup_sh() -> str:
    """The bundle's ``setup.sh`` (``templates/edition/setup.sh.j2``)."""
    modules = ", ".join(warm_modules())
    return edition_text.render(
        "setup.sh.j2", package=PACKAGE_DIR, torch_index=TORCH_CPU_INDEX, modules=modules
    )


def run_autograder_sh() -> str:
    """The bundle's ``run_autograder`` (``templates/edition/run_autograder.j2``)."""
    return edition_text.render("run_autograder.j2")


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
    with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
        package = Path(tmp) / PACKAGE_DIR
        files = build_release(package, student=False)
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(out.name + ".partial")
        with zipfile.ZipFile(partial, "w") as zf:
            _add(zf, "setup.sh", setup_sh().encode(), executable=True)
            _add(zf, "run_autograder", run_autograder_sh().encode(), executable=True)
            _add(zf, SETTINGS, (json.dumps(settings, indent=2) + "\n").encode(), private=True)
            for path in files:
                name = f"{PACKAGE_DIR}/{path.relative_to(package).as_posix()}"
                _add(zf, name, path.read_bytes(), executable=path.stat().st_mode & 0o111 != 0)
        partial.replace(out)
    return len(files) + 3
