"""The judge<->worker channel: length-prefixed messages of plain data and tensors.

A message is a JSON document (its containers tagged, so that lists, tuples, dicts and tensors
come back as what they were) followed by the raw bytes of its tensors. Decoding runs
``json.loads`` and ``torch.frombuffer`` on validated offsets, dtypes and shapes: it can only
ever rebuild dicts, lists, tuples, strings, numbers, booleans, ``None`` and plain CPU tensors,
so whatever a worker sends, decoding it never runs code in the judge (DESIGN §5.1). This is the
guarantee of ``torch.load(weights_only=True)`` at a fraction of its cost (a few microseconds a
message instead of about a millisecond, which counted over the hundreds of calls of one grade).

Every frame is hostile (DESIGN §5.10): student code can write frames of its own onto its
worker's reply channel. Before anything is computed from a frame, it is held to cheap bounds,
each checked in constant time or at C speed (``bytes.count``, ``replace``, one regex):

- the frame: at most ``MAX_MESSAGE_BYTES`` (256 MiB), said in its 8-byte header;
- its JSON document: ASCII, as ``encode`` writes it; at most ``MAX_DOC_BYTES`` (64 MiB),
  ``MAX_DOC_ITEMS`` (262,144) values and ``MAX_TENSORS`` (4,096) tensors, counted before it is
  parsed (``_count_document``); one too short to break a cap (12 KiB) is not counted;
- nesting: ``json.loads`` stops at its recursion guard, rebuilding at ``MAX_DEPTH`` levels;
- ints: at most ``MAX_INT_DIGITS`` digits (where Python has no limit, checked before reading);
- a tensor header ``["x", dtype, shape, start, nbytes]``: a known dtype; at most ``MAX_DIMS``
  (16) dimensions, counted before any is read; sizes that are non-negative ints whose running
  product stops as soon as it passes ``MAX_MESSAGE_BYTES``; an aligned start; a byte count
  equal to the shape's, inside the frame.

The largest messages measured (60,000 of them: the solution, the example, the stubs, the
corpus) have a document of 4,740 bytes, 457 values, 53 tensors, nesting 6, 3 dimensions, far
under the caps (GPT-2 XL's state dict has 821 tensors). A worker refuses to send a reply over
the byte cap (``encode``): the student's failure, not the wire's.

Memory: a reply of N bytes makes the judge hold at most about 7 x N + 32 MiB, and never more
than about 900 MiB: the frame (N); a copy of its bool tensors (others are views of the frame);
and for its document of D bytes, a copy and its text (2 x D), its strings (up to 4 x D: one
character outside the BMP makes a string 4 bytes a character) and its values (about 100 bytes
each, 25 MiB at most). Measured at the caps: 393 MiB for 64 MiB of such strings, 25 MiB for
262,144 values; 20 million ``[]`` refused with no growth. Decoding any frame takes a second or
so at most (1.5 s at the caps, on a busy 2-core machine): tests/test_wire_bounds.py.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import struct
import sys
import time
from typing import TYPE_CHECKING, Any

from grader.shared import pipes

if TYPE_CHECKING:
    import torch

_HEADER = struct.Struct("!Q")  # the payload's length
_DOC = struct.Struct("!I")  # the JSON document's length, at the start of the payload
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
MAX_DEPTH = 64
# The bounds of one message's JSON document and tensor headers (the module's docstring).
MAX_DOC_BYTES = 64 * 1024 * 1024
MAX_DOC_ITEMS = 1 << 18
MAX_TENSORS = 4096
MAX_DIMS = 16
# A document this short cannot pass the caps (a value takes a byte at least): not counted.
_COUNTED_FROM = min(MAX_DOC_ITEMS, 3 * MAX_TENSORS)
ALIGN = 64  # every tensor's bytes start on this boundary of the payload
# Ints travel up to this many digits (a parameter count of any model has fewer than 20): a
# larger one is no answer to check, and JSON would refuse one of over 4,300 digits anyway.
MAX_INT_DIGITS = 40
_INT_BOUND = 10**MAX_INT_DIGITS

_DTYPE_NAMES = (
    *"float32 float64 float16 bfloat16 complex64 complex128".split(),
    *"int8 int16 int32 int64 uint8 bool".split(),
)


@functools.cache
def dtypes() -> dict[str, torch.dtype]:
    """The dtypes a tensor may have on the wire, by name. (torch is imported on first use, so
    that a judge can start its workers while it is still importing torch.)"""
    import torch

    return {name: getattr(torch, name) for name in _DTYPE_NAMES}


@functools.cache
def _names() -> dict:
    return {d: name for name, d in dtypes().items()}


class ChannelClosed(Exception):
    """The other end closed the channel (a worker that exited or crashed)."""


class ChannelTimeout(Exception):
    """No complete message arrived within the time limit."""


class BadMessage(Exception):
    """The bytes received are not a message this protocol accepts."""


class NotEncodable(TypeError):
    """A value that is not plain data and tensors, or too big to send (in plain words)."""


def int_too_large(n: int) -> str | None:
    """Why int ``n`` cannot be checked ("an int with 401 digits; ..."), or None if it can."""
    if -_INT_BOUND < n < _INT_BOUND:
        return None
    bits = abs(n).bit_length()
    # Python refuses to write an int of over 4,300 digits as text: estimate those.
    digits = f"{len(str(abs(n))):,}" if bits <= 14_000 else f"about {int(bits * 0.30103):,}"
    return (
        f"an int with {digits} digits; an int that large cannot be checked "
        f"(the grader takes ints of up to {MAX_INT_DIGITS} digits)"
    )


# --- encoding ---------------------------------------------------------------------------------


def _aligned(n: int) -> int:
    """``n`` rounded up to the next ``ALIGN`` boundary: where tensor bytes start, counted from
    the start of the payload, the same for ``encode`` and ``decode``."""
    return -(-n // ALIGN) * ALIGN


def _tree(obj: Any, blobs: list, offset: list[int], depth: int) -> Any:
    kind = type(obj)
    if kind is int and (too_large := int_too_large(obj)) is not None:
        raise NotEncodable(too_large)
    if obj is None or kind is bool or kind is int or kind is str:
        return obj
    if kind is float:
        return obj if math.isfinite(obj) else ["f", repr(obj)]
    if depth > MAX_DEPTH:
        raise NotEncodable(f"the value is nested more than {MAX_DEPTH} levels deep")
    if kind is list:
        return ["l", *(_tree(v, blobs, offset, depth + 1) for v in obj)]
    if isinstance(obj, tuple):
        return ["u", *(_tree(v, blobs, offset, depth + 1) for v in obj)]
    if isinstance(obj, dict):  # an OrderedDict (a state dict) arrives as a dict
        items: list[Any] = ["d"]
        for k, v in obj.items():  # strings (the keys of a state dict) inline: no call each
            items.append(k if type(k) is str else _tree(k, blobs, offset, depth + 1))
            items.append(v if type(v) is str else _tree(v, blobs, offset, depth + 1))
        return items
    if "torch" in sys.modules and isinstance(obj, sys.modules["torch"].Tensor):
        return _tensor(obj, blobs, offset)
    raise NotEncodable(f"a {kind.__name__} is not plain data or a tensor")


def _tensor(t: torch.Tensor, blobs: list, offset: list[int]) -> list:
    import torch

    if type(t) is not torch.Tensor and type(t) is not torch.nn.Parameter:
        raise NotEncodable(
            f"a {type(t).__name__} (a subclass of torch.Tensor) is not a plain tensor"
        )
    name = _names().get(t.dtype)
    if name is None:
        raise NotEncodable(f"a tensor of dtype {t.dtype} cannot be sent")
    flat = _bytes_of(t) if t.is_cpu else None
    if flat is None:  # another device, a conjugate or negative view, or no numpy dtype
        if t.device.type == "meta":
            raise NotEncodable("a tensor on the meta device holds no values")
        t = t.detach().to("cpu").resolve_conj().resolve_neg().contiguous()
        flat = t.reshape(-1).view(torch.uint8).numpy()
    nbytes = flat.nbytes
    start = 0
    if nbytes:
        start = _aligned(offset[0])
        blobs.append((start, flat))
        offset[0] = start + nbytes
    return ["x", name, list(t.shape), start, nbytes]


def _bytes_of(t: torch.Tensor) -> Any:
    """The bytes of CPU tensor ``t`` in C order, as a flat uint8 numpy array (a view where
    ``t`` is contiguous); None where numpy cannot show them (bfloat16, a conjugate or negative
    view), which the caller then resolves with torch."""
    try:
        array = t.detach().numpy()
    except (RuntimeError, TypeError):
        return None
    return array.reshape(-1).view("uint8")


def encode(obj: Any) -> bytearray:
    """The message for ``obj``: header, JSON document, tensor bytes (each copied once)."""
    blobs: list[tuple[int, Any]] = []
    tree = _tree(obj, blobs, [0], 0)
    doc = json.dumps(tree, separators=(",", ":"), allow_nan=False).encode()
    head = _DOC.size + len(doc)
    # The tensors' bytes start on an ALIGN boundary of the payload (after the header).
    base = _HEADER.size + _aligned(head)
    size = base + (blobs[-1][0] + blobs[-1][1].nbytes if blobs else 0)
    if size - _HEADER.size > MAX_MESSAGE_BYTES:  # the judge would refuse it: said here instead
        raise NotEncodable(
            f"it holds {size:,} bytes, over the {MAX_MESSAGE_BYTES:,} one reply "
            "may carry (far more than an answer to the exercise needs)"
        )
    message = bytearray(size)
    _HEADER.pack_into(message, 0, size - _HEADER.size)
    _DOC.pack_into(message, _HEADER.size, len(doc))
    message[_HEADER.size + _DOC.size : _HEADER.size + head] = doc
    view = memoryview(message)
    for start, flat in blobs:
        view[base + start : base + start + flat.nbytes] = flat
    return message


# --- decoding ---------------------------------------------------------------------------------


def _untree(node: Any, blob: memoryview, depth: int) -> Any:
    if not isinstance(node, list):
        if isinstance(node, dict):
            raise BadMessage("an untagged object")
        if type(node) is int and not -_INT_BOUND < node < _INT_BOUND:
            raise BadMessage(f"an int of more than {MAX_INT_DIGITS} digits")
        return node
    if depth > MAX_DEPTH or not node or not isinstance(node[0], str):
        raise BadMessage("a malformed value")
    tag = node[0]
    if tag == "l":
        return [_untree(v, blob, depth + 1) for v in node[1:]]
    if tag == "u":
        return tuple(_untree(v, blob, depth + 1) for v in node[1:])
    if tag == "d":
        if len(node) % 2 == 0:
            raise BadMessage("a dict with a key and no value")
        out = {}
        for i in range(1, len(node), 2):
            key, value = node[i], node[i + 1]
            if type(key) is not str:  # strings (most keys) are what they are: no call each
                key = _untree(key, blob, depth + 1)
            try:
                out[key] = value if type(value) is str else _untree(value, blob, depth + 1)
            except TypeError:
                raise BadMessage("a dict key that cannot be a key") from None
        return out
    if tag == "f" and len(node) == 2 and node[1] in ("nan", "inf", "-inf"):
        return float(node[1])
    if tag == "x" and len(node) == 5:
        return _untensor(node, blob)
    raise BadMessage(f"an unknown tag {tag[:20]!r}")


def _untensor(node: list, blob: memoryview) -> torch.Tensor:
    import torch

    _, name, shape, start, nbytes = node
    dtype = dtypes().get(name) if type(name) is str else None
    if dtype is None:
        raise BadMessage("a tensor of an unknown dtype")
    if type(shape) is not list:
        raise BadMessage("a tensor of a malformed shape")
    if (ndim := len(shape)) > MAX_DIMS:  # first: a product of 100,000 huge sizes takes minutes
        raise _over(f"a tensor of {ndim:,} dimensions", MAX_DIMS)
    if type(start) is not int or type(nbytes) is not int or start < 0 or start % ALIGN:
        raise BadMessage("a tensor at a malformed offset")
    numel = 1  # of the non-zero sizes first (an empty tensor's strides are made from them)
    for n in shape:
        if type(n) is not int or n < 0:
            raise BadMessage("a tensor of a malformed shape")
        if n:
            numel *= n
            if numel > MAX_MESSAGE_BYTES:  # more elements than any frame holds: stop here
                raise BadMessage("a tensor whose shape holds more than a message can")
    if 0 in shape:
        numel = 0
    if numel * dtype.itemsize != nbytes or (nbytes and start + nbytes > len(blob)):
        raise BadMessage("a tensor whose bytes do not match its shape")
    if not nbytes:
        return torch.empty(shape, dtype=dtype)
    if dtype is torch.bool:  # any byte other than 0 and 1 is made a valid bool
        flat = torch.frombuffer(blob, dtype=torch.uint8, count=nbytes, offset=start) != 0
    else:
        flat = torch.frombuffer(blob, dtype=dtype, count=nbytes // dtype.itemsize, offset=start)
    # torch.reshape, not the method: half the cost a call, counted over a model's tensors.
    return flat if len(shape) == 1 else torch.reshape(flat, shape)


def _short_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS + 1:  # the sign
        raise BadMessage(f"an int of more than {MAX_INT_DIGITS} digits")
    return int(text)


# Where ints of any length may be read (Python 3.10 before 3.10.7, PYTHONINTMAXSTRDIGITS=0),
# reading one of a million digits takes quadratic time: the length is checked first, in Python.
_GUARDED = json.JSONDecoder(parse_int=_short_int)


def _ints_bounded() -> bool:
    """Whether ``json.loads`` refuses an int of over 4,300 digits before reading it."""
    limit = getattr(sys, "get_int_max_str_digits", None)
    return limit is not None and 0 < limit() <= 4300


_SEPARATORS = (b"[", b",", b"{", b":")  # one precedes every value of a document but the first
_STRING = re.compile(rb'"[^"]*"')  # a string, once its escaped quotes are gone


def _count_document(buf: bytes | bytearray, start: int, end: int) -> None:
    """Refuse a document (``buf[start:end]``) of more values or tensors than the caps before
    ``json.loads`` builds any: values by their separators, tensors by ``"x"``; where strings
    (student text) hold separators too, again outside them (escapes gone as JSON reads them)."""
    items = sum(buf.count(c, start, end) for c in _SEPARATORS)
    if items > MAX_DOC_ITEMS and 0 < buf.count(b'"', start, end) <= 2 * MAX_DOC_ITEMS:
        bare = _STRING.sub(b"", buf[start:end].replace(b"\\\\", b"").replace(b'\\"', b""))
        items = sum(bare.count(c) for c in _SEPARATORS)
    if items > MAX_DOC_ITEMS:
        raise _over(f"a document of about {items:,} values", MAX_DOC_ITEMS)
    if (tensors := buf.count(b'"x"', start, end)) > MAX_TENSORS:
        raise _over(f"a message of about {tensors:,} tensors", MAX_TENSORS)


def _over(what: str, cap: int) -> BadMessage:
    return BadMessage(f"{what} (the grader takes up to {cap:,})")


def decode(payload: bytes | bytearray) -> Any:
    """The value of one message's payload; ``BadMessage`` for anything else."""
    try:
        view = memoryview(payload)
        if len(view) < _DOC.size:
            raise BadMessage("a message shorter than its header")
        (size,) = _DOC.unpack(view[: _DOC.size])
        end = _DOC.size + size
        if end > len(view):
            raise BadMessage("a document longer than its message")
        if size > MAX_DOC_BYTES:  # before a byte of it is copied
            raise _over(f"a document of {size:,} bytes", MAX_DOC_BYTES)
        if size > _COUNTED_FROM:  # a smaller one cannot break the caps: no pass over it
            _count_document(payload, _DOC.size, end)
        doc = bytes(view[_DOC.size : end])
        if not doc.isascii():  # as encode writes it: then its text costs a byte a character
            raise BadMessage("a document with bytes that are not ASCII")
        tree = json.loads(doc) if _ints_bounded() else _GUARDED.decode(doc.decode())
        base = _aligned(end)
        data = payload if isinstance(payload, bytearray) else bytearray(payload)
        return _untree(tree, memoryview(data)[base:], 0)
    except BadMessage:
        raise
    except Exception as exc:  # malformed JSON, a recursion bomb, ...: a protocol breach
        raise BadMessage(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}") from None


