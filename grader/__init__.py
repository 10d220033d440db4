"""Grader for the chapter 3-4 exercise pack: a judge process that draws property-based examples
and compares against the reference models, and sandboxed workers that run student code."""

__version__ = "0.1.0"
