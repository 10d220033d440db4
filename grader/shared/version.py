"""The grader's version, written into every result (``grader_version``). Modules read it from
here rather than from the ``grader`` package, so that the package's face imports nothing back."""

__version__ = "0.1.0"
