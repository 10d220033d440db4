"""Grader for exercise packs: a judge process that draws property-based examples and compares
against a pack's reference, and sandboxed workers that run student code.

In a notebook, ``import grader; grader.check(ID)`` grades an exercise from the cells the
kernel has run (``grader.live.nbcheck``). Importing ``grader`` imports nothing heavy and
starts no process, in a Jupyter kernel too: the judge process of ``grader.check`` starts on the
first check."""

from __future__ import annotations

from grader.shared.version import __version__  # noqa: F401  (re-exported)


def check(exercise: str, *, seed: int | None = None, max_examples: int | None = None):
    """Grade the exercise whose id is ``exercise`` (a string, as the notebook and the report
    name it) from the cells this notebook's kernel has run (no save needed); the result shows
    under the cell."""
    from grader.live.nbcheck import check as check_in_kernel

    return check_in_kernel(exercise, seed=seed, max_examples=max_examples)


def check_all(*, seed: int | None = None, max_examples: int | None = None):
    """Grade every exercise from the cells this notebook's kernel has run."""
    from grader.live.nbcheck import check_all as check_all_in_kernel

    return check_all_in_kernel(seed=seed, max_examples=max_examples)
