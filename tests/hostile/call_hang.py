"""Imports fine, then never returns from the graded call."""

# exercise: 3.1
# expect-status: timeout
# expect-message: did not finish

import time


def transfer_weights(sa_v2, sa_v1):
    time.sleep(10**6)
