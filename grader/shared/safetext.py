"""One sanitiser for every string that comes from a worker or a submission.

Text that a student's code controls (exception messages and type names, traceback lines,
printed output, values sent back, file and cell names) reaches terminals, HTML pages, XML,
JSON, CI logs and SQLite. ``safe_text`` makes such text safe for all of them at once, where it
enters the judge, so that no renderer ever sees unsafe text:

- lone surrogates (and bytes that are not UTF-8) become U+FFFD; a valid surrogate pair
  becomes the character it encodes;
- control characters other than newline and tab, the invisible characters that reorder or
  break lines (bidi overrides and isolates, U+2028/U+2029, the byte order mark) and those that
  show nothing (zero-width spaces and joiners, U+2060-U+2064, the soft hyphen) are spelled out
  as their code points (``\\x1b``, ``\\u202e``, ``\\u200b``): shown, never obeyed, so that
  no two different texts look alike; a CR LF pair becomes a newline;
- the text is cut to ``limit`` characters, the cut said in the text itself.

``safe_text`` is idempotent: safe text passes through unchanged, so a second pass (a renderer
fed a saved result) changes nothing. It imports nothing heavy: the worker uses it too.
"""

from __future__ import annotations

import re
from typing import Any

TEXT_LIMIT = 2000  # an exception message, a value's string
SHORT_LIMIT = 200  # a type name, a file name, a line of code
MESSAGE_LIMIT = 20000  # a whole check message (the judge's text around the student's)

_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
# Everything but tab and newline in C0 and C1, DEL, the bidi controls (Trojan Source), the
# line and paragraph separators, the byte order mark, the two noncharacters XML refuses, and
# the characters that show nothing (zero-width spaces and joiners, the word joiner and
# invisible operators, the soft hyphen, fillers): with one, "alice" and "al\u200bice" look alike.
_ESCAPED = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufffe\uffff"
)
_UNSAFE = re.compile(f"[{_ESCAPED}\ud800-\udfff]")
_NOT_ESCAPED_BYTE = re.compile("[\ud800-\udc7f\udd00-\udfff]")  # not from surrogateescape
_PARTIAL_ESCAPE = re.compile(r"\\(?:x[0-9a-f]?|u[0-9a-f]{0,3})?\Z")


def _code_points(ranges: str) -> list[int]:
    """The code points of a regex character-class body such as ``a-z_``."""
    points: list[int] = []
    for m in re.finditer(r"(.)-(.)|(.)", ranges, re.S):
        points += range(ord(m[1]), ord(m[2]) + 1) if m[1] else [ord(m[3])]
    return points


# Each escaped character spelled out, for ``str.translate``: a C loop, where a regex
# substitution calls Python once per character (seconds for a megabyte of NULs).
_SPELLED = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" for c in _code_points(_ESCAPED)}
_GROWTH = {chr(c): len(spelled) - 1 for c, spelled in _SPELLED.items()}
_TO_SPELL = re.compile(f"[{_ESCAPED}]")


def _spelled_length(text: str) -> int:
    """``len(text.translate(_SPELLED))``, without building it."""
    if _TO_SPELL.search(text) is None:
        return len(text)
    return len(text) + sum(text.count(ch) * grow for ch, grow in _GROWTH.items())


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value if type(value) is str else str.__str__(value)
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    try:
        text = str(value)
    except Exception:  # a hostile __str__
        return f"<a {type(value).__name__} that cannot be shown>"
    return text if type(text) is str else str.__str__(text)


def cut_note(cut: int) -> str:
    """What ``safe_text`` appends where it cut ``cut`` characters."""
    return f" … [{cut:,} more characters cut]"


def safe_text(value: object, limit: int | None = TEXT_LIMIT) -> str:
    """``value`` as text that is safe to show anywhere (see the module's docstring), at most
    ``limit`` characters long (``None``: no cap)."""
    text = _as_text(value)
    if _UNSAFE.search(text) is None and (limit is None or len(text) <= limit):
        return text
    text = text.replace("\r\n", "\n")
    surrogates = _SURROGATE.search(text) is not None
    length = _spelled_length(text) - (len(_PAIR.findall(text)) if surrogates else 0)
    keep = 0
    if limit is not None and length > limit:
        keep = max(0, limit - len(cut_note(length)))
        # A megabyte of text is cut to ``keep`` characters: only its head is worked on.
        # Each character kept comes from at most two (a surrogate pair).
        text = text[: 2 * keep + 2]
    if surrogates:
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    text = text.translate(_SPELLED)
    if limit is None or length <= limit:
        return text
    head = _PARTIAL_ESCAPE.sub("", text[:keep])  # never half of a spelled-out character
    return head + cut_note(length - len(head))


def one_line(value: object, limit: int = SHORT_LIMIT) -> str:
    """``safe_text`` on a single line: line breaks and tabs become spaces (a reason in a
    table, a progress line, a one-line error)."""
    text = re.sub(r"[\t\n]+", " ", _as_text(value).replace("\r\n", "\n")).strip()
    return safe_text(text, limit)


def safe_value(value: Any, limit: int = TEXT_LIMIT) -> Any:
    """``value`` (plain data: dicts, lists, tuples, strings, numbers, tensors) with every string
    in it, keys included, made safe; everything else is returned as it is."""
    if isinstance(value, str):
        return safe_text(value, limit)
    if isinstance(value, dict):
        return {
            (safe_text(k, limit) if isinstance(k, str) else k): safe_value(v, limit)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [safe_value(v, limit) for v in value]
    if isinstance(value, tuple):
        return tuple(safe_value(v, limit) for v in value)
    return value


def safe_name(name: str) -> str:
    """A file or folder name as one safe line: bytes that are not UTF-8 (which ``os.listdir``
    hands over as lone surrogates) are spelled ``\\xff``, so that two names stay two."""
    if _SURROGATE.search(name):
        name = _NOT_ESCAPED_BYTE.sub("\ufffd", name)
        name = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return one_line(name, SHORT_LIMIT)


def _int(value: Any) -> int:
    return value if type(value) is int else 0


def safe_info(info: Any) -> dict:
    """A worker's description of an exception, every field checked and made safe: ``type``,
    ``message``, ``frames`` (``file``, ``line``, ``function``, ``code``), and for a syntax
    error ``file``, ``line`` and ``code``; ``refused`` when the grader refused a value."""
    info = info if isinstance(info, dict) else {}
    out: dict[str, Any] = {
        "type": one_line(info.get("type") or "Exception", SHORT_LIMIT),
        "message": safe_text(info.get("message", ""), TEXT_LIMIT),
        "frames": [],
    }
    frames = info.get("frames")
    for frame in frames[-10:] if isinstance(frames, list) else []:
        if isinstance(frame, dict):
            out["frames"].append(
                {
                    "file": one_line(frame.get("file", "?"), SHORT_LIMIT),
                    "line": _int(frame.get("line")),
                    "function": one_line(frame.get("function", "?"), SHORT_LIMIT),
                    "code": one_line(frame.get("code", ""), SHORT_LIMIT),
                }
            )
    for key in ("file", "code"):
        if key in info:
            out[key] = one_line(info[key], SHORT_LIMIT)
    if "line" in info:
        out["line"] = _int(info["line"])
    if info.get("refused") is True:
        out["refused"] = True
    return out
