"""The grader's version, in a module of its own so that any layer can name it without importing
the ``grader`` package's face (which offers ``grader.check`` and would close a circle)."""

__version__ = "0.1.0"