# --- the channel ------------------------------------------------------------------------------

PIPE_BYTES = 1 << 20


def widen(fd: int) -> None:
    """Give a pipe room for a whole typical message (Linux; elsewhere nothing happens): with
    the default 64 KiB, sending a model's weights takes a round of scheduling per 64 KiB."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


def send(fd: int, obj: Any) -> None:
    data = memoryview(encode(obj))
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _read_into(fd: int, view: memoryview) -> int:
    """Read what is there, up to ``len(view)`` bytes, into ``view``: in place with
    ``os.readv`` (POSIX), else (Windows) through ``os.read`` and a copy."""
    if _READV is not None:
        return _READV(fd, [view])
    chunk = os.read(fd, len(view))
    view[: len(chunk)] = chunk
    return len(chunk)


_READV = getattr(os, "readv", None)


def _read_exact(fd: int, n: int, deadline: float | None) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not pipes.wait_readable(fd, left):
                raise ChannelTimeout()
        k = _read_into(fd, view[got : min(n, got + (1 << 20))])
        if not k:
            raise ChannelClosed()
        got += k
    return buf


def recv(fd: int, timeout: float | None = None) -> Any:
    """Read one message; ``timeout`` bounds the wait for the whole message, in seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if size > MAX_MESSAGE_BYTES:
        raise BadMessage(f"message of {size} bytes is over the {MAX_MESSAGE_BYTES} byte cap")
    return decode(_read_exact(fd, size, deadline))
