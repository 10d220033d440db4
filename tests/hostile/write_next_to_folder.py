"""Tries to write next to its own file and folder, over another exercise's file of the same
submission, into the home folder and /tmp. Gives correct answers; the test checks that
nothing was written outside the worker's scratch."""

# exercise: 4.1
# expect-status: passed
# needs: mount|landlock

import os
from pathlib import Path

from reference import TransformerBlock

HERE = Path(__file__).resolve()
ORIGINAL = Path("@SUBMISSION@")
for target in (
    HERE.parent / "@MARKER@.py",
    HERE.parent.parent / "@MARKER@.txt",
    ORIGINAL / "@MARKER@.txt",
    ORIGINAL.parent / "@MARKER@.txt",
    ORIGINAL / "exercises" / "ex3_1_weight_transfer.py",
    Path(os.path.expanduser("~")) / "@MARKER@.txt",
    Path("/tmp") / "@MARKER@.txt",
    Path("/var/tmp") / "@MARKER@.txt",
    Path("/dev/shm") / "@MARKER@.txt",
):
    try:
        with open(target, "w") as f:
            f.write("def transfer_weights(a, b):\n    pass  # @MARKER@\n")
    except OSError:
        pass
Path("in-my-scratch.txt").write_text("allowed")  # the one place a worker may write


def _count(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def feedforward_params(cfg):
    return _count(TransformerBlock(cfg).ff)


def attention_params(cfg):
    return _count(TransformerBlock(cfg).att)
