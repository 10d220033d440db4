"""Tries to kill its parent, the grader (its PID written in by the test) and the grader's
process group. Gives a correct answer; the other exercise must still be graded."""

# exercise: 3.1
# expect-status: passed
# needs: pid|landlock

import os
import signal

import torch

for target in (os.getppid(), int("@JUDGE_PID@")):
    if target > 1:
        for kill in (os.kill, os.killpg):
            try:
                kill(target, signal.SIGKILL)
            except OSError:
                pass


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
