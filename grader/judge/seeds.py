"""The two seeds a grade can be drawn from (DESIGN §5.4), chosen without importing torch.

- The **public seed** (``PUBLIC_SEED``): fixed, printed in every report, the default of a
  student's ``grade``, so that any report can be reproduced.
- The **course's grading seed**: ``seed`` in grading.toml (else one drawn on the first run of
  ``grade batch`` and kept in OUT), the one inside a Gradescope bundle, or ``GRADE_SEED`` in the
  environment of CI. It grades where the grade counts, so an answer that memorized the public
  examples (a lookup table) does not pass, and it appears in nothing a student sees: a result
  drawn from it carries ``grader.result.schema.HIDDEN_SEED`` and renders as "course seed".

``--seed N`` on the command line always wins. Seeds are whole numbers from 0 to ``MAX_SEED``
(SQLite's largest integer); the negative ``HIDDEN_SEED`` is never one.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

PUBLIC_SEED = 20241  # the default seed (the pipeline's front ends); here without torch
MAX_SEED = 2**63 - 1
ENV_VAR = "GRADE_SEED"
DRAWN_BELOW = 2**32  # drawn seeds: 0 <= seed < 2**32 (and never the public one)


class SeedError(ValueError):
    """A seed that is not a whole number from 0 to ``MAX_SEED``; the message is one line."""


def check_seed(value: int, where: str) -> int:
    """``value`` if it is a valid seed, else ``SeedError`` naming ``where`` it came from."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise SeedError(f"{where} must be a whole number from 0 to {MAX_SEED}, not {value!r}")
    return value


def parse_seed(text: str, where: str, secret: bool = False) -> int:
    """The seed written in ``text``; a ``secret`` one is never repeated in the error."""
    try:
        value = int(text.strip())
    except ValueError:
        value = None
    if value is None or not 0 <= value <= MAX_SEED:
        shown = "its value is not shown: it is a secret" if secret else f"not {text!r}"
        raise SeedError(f"{where} must be a whole number from 0 to {MAX_SEED} ({shown})")
    return value


def seed_argument(text: str) -> int:
    """``argparse`` type of ``--seed``."""
    import argparse

    try:
        return parse_seed(text, "--seed")
    except SeedError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--seed ")) from None


def draw_seed() -> int:
    """A new course seed, from the operating system's random source."""
    while True:
        value = secrets.randbelow(DRAWN_BELOW)
        if value != PUBLIC_SEED:
            return value


@dataclass(frozen=True)
class Seed:
    """The seed a run grades with, where it came from, and whether students may see it."""

    value: int
    source: str  # "public", "--seed", "GRADE_SEED", "grading.toml", "drawn", "bundle"
    hidden: bool = False


def course_seed(value: int, source: str) -> Seed:
    """A course's grading seed: hidden, unless it is the public one (nothing to hide)."""
    return Seed(value, source, hidden=value != PUBLIC_SEED)


def for_grade(cli_seed: int | None, environ: Mapping[str, str] | None = None) -> Seed:
    """The seed of ``grade`` (and ``pytest --grade``): ``--seed`` if given (shown); else
    ``GRADE_SEED`` when set and not empty (a CI secret: hidden; an unset secret expands to the
    empty string); else the public seed."""
    if cli_seed is not None:
        return Seed(check_seed(cli_seed, "--seed"), "--seed")
    text = (os.environ if environ is None else environ).get(ENV_VAR, "").strip()
    if text:
        return course_seed(parse_seed(text, ENV_VAR, secret=True), ENV_VAR)
    return Seed(PUBLIC_SEED, "public")
