"""The first code a batch's judge process runs, kept free of heavy imports: it starts the
sandbox's fork server (which imports torch in its own process) before this process imports
torch too, as ``grade`` does, then sets up the judge (``grader.batch.pool.init_judge``)."""

from __future__ import annotations

import os
import signal


def init(sandbox: str, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C
    # The judge processes already fill the cores: one torch thread each, here and in the
    # workers (whose fork server inherits the variable).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if sandbox != "none":
        from grader.judge.launch.starter import prestart

        prestart()
    from grader.batch.pool import init_judge

    init_judge(sandbox, parent)
