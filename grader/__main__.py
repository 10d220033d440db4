"""``python -m grader``: the ``grade`` command, for when the venv's scripts are not on PATH."""

from grader.commands.cli import entry

if __name__ == "__main__":
    entry()
