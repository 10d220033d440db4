"""The judge<->worker codec: what a worker may send comes back exactly, and nothing else is
accepted (no pickles, no forged tensors, no objects)."""

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import threading

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.protocol import wire


def roundtrip(value):
    data = wire.encode(value)
    (size,) = struct.unpack("!Q", data[:8])
    assert size == len(data) - 8
    return wire.decode(data[8:])


def plain_values() -> st.SearchStrategy:
    scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
    tensors = st.builds(
        lambda shape, dtype: (
            torch.arange(int(torch.tensor(shape).prod()) if shape else 1).reshape(shape).to(dtype)
        ),
        st.lists(st.integers(0, 4), max_size=3),
        st.sampled_from([torch.float32, torch.float64, torch.int64, torch.bool, torch.bfloat16]),
    )
    return st.recursive(
        scalars | tensors,
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.tuples(inner, inner)
            | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4)
        ),
        max_leaves=20,
    )


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return (
            type(b) is torch.Tensor
            and a.dtype == b.dtype
            and a.shape == b.shape
            and torch.equal(a, b)
        )
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    if type(a) is not type(b):
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=200, deadline=None)
@given(plain_values())
def test_plain_data_and_tensors_come_back_exactly(value):
    assert same(value, roundtrip(value))


def test_state_dicts_views_and_parameters_arrive_as_plain_tensors():
    lin = torch.nn.Linear(3, 2)
    state = roundtrip(lin.state_dict())
    assert type(state) is dict and list(state) == ["weight", "bias"]
    assert torch.equal(state["weight"], lin.weight.detach())
    t = torch.arange(12.0).reshape(3, 4).t()[1:]  # not contiguous, with an offset
    assert torch.equal(roundtrip(t), t)
    p = roundtrip(torch.nn.Parameter(torch.ones(2)))
    assert type(p) is torch.Tensor and not p.requires_grad


def test_views_numpy_cannot_show_arrive_as_their_values():
    z = torch.tensor([1 + 2j, 3 - 4j])
    weight = torch.nn.Linear(3, 2).weight  # requires grad
    for t in (
        z.conj(),  # the conjugate bit
        z.conj().imag,  # the negative bit
        torch.ones(1, 3).expand(4, 3),  # stride 0
        torch.arange(4.0).to(torch.bfloat16),  # no numpy dtype
        weight,
    ):
        got = roundtrip(t)
        assert type(got) is torch.Tensor and got.dtype == t.dtype and got.shape == t.shape
        assert torch.equal(got, t.detach().resolve_conj().resolve_neg())


def test_a_tensor_message_is_laid_out_as_documented():
    a, b = torch.tensor([1.5, -2.0]), torch.tensor([[7]])
    # Each tensor's bytes start on an ALIGN boundary after the document, zeros in between.
    doc = ["l", ["x", "float32", [2], 0, 8], ["x", "int64", [1, 1], wire.ALIGN, 8]]
    blob = a.numpy().tobytes() + bytes(wire.ALIGN - 8) + b.numpy().tobytes()
    expected = payload(json.dumps(doc, separators=(",", ":")).encode(), blob)
    assert wire.encode([a, b]) == struct.pack("!Q", len(expected)) + expected


def test_tensor_subclasses_and_objects_are_not_sent():
    class Liar(torch.Tensor):
        pass

    with pytest.raises(wire.NotEncodable, match="Liar"):
        wire.encode({"value": torch.ones(2).as_subclass(Liar)})
    with pytest.raises(wire.NotEncodable, match="set"):
        wire.encode({1, 2})
    with pytest.raises(wire.NotEncodable, match="meta"):
        wire.encode(torch.ones(2, device="meta"))


def payload(doc, blob: bytes = b"") -> bytes:
    raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    head = struct.pack("!I", len(raw)) + raw
    head += bytes(-len(head) % wire.ALIGN)
    return head + blob


@pytest.mark.parametrize(
    "doc, blob",
    [
        (["x", "float32", [2], 0, 8], b"\0" * 4),  # fewer bytes than the shape needs
        (["x", "float32", [3], 0, 8], b"\0" * 16),  # shape and size disagree
        (["x", "object", [1], 0, 8], b"\0" * 8),  # not a dtype
        (["x", "float32", [-1], 0, 4], b"\0" * 8),  # negative size
        (["x", "float32", [1], 3, 4], b"\0" * 8),  # unaligned offset
        (["q", 1], b""),  # unknown tag
        ({"ok": True}, b""),  # an untagged object
        (["d", "key"], b""),  # a key with no value
        (["d", ["l"], 1], b""),  # an unhashable key
        (["f", "1e999"], b""),  # only nan and the infinities are spelled out
    ],
)
def test_malformed_messages_are_refused(doc, blob):
    with pytest.raises(wire.BadMessage):
        wire.decode(payload(doc, blob))


def test_a_pickle_is_refused_and_never_run(tmp_path):
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    buf = io.BytesIO()
    torch.save({"ok": True, "value": 1}, buf)
    for data in (pickle.dumps(Payload()), buf.getvalue(), b"\xff" * 64):
        with pytest.raises(wire.BadMessage):
            wire.decode(data)
    assert not marker.exists()


def test_a_deeply_nested_message_is_refused_not_a_crash():
    doc = b'["l",' * 100_000 + b"1" + b"]" * 100_000
    with pytest.raises(wire.BadMessage):
        wire.decode(payload(doc))


def test_bool_tensors_hold_only_true_and_false():
    t = wire.decode(payload(["x", "bool", [3], 0, 3], bytes([0, 1, 7])))
    assert t.tolist() == [False, True, True]


def test_recv_reads_a_message_sent_in_pieces():
    r, w = os.pipe()
    value = {"big": torch.randn(300, 300), "n": 3}
    data = wire.encode(value)

    def write() -> None:  # a thread, not a forked child: this process runs other threads
        for i in range(0, len(data), 70_000):
            os.write(w, data[i : i + 70_000])
        os.close(w)

    writer = threading.Thread(target=write)
    writer.start()
    got = wire.recv(r, timeout=30)
    writer.join()
    os.close(r)
    assert same(value, got)


def test_ints_travel_up_to_40_digits_and_larger_ones_are_refused_both_ways():
    largest = 10**wire.MAX_INT_DIGITS - 1
    assert roundtrip([largest, -largest]) == [largest, -largest]
    for n in (10**wire.MAX_INT_DIGITS, -(10**400), 10**5000):
        with pytest.raises(wire.NotEncodable, match="cannot be checked"):
            wire.encode({"total": n})
    assert "an int with 401 digits" in wire.int_too_large(10**400)
    assert "about 5,000 digits" in wire.int_too_large(10**5000)  # too long to write out
    with pytest.raises(wire.BadMessage, match="digits"):  # a worker's own encoder: refused
        wire.decode(payload(["l", 10**400]))


def test_a_reply_over_the_cap_is_refused_before_it_is_sent(monkeypatch):
    """An honest answer too big to send (a whole model for one layer) is said in the worker,
    where ``serve.reply`` turns it into the student's failure, never a frame the judge refuses
    as an error of the wire."""
    monkeypatch.setattr(wire, "MAX_MESSAGE_BYTES", 4096)
    assert wire.decode(wire.encode({"w": torch.zeros(100)})[8:])["w"].shape == (100,)
    with pytest.raises(wire.NotEncodable, match=r"over the 4,096 one reply may carry"):
        wire.encode({"w": torch.zeros(2000)})
