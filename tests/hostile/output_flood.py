"""Prints about 100 MB (through print and straight to file descriptor 1), then hangs: the
grader must keep only the first kilobytes, and say that it dropped the rest."""

# exercise: 3.1
# expect-status: timeout
# expect-message: output cut at

import os
import time

LINE = "spam " * 200 + "\n"


def transfer_weights(sa_v2, sa_v1):
    for _ in range(50_000):
        print(LINE, end="")
    for _ in range(50_000):
        try:
            os.write(1, LINE.encode())
        except OSError:
            break
    time.sleep(10**6)
