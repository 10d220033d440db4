"""``python -m grader``: the ``grade`` command, for when the venv's scripts are not on PATH.

``python -m`` puts the current folder first on ``sys.path``. Run inside a class folder, that
would let a submission folder named like a package the grader imports (``torch/``, a pack's
package, the oracle's), or a ``*.dist-info`` folder among the submissions, be imported by the
grader's own process (as root, outside every sandbox layer) or replace a pack. So the current
folder leaves ``sys.path`` before anything else is imported, unless the grader itself is
imported from it (a checkout run in place). The ``grade`` script never has it there. One
thing stays out of reach: a folder named ``grader/`` in the current folder is what
``python -m grader`` runs; use ``grade`` there.
"""

import os
import sys


def _leave_current_folder() -> None:
    try:
        here = os.getcwd()
    except OSError:  # removed: nothing can be imported from it
        return
    ours = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.normcase(ours) != os.path.normcase(here):
        sys.path[:] = [
            p
            for p in sys.path
            if not isinstance(p, str)
            or (p and os.path.normcase(os.path.abspath(p)) != os.path.normcase(here))
        ]


_leave_current_folder()

from grader.commands.cli import entry  # noqa: E402

if __name__ == "__main__":
    entry()
