"""Writes, straight onto the worker's reply channel, a reply of 80 million empty lists
(``[[],[],...]``, 240 MB, under the 256 MiB frame cap): ``json.loads`` would grow it about 27
times, to some 7 GiB in the judge. The judge refuses the document by its size before decoding
it, and holds no more than the frame while it reads it."""

# exercise: 4.1
# expect-status: error
# expect-message: the worker sent a reply the grader refuses: a document of 240,000,001 bytes

import fcntl
import os
import stat
import struct
import time

LISTS = 80_000_000
CHUNK = b"[]," * (1 << 20)  # 3 MiB: the frame is written in pieces, never held whole


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


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def send_forged(fd: int) -> None:
    doc_size = 3 * LISTS + 1  # "[", then "[]," each, the last comma made "]"
    write_all(fd, struct.pack("!QI", 4 + doc_size, doc_size) + b"[")
    per = len(CHUNK) // 3
    for start in range(0, LISTS, per):
        n = min(per, LISTS - start)
        piece = CHUNK if n == per else CHUNK[: 3 * n]
        if start + n == LISTS:
            piece = piece[:-1] + b"]"
        write_all(fd, piece)


def feedforward_params(cfg):
    for fd in reply_channels():
        try:
            send_forged(fd)
        except OSError:
            pass
    time.sleep(30)


def attention_params(cfg):
    return 0
