"""Writes, straight onto the worker's reply channel, a reply whose tensor header has a shape of
100,000 dimensions of 2**62: a judge that multiplied the sizes out before checking anything
would be blocked for minutes (one C call, quadratic in the list's length). The judge refuses
the frame at its number of dimensions."""

# exercise: 3.1
# expect-status: error
# expect-message: the worker sent a reply the grader refuses: a tensor of 100,000 dimensions

import fcntl
import json
import os
import stat
import struct
import time


def reply_channels() -> list[int]:
    """The pipes this process may write to (fd 4 in a fork-server worker)."""
    found = []
    for fd in range(3, 64):
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue
            if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                found.append(fd)
        except OSError:
            continue
    return found


def frame(doc: list, blob: bytes) -> bytes:
    text = json.dumps(doc, separators=(",", ":")).encode()
    payload = struct.pack("!I", len(text)) + text
    payload += bytes(-len(payload) % 64) + blob
    return struct.pack("!Q", len(payload)) + payload


def transfer_weights(sa_v2, sa_v1):
    forged = ["x", "float32", [2**62] * 100_000, 0, 4]
    message = frame(["d", "ok", True, "value", forged], bytes(64))
    for fd in reply_channels():
        try:
            os.write(fd, message)
        except OSError:
            pass
    time.sleep(30)
