"""Starts a daemon that leaves its session and process group (double fork + setsid), renames
itself with the test's marker and outlives the exercise, trying to write a file later. Gives a
correct answer; the test checks that the daemon is gone."""

# exercise: 3.1
# expect-status: passed
# needs: tree-kill

import ctypes
import os
import time

import torch

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, ctypes.c_char_p(b"@MARKER@"), 0, 0, 0)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            time.sleep(1)
            try:
                with open("/tmp/@MARKER@-late.txt", "w") as f:
                    f.write("still here")
            except OSError:
                pass
        os._exit(0)
    os._exit(0)


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
