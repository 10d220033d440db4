"""The judge<->worker channel: length-prefixed messages of plain data and tensors.

Messages are written with ``torch.save`` and read back with ``torch.load(weights_only=True)``,
which only rebuilds dicts, lists, tuples, strings, numbers, booleans, ``None`` and tensors:
whatever a worker sends, decoding it never runs code in the judge (DESIGN §5.1).
"""

from __future__ import annotations

import io
import os
import select
import struct
import time
from typing import Any

import torch

_HEADER = struct.Struct("!Q")
MAX_MESSAGE_BYTES = 256 * 1024 * 1024


class ChannelClosed(Exception):
    """The other end closed the channel (a worker that exited or crashed)."""


class ChannelTimeout(Exception):
    """No complete message arrived within the time limit."""


class BadMessage(Exception):
    """The bytes received are not a message this protocol accepts."""


def encode(obj: Any) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    payload = buf.getvalue()
    return _HEADER.pack(len(payload)) + payload


def decode(payload: bytes) -> Any:
    try:
        return torch.load(io.BytesIO(payload), weights_only=True, map_location="cpu")
    except Exception as exc:  # any refusal by the safe unpickler is a protocol breach
        raise BadMessage(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}") from None


def send(fd: int, obj: Any) -> None:
    data = memoryview(encode(obj))
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChannelTimeout()
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise ChannelTimeout()
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise ChannelClosed()
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv(fd: int, timeout: float | None = None) -> Any:
    """Read one message; ``timeout`` bounds the wait for the whole message, in seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if size > MAX_MESSAGE_BYTES:
        raise BadMessage(f"message of {size} bytes is over the {MAX_MESSAGE_BYTES} byte cap")
    return decode(_read_exact(fd, size, deadline))
