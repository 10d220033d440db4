"""Ends its own process from inside the graded call, skipping every cleanup."""

# exercise: 3.1
# expect-status: error
# expect-message: exited with status 3

import os


def transfer_weights(sa_v2, sa_v1):
    os._exit(3)
