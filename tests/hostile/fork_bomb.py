"""A fork bomb: every process forks until the kernel refuses, then sleeps (each child names
itself with the test's marker so that the test can look for leftovers)."""

# exercise: 3.1
# expect-status: timeout
# needs: process-limit

import ctypes
import os
import time

MARKER = b"@MARKER@"


def _name_me():
    ctypes.CDLL(None).prctl(15, ctypes.c_char_p(MARKER), 0, 0, 0)  # PR_SET_NAME


def transfer_weights(sa_v2, sa_v1):
    failures = 0
    started = time.monotonic()
    while failures < 50 and time.monotonic() - started < 20:
        try:
            if os.fork() == 0:
                _name_me()
                failures = 0
                continue
        except OSError:
            failures += 1
            time.sleep(0.01)
    time.sleep(120)
    os._exit(0)
