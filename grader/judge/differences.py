"""Where two tensors differ, said so that a reader sees it.

A failed comparison shows the expected and the actual values. Printed whole, with four
decimals, two tensors can look the same: the difference lies at the fifth decimal, or in a
row that a long tensor's first values do not reach. Here the element with the largest
difference is found and named (``at [0, 3, 17]``); a small tensor is shown whole, a larger one
by the row that holds that element, or by a window of that row; and both are printed with as
many decimals as it takes for the two values at that element to differ (from four up to eight,
then in scientific notation). ``pair_text`` writes the ``Expected:``/``Got:`` lines (or any other
pair of labels, ``Before:``/``After:``), ``largest_text`` the element and its two values, for a
check's message.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import torch

WHOLE = 64  # a tensor with at most this many values is printed whole (tensor_text)
ROW = 16  # in a pair: a tensor, or else a row, with at most this many values is shown whole
WINDOW = 8  # the values of a long row shown around the largest difference
DECIMALS, MAX_DECIMALS = 4, 8

# torch's print options are one global setting: a comparison's text is written under a lock.
_PRINTING = threading.Lock()


@dataclass(frozen=True)
class Largest:
    """The element where two tensors of one shape differ most, and by how much."""

    index: tuple[int, ...]
    expected: float | complex
    got: float | complex
    size: float  # the absolute difference; inf where one of the two is NaN


def _as_number(t: torch.Tensor) -> torch.Tensor:
    t = t.detach().cpu()
    return t.to(torch.complex128) if t.is_complex() else t.to(torch.float64)


def largest(expected: torch.Tensor, got: torch.Tensor) -> Largest | None:
    """The element of largest difference between two tensors of one shape; None when they
    have other shapes or are equal (NaN equal to NaN, infinities of one sign equal)."""
    if tuple(expected.shape) != tuple(got.shape) or expected.numel() == 0:
        return None
    if expected.is_meta or got.is_meta:  # shapes without values
        return None
    e, g = _as_number(expected), _as_number(got)
    same = (e == g) | (e.isnan() & g.isnan())
    diff = torch.nan_to_num((e - g).abs(), nan=float("inf"), posinf=float("inf"))
    diff = torch.where(same, torch.zeros_like(diff), diff)
    flat = int(diff.flatten().argmax())
    if not diff.flatten()[flat] > 0:
        return None
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), e.shape))
    return Largest(index, e[index].item(), g[index].item(), float(diff[index]))


def index_text(index: tuple[int | str, ...]) -> str:
    """``[0, 3, 17]``."""
    return "[" + ", ".join(str(i) for i in index) + "]"


def _number(value: float | complex, decimals: int | None) -> str:
    return repr(value) if decimals is None else f"{value:.{decimals}f}"


def decimals_for(at: Largest | None) -> int | None:
    """The fewest decimals, from four up to eight, at which the two values of ``at`` print
    differently; None when even eight do not tell them apart (then they are shown in
    scientific notation)."""
    if at is None:
        return DECIMALS
    for decimals in range(DECIMALS, MAX_DECIMALS + 1):
        if _number(at.expected, decimals) != _number(at.got, decimals):
            return decimals
    return None


def largest_text(expected: torch.Tensor, got: torch.Tensor) -> str:
    """``largest difference 0.2216 at [0, 1]: expected -0.1665, got 0.0016`` (no index for a
    tensor of one value; ``a NaN or inf at ...`` where one of the two is not a number and the
    other is); ``""`` when the two are equal or of other shapes."""
    at = largest(expected, got)
    if at is None:
        return ""
    decimals = decimals_for(at)
    size = f"largest difference {at.size:.4g}" if math.isfinite(at.size) else "a NaN or inf"
    where = f" at {index_text(at.index)}" if expected.numel() > 1 else ""
    expected_value, got_value = _number(at.expected, decimals), _number(at.got, decimals)
    return f"{size}{where}: expected {expected_value}, got {got_value}"


def part_shown(shape: tuple[int, ...], index: tuple[int, ...]) -> tuple[tuple, str]:
    """The part of a tensor of ``shape`` shown around ``index``: ``(key, where)``, the key to
    index it with and how it is said: the whole tensor (``()``, ``""``) when it has at most
    ``ROW`` values, else the row that holds ``index`` (``[0, 3]``) when that row has at most
    ``ROW`` values, else a window of it (``[0, 3, 14:22]``)."""
    numel = 1
    for n in shape:
        numel *= n
    if numel <= ROW or not shape:
        return (), ""
    *lead, column = index
    length = shape[-1]
    if length <= ROW:
        return tuple(lead), index_text(tuple(lead))
    start = min(max(column - WINDOW // 2, 0), length - WINDOW)
    return (*lead, slice(start, start + WINDOW)), index_text((*lead, f"{start}:{start + WINDOW}"))


def tensor_text(t: torch.Tensor, decimals: int | None = DECIMALS, max_items: int = WHOLE) -> str:
    """A tensor in full when small (``decimals`` after the point; None: scientific notation
    with eight), else its shape and its first values."""
    if t.is_meta:
        return f"tensor of shape {tuple(t.shape)} with no values (on the meta device)"
    t = t.detach().cpu()
    if t.numel() <= max_items:
        with _PRINTING:
            if decimals is None:
                torch.set_printoptions(precision=MAX_DECIMALS, sci_mode=True)
            else:
                torch.set_printoptions(precision=decimals, sci_mode=False)
            try:
                return repr(t)
            finally:
                torch.set_printoptions(profile="default")
    flat = t.flatten()[:8].tolist()
    head = ", ".join(_number(v, decimals or DECIMALS) for v in flat)
    return f"tensor of shape {tuple(t.shape)} starting [{head}, ...]"


def _labelled(labels: tuple[str, str], values: tuple[str, str]) -> str:
    width = max(len(label) for label in labels) + 2
    lines = zip(labels, values, strict=True)
    return "\n".join(f"{(label + ':').ljust(width)}{value}" for label, value in lines)


def pair_text(
    expected: torch.Tensor, got: torch.Tensor, labels: tuple[str, str] = ("Expected", "Got")
) -> str:
    """Two lines, ``Expected: ...`` and ``Got:      ...`` (or ``labels``, e.g. ``("Before",
    "After")``): both tensors whole when small, else the row (or a window of the row) with the
    largest difference, said where (``[0, 3, 14:22] of shape (2, 5, 50257): tensor([...])``),
    with enough decimals that the two differ where they differ most (``part_shown``,
    ``decimals_for``)."""
    at = largest(expected, got)
    if at is None:
        return _labelled(labels, (tensor_text(expected), tensor_text(got)))
    decimals = decimals_for(at)
    key, where = part_shown(tuple(expected.shape), at.index)
    values = []
    for t in (expected, got):
        text = tensor_text(t[key] if key else t, decimals, max_items=WHOLE)
        values.append(f"{where} of shape {tuple(t.shape)}: {text}" if where else text)
    if values[0] == values[1]:  # a difference no notation of torch's shows: say the values
        exact = zip(values, (at.expected, at.got), strict=True)
        values = [f"{v} ({_number(x, None)} at {index_text(at.index)})" for v, x in exact]
    return _labelled(labels, (values[0], values[1]))
