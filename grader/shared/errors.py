"""Errors that several layers raise and the command line turns into one line of output.

Kept apart from ``grader.commands.cli`` so that the sandbox and the commands can raise them
without importing the command line (and so that ``python -m grader.commands.cli``, where the
command line runs as ``__main__``, still catches them: there is one class, here)."""


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""
