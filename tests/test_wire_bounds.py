"""Forged frames (DESIGN §5.10): student code can write frames of its own onto its worker's
reply channel. The judge checks the wire's cheap bounds before it computes anything from a
frame, and what it does decode costs a bounded amount (grader/protocol/wire.py says how much).

Forged payloads that used to block or bloat the judge are decoded in a child process, with a
generous wall-clock limit as a hang guard (no test here times how fast anything is) and the
child's peak memory measured around the call. The last test grades the two forged replies of
tests/hostile/ end to end."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from support import ROOT, make_submission

from grader.judge.launch.starter import supported
from grader.protocol import wire
from reference import GPTModel

MiB = 1 << 20
# A hang guard, not a timing: a decoding child takes a second or two (importing torch, if it
# does); before the bounds, the judge took one and two minutes over the shapes below.
HANG_GUARD_S = 60


def payload(doc, blob: bytes = b"") -> bytearray:
    raw = doc if isinstance(doc, bytes) else json.dumps(doc, separators=(",", ":")).encode()
    head = struct.pack("!I", len(raw)) + raw
    head += bytes(-len(head) % wire.ALIGN)
    return bytearray(head + blob)


def refused(doc, blob: bytes = b"") -> str:
    with pytest.raises(wire.BadMessage) as info:
        wire.decode(payload(doc, blob))
    return str(info.value)


def tensor(shape, nbytes: int, dtype: str = "float32", start: int = 0) -> list:
    return ["d", "ok", True, "value", ["x", dtype, shape, start, nbytes]]


# --- in a child process: the hang guard and the memory measured -------------------------------

CHILD = textwrap.dedent(
    """
    import json, os, re, sys

    from grader.protocol import wire

    if sys.argv[2] == "torch":
        import torch  # before measuring: decoding a tensor imports it
    if sys.argv[2] == "unbounded-ints":
        sys.set_int_max_str_digits(0)  # as PYTHONINTMAXSTRDIGITS=0 would


    def peak():
        # This process's own peak (ru_maxrss would start from the forking parent's); 0 where
        # there is no /proc (the tests that measure skip there).
        if not os.path.exists("/proc/self/status"):
            return 0
        with open("/proc/self/status") as f:
            return int(re.search(r"VmHWM:\\s*(\\d+) kB", f.read()).group(1)) * 1024


    path = sys.argv[1]
    data = bytearray(os.path.getsize(path))
    with open(path, "rb") as f:
        f.readinto(data)
    before = peak()
    try:
        value = wire.decode(data)
        outcome = "decoded"
    except wire.BadMessage as exc:
        outcome = f"refused: {exc}"
    growth = peak() - before
    print(json.dumps({"outcome": outcome, "growth": growth, "frame": len(data)}))
    """
)
linux_only = pytest.mark.skipif(
    not os.path.exists("/proc/self/status"), reason="the peak memory is read from /proc"
)


def decode_in_child(tmp_path: Path, data: bytes, mode: str = "") -> dict:
    """``wire.decode(data)`` in a fresh process: how it ended and how much its peak memory grew
    (one payload per process, since the peak only ever rises)."""
    path = tmp_path / f"payload-{len(os.listdir(tmp_path))}.bin"
    path.write_bytes(data)
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), mode],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        cwd=ROOT,
    )
    path.unlink()
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize(
    "dims, size",
    [
        (100_000, 2**62),  # 2.1 MB; math.prod of it took the judge 56 s
        (250_000, 10**9 - 1),  # 2.5 MB, under the cap of values: 100 s
    ],
)
def test_a_shape_of_a_huge_number_of_dimensions_is_refused_before_it_is_read(dims, size, tmp_path):
    forged = tensor([size] * dims, 4)
    got = decode_in_child(tmp_path, bytes(payload(forged, bytes(64))))
    assert got["outcome"] == (
        f"refused: a tensor of {dims:,} dimensions (the grader takes up to {wire.MAX_DIMS})"
    )


@linux_only
def test_twenty_million_empty_lists_are_refused_without_growing(tmp_path):
    # 60 MB, which json.loads grew about 27 times: refused by its count of values, made at C
    # speed on the frame itself, before a byte of it is copied.
    doc = b"[" + b"[]," * (20_000_000 - 1) + b"[]]"
    got = decode_in_child(tmp_path, bytes(payload(doc)))
    assert got["outcome"].startswith("refused: a document of about 40,000,000 values")
    assert got["growth"] < got["frame"] // 4, got


@linux_only
def test_a_document_over_the_byte_cap_is_refused_before_it_is_read(tmp_path):
    doc = b"[" + b"[]," * (wire.MAX_DOC_BYTES // 3) + b"[]]"
    got = decode_in_child(tmp_path, bytes(payload(doc)))
    assert got["outcome"] == (
        f"refused: a document of {len(doc):,} bytes (the grader takes up to 67,108,864)"
    )
    assert got["growth"] < got["frame"] // 4, got


# The worst documents the caps let through: each is decoded, within the documented bound.
def values_at_the_cap() -> bytes:
    return b'["l"' + b',["l"]' * ((wire.MAX_DOC_ITEMS - 1) // 2) + b"]"


ASTRAL = rb"\ud83d\ude00"  # one character outside the BMP: its string takes 4 bytes a character


def astral_strings_at_the_caps() -> bytes:
    # As many strings as values allow, filling the document, each 4 bytes a character.
    n = wire.MAX_DOC_ITEMS - 1
    each = (wire.MAX_DOC_BYTES - 16) // n - 3  # a string's text; its quotes and comma: 3
    return b'["l"' + (b',"' + ASTRAL + b"a" * (each - len(ASTRAL)) + b'"') * n + b"]"


def one_long_string() -> bytes:
    return b'["l","' + ASTRAL + b"a" * (wire.MAX_DOC_BYTES - 10 - len(ASTRAL)) + b'"]'


def separators_in_strings() -> bytes:
    # Student text full of separators: counted again outside the strings, then decoded.
    n = wire.MAX_DOC_ITEMS - 1
    each = (wire.MAX_DOC_BYTES - 16) // n - 3
    return b'["l"' + (b',"' + b"[:,{" * (each // 4) + b"a" * (each % 4) + b'"') * n + b"]"


def tensors_at_the_cap() -> bytes:
    return b'["l"' + b',["x","bool",[0],0,0]' * wire.MAX_TENSORS + b"]"


@linux_only
@pytest.mark.parametrize(
    "make",
    [
        values_at_the_cap,
        astral_strings_at_the_caps,
        one_long_string,
        separators_in_strings,
        tensors_at_the_cap,
    ],
)
def test_what_the_caps_let_through_costs_what_the_module_says(make, tmp_path):
    doc = make()
    assert len(doc) <= wire.MAX_DOC_BYTES
    got = decode_in_child(tmp_path, bytes(payload(doc)), "torch" if b'"x"' in doc else "")
    assert got["outcome"] == "decoded"
    # "A reply of N bytes makes the judge hold at most about 7 x N + 32 MiB" (beside the frame
    # itself, which the child holds before it decodes)
    assert got["growth"] <= 6 * got["frame"] + 32 * MiB, got


@pytest.mark.skipif(
    not hasattr(sys, "set_int_max_str_digits"), reason="Python reads no int of over 4,300 digits"
)
def test_a_million_digit_int_is_refused_where_python_would_read_it(tmp_path):
    doc = b'["l",' + b"9" * 1_000_000 + b"]"  # quadratic to read where ints have no limit
    got = decode_in_child(tmp_path, bytes(payload(doc)), "unbounded-ints")
    assert got["outcome"] == f"refused: an int of more than {wire.MAX_INT_DIGITS} digits"


# --- tensor headers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, nbytes, why",
    [
        ([2**62] * 16, 4, "holds more than a message can"),  # 16 dims, an astronomic product
        ([2**62, 2**62], 4, "holds more than a message can"),
        ([2**31, 2**31, 2**31], 4, "holds more than a message can"),
        ([0, 2**62], 0, "holds more than a message can"),  # empty, with a stride past int64
        ([1] * (wire.MAX_DIMS + 1), 4, f"17 dimensions (the grader takes up to {wire.MAX_DIMS})"),
        ([-1], 4, "malformed shape"),
        ([2, -2], 4, "malformed shape"),
        ([1.0], 4, "malformed shape"),
        ([True], 4, "malformed shape"),
        (["1"], 4, "malformed shape"),
        ([[1]], 4, "malformed shape"),
        ({"d": 1}, 4, "malformed"),
        (1, 4, "malformed shape"),
        ([2], 4, "do not match its shape"),
        ([2**20], 2**22, "do not match its shape"),  # the right count, not the bytes
    ],
)
def test_forged_tensor_headers_are_refused(shape, nbytes, why):
    assert why in refused(tensor(shape, nbytes), bytes(64))


@pytest.mark.parametrize(
    "dtype, start, nbytes",
    [("object", 0, 4), (["float32"], 0, 4), ("float32", -64, 4), ("float32", 1, 4)],
)
def test_forged_dtypes_and_offsets_are_refused(dtype, start, nbytes):
    refused(tensor([1], nbytes, dtype, start), bytes(128))


def test_the_most_dimensions_and_empty_tensors_still_travel():
    deep = torch.arange(2.0).reshape([1] * (wire.MAX_DIMS - 1) + [2])
    empty = torch.zeros(0, 5, dtype=torch.int64)
    data = wire.encode({"deep": deep, "empty": empty, "scalar": torch.tensor(3.0)})
    got = wire.decode(data[8:])
    assert torch.equal(got["deep"], deep) and got["deep"].dim() == wire.MAX_DIMS
    assert got["empty"].shape == (0, 5) and got["scalar"].item() == 3.0


def test_a_state_dict_of_gpt2_xl_depth_travels():
    """48 blocks (GPT-2 XL's 821 tensors, small ones): well inside the tensor cap."""
    cfg = {
        "vocab_size": 11,
        "context_length": 4,
        "emb_dim": 4,
        "n_heads": 2,
        "n_layers": 48,
        "drop_rate": 0.0,
        "qkv_bias": True,
    }
    state = GPTModel(cfg).state_dict()
    assert 800 < len(state) <= wire.MAX_TENSORS
    got = wire.decode(wire.encode(state)[8:])
    assert list(got) == list(state)
    assert all(torch.equal(got[k], v) for k, v in state.items())


# --- documents ---------------------------------------------------------------------------------


def test_values_and_tensors_up_to_their_caps_are_taken_and_one_more_is_not():
    at_cap = b'["l"' + b",0" * (wire.MAX_DOC_ITEMS - 1) + b"]"  # "[" and the commas: the cap
    assert wire.decode(payload(at_cap)) == [0] * (wire.MAX_DOC_ITEMS - 1)
    over = at_cap[:-1] + b",0]"
    assert "values (the grader takes up to 262,144)" in refused(over)
    empty = b',["x","float32",[0],0,0]'
    assert len(wire.decode(payload(b'["l"' + empty * wire.MAX_TENSORS + b"]"))) == 4096
    assert "4,097 tensors" in refused(b'["l"' + empty * (wire.MAX_TENSORS + 1) + b"]")


def test_separators_in_strings_are_text_and_outside_them_values():
    text = "::error::forged, [<![CDATA[ {{ 7 }}" * 30_000  # 10 separators each: 600,000 in all
    value = {"ok": False, "error": {"message": text, "code": text}}
    assert wire.decode(wire.encode(value)[8:]) == value
    lists = b",[]" * wire.MAX_DOC_ITEMS  # as many values again, after a string
    for string in (rb'"a,b"', rb'"\\"', rb'"\\\""', rb'"\u0022:"'):  # ends in escapes
        assert "values" in refused(b'["l",' + string + lists + b"]")
    inside = rb'["l","\"' + lists + b'"]'  # the same lists inside a string: text
    assert wire.decode(payload(inside)) == ['"' + lists.decode()]


def test_a_long_string_over_the_document_cap_is_refused_by_its_length():
    longer = b'["l","' + b"a" * wire.MAX_DOC_BYTES + b'"]'  # one_long_string() takes the cap
    assert f"a document of {len(longer):,} bytes" in refused(longer)


def test_a_document_is_ascii_as_encode_writes_it():
    text = "é\U0001f600\ud800"
    assert wire.decode(wire.encode(["é", text])[8:]) == ["é", text]  # escaped: ASCII
    assert "not ASCII" in refused(
        json.dumps(["l", text], ensure_ascii=False).encode("utf-8", "surrogatepass")
    )


def test_deep_nesting_is_refused_however_deep():
    nested: list = []
    inner = nested
    for _ in range(wire.MAX_DEPTH):
        inner.append([])
        inner = inner[0]
    assert wire.decode(wire.encode(nested)[8:]) == nested  # as deep as encode sends
    levels = wire.MAX_DEPTH + 2
    assert "malformed" in refused(b'["l",' * levels + b"1" + b"]" * levels)
    refused(b'["l",' * 100_000 + b"1" + b"]" * 100_000)  # json's own recursion guard
    assert "values" in refused(b"[" * 1_000_000)  # too many values to be parsed at all


def test_a_frame_over_the_cap_is_refused_from_its_header():
    r, w = os.pipe()
    try:
        os.write(w, struct.pack("!Q", wire.MAX_MESSAGE_BYTES + 1))
        with pytest.raises(wire.BadMessage, match="over the"):
            wire.recv(r, timeout=HANG_GUARD_S)  # refused before a payload byte is awaited
    finally:
        os.close(r)
        os.close(w)


# --- end to end: the forged replies of tests/hostile/ -------------------------------------------

SUBREAPER = textwrap.dedent(
    """
    import ctypes, json, os, resource, subprocess, sys
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
    while True:  # whatever the grade left: its peak counts too
        try:
            os.wait()
        except ChildProcessError:
            break
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(json.dumps({"code": run.returncode, "out": run.stdout, "err": run.stderr, "peak": peak}))
    """
)


@pytest.mark.skipif(not supported(), reason="the fork server needs Linux")
def test_forged_replies_score_their_exercise_and_bound_the_judge(tmp_path):
    hostile = ROOT / "tests" / "hostile"
    submission = make_submission(
        tmp_path / "sub",
        {"3.1": hostile / "forged_tensor_shape.py", "4.1": hostile / "forged_empty_lists.py"},
    )
    grade = [sys.executable, "-m", "grader.commands.cli", str(submission), "--format", "json"]
    run = subprocess.run(
        [sys.executable, "-c", SUBREAPER, *grade, "-e", "3.1", "-e", "4.1", "-e", "4.2"],
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard: the default limits are 20 s a call, 90 s an exercise
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["code"] == 1, report["err"]
    by_id = {e["id"]: e for e in json.loads(report["out"])["exercises"]}
    refusal = "the worker sent a reply the grader refuses: "
    for ex_id, why in (
        ("3.1", "a tensor of 100,000 dimensions"),
        ("4.1", "a document of 240,000,001 bytes"),
    ):
        first = by_id[ex_id]["checks"][0]["message"]  # the check it was lost at, capitalized
        assert by_id[ex_id]["status"] == "error", first
        assert (refusal + why).lower() in first.lower(), first
    assert by_id["4.2"]["status"] == "passed"
    # Every process of the grade (judge, fork server, workers) under 3.5 GiB; the judge read
    # the 240 MB frame and decoded none of it.
    assert report["peak"] < 3.5 * 1024 * MiB, report["peak"]
