"""Differences where they are (issue 41): a failed comparison shows the element of largest
difference, says where it is, and prints the two tensors (or the row that holds it) with
enough decimals that they differ; never an identical Expected/Got (or Before/After) pair."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.judge.differences import largest_text, pair_text, tensor_text
from grader.judge.properties import Check, CheckFailed, assert_close, run_check
from grader.result.common import parse_message


def failure(got: torch.Tensor, expected: torch.Tensor) -> str:
    with pytest.raises(CheckFailed) as caught:
        assert_close(got, expected, "your output")
    return str(caught.value)


def test_values_that_differ_at_the_fifth_decimal_print_differently():
    expected = torch.tensor([[0.07712, -0.16646]])
    got = torch.tensor([[0.07712, -0.16654]])
    said = parse_message(failure(got, expected))
    assert said.expected != said.got  # before: both "tensor([[ 0.0771, -0.1665]])"
    assert "-0.16646" in said.expected and "-0.16654" in said.got
    assert "at [0, 1]: expected -0.16646, got -0.16654" in said.text


def test_a_difference_in_another_row_of_a_long_tensor_is_shown_where_it_is():
    expected = torch.linspace(-1, 1, 2 * 5 * 300).reshape(2, 5, 300)
    got = expected.clone()
    got[1, 4, 250] += 0.5
    said = parse_message(failure(got, expected))
    assert "at [1, 4, 250]" in said.text
    assert said.expected != said.got  # before: the same eight first values, "starting [...]"
    for line in (said.expected, said.got):
        assert line.startswith("[1, 4, 246:254] of shape (2, 5, 300): tensor(["), line
    assert f"{expected[1, 4, 250].item():.4f}" in said.expected
    assert f"{got[1, 4, 250].item():.4f}" in said.got


def test_a_small_tensor_is_shown_whole_and_a_bigger_one_by_its_row():
    small = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    said = parse_message(failure(small + torch.tensor([[0, 0], [0, 1.0]]), small))
    assert said.expected == "tensor([[1., 2.],\n        [3., 4.]])"
    assert said.got == "tensor([[1., 2.],\n        [3., 5.]])"
    tokens = torch.arange(3 * 7 * 6, dtype=torch.float32).reshape(3, 7, 6) / 10
    changed = tokens.clone()
    changed[2, 5, 1] += 0.01
    said = parse_message(failure(changed, tokens))
    assert said.expected.startswith("[2, 5] of shape (3, 7, 6): tensor([")
    assert "\n" not in said.expected and said.expected != said.got


def test_before_and_after_say_the_same_for_any_pair_of_labels():
    before = torch.zeros(2, 4)
    after = before.clone()
    after[1, 3] = 2e-6  # a causality check's tight tolerance: far below four decimals
    text = pair_text(before, after, ("Before", "After"))
    assert text.startswith("Before: tensor([[")
    first, second = text[len("Before: ") :].split("\nAfter:  ")
    assert first != second and "0.000002" in second
    assert largest_text(before, after) == (
        "largest difference 2e-06 at [1, 3]: expected 0.000000, got 0.000002"
    )


def test_a_nan_is_named_where_it_is():
    expected = torch.ones(3, 30)
    got = expected.clone()
    got[2, 17] = float("nan")
    said = parse_message(failure(got, expected))
    assert "a NaN or inf at [2, 17]: expected 1.0000, got nan" in said.text
    assert "nan" in said.got and "nan" not in said.expected


def test_a_difference_no_fixed_notation_shows_is_still_two_different_lines():
    expected = torch.tensor([1.0, 2.0], dtype=torch.float64)
    got = expected + 1e-12
    expected_line, got_line = pair_text(expected, got).splitlines()
    assert expected_line[len("Expected: ") :] != got_line[len("Got:      ") :]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    shape=st.lists(st.integers(1, 9), min_size=1, max_size=4),
    where=st.floats(0, 0.999),
    size=st.sampled_from([2e-5, 1e-4, 3e-4, 1e-3, 0.1, 10.0]),
    scale=st.sampled_from([1e-3, 1.0, 1e3]),
    seed=st.integers(0, 1000),
)
def test_never_an_identical_pair(shape, where, size, scale, seed):
    expected = torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * scale
    got = expected.clone()
    flat = got.view(-1)
    flat[int(where * flat.numel())] += size * max(1.0, scale)
    if torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
        return
    said = parse_message(failure(got, expected))
    assert said.expected and said.expected != said.got, said


def test_a_checks_report_shows_the_pair_apart():
    """Through the harness: the CheckResult's message, read apart as every renderer reads it."""

    def run(worker, n):
        x = torch.full((1, 3, 4), 0.5)
        y = x.clone()
        y[0, 2, 3] += 1.2e-4
        assert_close(y, x, "the context vectors")

    check = Check("compares", 1, st.just(0), run, hint="")
    result = run_check(dataclasses.replace(check), None, "x", 0, 1)
    said = parse_message(result.message)
    assert not result.passed and said.expected != said.got
    assert "at [0, 2, 3]" in said.text


def test_a_small_tensor_is_written_by_the_grader_the_same_on_every_torch():
    """The grader writes small tensors itself: torch 2.4 padded fixed-point numbers to the width
    of scientific notation under a raised precision (``tensor([    -0.0906, ...``, the corpus's
    wrong_copy_without_masking on the Python 3.10 corner), and torch's print options, one
    global setting, never reach the text."""
    t = torch.tensor([-0.0906, 0.2576, 0.00003, -0.0556])
    expected = "tensor([-0.0906,  0.2576,  0.0000, -0.0556])"
    assert tensor_text(t) == expected
    assert tensor_text(t, 6) == "tensor([-0.090600,  0.257600,  0.000030, -0.055600])"
    assert tensor_text(t[:2], None) == "tensor([-9.05999988e-02,  2.57600009e-01])"
    torch.set_printoptions(precision=2, linewidth=30, sci_mode=True)
    try:
        assert tensor_text(t) == expected
    finally:
        torch.set_printoptions(profile="default")
    long_row = tensor_text(torch.arange(16.0) / 3)
    assert long_row == (
        "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
        "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000])"
    )


@pytest.mark.parametrize(
    "t",
    [
        torch.tensor(0.5),
        torch.tensor([[1.0, -2.0], [3.0, 40.0]]),
        torch.tensor([[[0.25, -1.5], [2.0, 0.0]], [[float("nan"), float("inf")], [1.0, -0.125]]]),
        torch.tensor([1.5, 2.25], dtype=torch.float64),
        torch.tensor([[3, -12], [7, 0]]),
        torch.tensor([True, False]),
        torch.zeros(2, 3),
        torch.zeros(0, 3),
        torch.linspace(-3, 3, 40).reshape(2, 20),
    ],
    ids=lambda t: f"{t.dtype}-{tuple(t.shape)}",
)
def test_the_layout_is_torchs_default_one(t):
    """Where torch's default print options choose fixed-point (no value under 1e-4), the
    text is what this torch's repr prints: the layout students know."""
    assert tensor_text(t) == repr(t)
