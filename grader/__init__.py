"""Grader for the chapter 3-4 exercise pack: a judge process that draws property-based examples
and compares against the reference models, and sandboxed workers that run student code.

In a notebook, ``import grader; grader.check("3.1")`` grades an exercise from the cells the
kernel has run (``grader.commands.nbcheck``). Importing ``grader`` imports nothing heavy and
starts no process, in a Jupyter kernel too: the judge process of ``grader.check`` starts on the
first check."""

from __future__ import annotations

from grader.shared.version import __version__  # noqa: F401  (re-exported)


def check(exercise: str, *, seed: int | None = None, max_examples: int | None = None):
    """Grade exercise ``exercise`` ("3.1" ... "4.3") from the cells this notebook's kernel has
    run (no save needed); the result shows under the cell."""
    from grader.commands.nbcheck import check as check_in_kernel

    return check_in_kernel(exercise, seed=seed, max_examples=max_examples)


def check_all(*, seed: int | None = None, max_examples: int | None = None):
    """Grade all six exercises from the cells this notebook's kernel has run."""
    from grader.commands.nbcheck import check_all as check_all_in_kernel

    return check_all_in_kernel(seed=seed, max_examples=max_examples)
