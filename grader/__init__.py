"""Grader for the chapter 3-4 exercise pack: a judge process that draws property-based examples
and compares against the reference models, and sandboxed workers that run student code."""

from grader.shared.version import __version__

__all__ = ["__version__"]
