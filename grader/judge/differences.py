"""Where two tensors differ, said so that a reader sees it.

A failed comparison shows the expected and the actual values. Printed whole, with four
decimals, two tensors can look the same: the difference lies at the fifth decimal, or in a
row that a long tensor's first values do not reach. Here the element with the largest
difference is found and named (``at [0, 3, 17]``); a small tensor is shown whole, a larger one
by the row that holds that element, or by a window of that row; and both are printed with as
many decimals as it takes for the two values at that element to differ (from four up to eight,
then in scientific notation). Tensors are written here, in torch's default layout, not by
torch's ``repr`` under raised print options: releases differ in that (torch 2.4 padded them),
and the text must be the same on every torch. ``pair_text`` writes the ``Expected:``/``Got:``
lines (or any other pair of labels, ``Before:``/``After:``), ``largest_text`` the element and
its two values, for a check's message.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

WHOLE = 64  # a tensor with at most this many values is printed whole (tensor_text)
ROW = 16  # in a pair: a tensor, or else a row, with at most this many values is shown whole
WINDOW = 8  # the values of a long row shown around the largest difference
DECIMALS, MAX_DECIMALS = 4, 8


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


LINEWIDTH = 80  # torch's default print width: the layout below is torch's default one
DEFAULT_DTYPES = (torch.float32, torch.int64, torch.bool, torch.complex64)  # not named


@dataclass(frozen=True)
class _Format:
    """How every element of one tensor is written: torch's default layout (the same width for
    all, integers of a float tensor as ``1.``), written here rather than by torch's ``repr``,
    whose choices differ between releases (torch 2.4 padded fixed-point numbers to the width
    of scientific notation under a raised precision)."""

    floating: bool
    decimals: int | None  # None: scientific notation with MAX_DECIMALS
    integral: bool  # a float tensor of whole numbers: ``1.``, ``-3.``
    width: int

    def __call__(self, value: float | int | bool | complex) -> str:
        if not self.floating or isinstance(value, complex):
            text = str(value)
        elif self.decimals is None:
            text = f"{value:.{MAX_DECIMALS}e}"
        elif self.integral:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{self.decimals}f}"
        return text.rjust(self.width)


def _format_for(values: list, floating: bool, decimals: int | None) -> _Format:
    """The format of a tensor's elements (``values``, flat): its width is that of the widest
    non-zero finite element; zeros, NaN and infinities are padded to it."""
    if not floating:
        return _Format(False, decimals, False, max([1, *(len(str(v)) for v in values)]))
    finite = [v for v in values if isinstance(v, float) and math.isfinite(v) and v != 0]
    if not finite:  # only zeros, NaN and infinities: ``0.``, ``nan``, ``inf``
        return _Format(True, DECIMALS, True, 1)
    integral = all(v == math.ceil(v) for v in finite)
    probe = _Format(True, decimals, integral, 0)
    return _Format(True, decimals, integral, max([1, *(len(probe(v)) for v in finite)]))


def _nested_text(values, indent: int, fmt: _Format, dims: int) -> str:
    """One dimension of a tensor's values as torch lays it out: a row wrapped at LINEWIDTH,
    rows of a matrix one per line, blocks of higher dimensions apart by blank lines."""
    if dims == 1:
        per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
        items = [fmt(v) for v in values]
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    parts = [_nested_text(v, indent + 1, fmt, dims - 1) for v in values]
    return "[" + ("," + "\n" * (dims - 1) + " " * (indent + 1)).join(parts) + "]"


def _flat(values) -> list:
    return [x for v in values for x in _flat(v)] if isinstance(values, list) else [values]


def _tensor_repr(t: torch.Tensor, decimals: int | None) -> str:
    """``tensor([[1.0000, 2.5000], ...])`` in torch's default layout, with ``decimals`` after
    the point (None: scientific notation), written from the tensor's Python numbers."""
    values = t.tolist()
    fmt = _format_for(_flat(values), t.dtype.is_floating_point, decimals)
    prefix = "tensor("
    if t.numel() == 0:
        body = "[]"
    elif t.dim() == 0:
        body = fmt(t.item())
    else:
        body = _nested_text(values, len(prefix), fmt, t.dim())
    suffixes = [f"size={tuple(t.shape)}"] if t.numel() == 0 and t.dim() != 1 else []
    if t.dtype not in DEFAULT_DTYPES or (t.numel() == 0 and t.dtype != torch.float32):
        suffixes.append(f"dtype={t.dtype}")
    text = prefix + body
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > LINEWIDTH:
            text += ",\n" + " " * len(prefix) + suffix
            last = len(prefix) + len(suffix)
        else:
            text += ", " + suffix
            last += len(suffix) + 2
    return text + ")"


def tensor_text(t: torch.Tensor, decimals: int | None = DECIMALS, max_items: int = WHOLE) -> str:
    """A tensor in full when small (``decimals`` after the point; None: scientific notation
    with eight), else its shape and its first values. Written by ``_tensor_repr``, never by
    torch's print options: the same text on every torch release."""
    if t.is_meta:
        return f"tensor of shape {tuple(t.shape)} with no values (on the meta device)"
    t = t.detach().cpu()
    if t.numel() <= max_items:
        return _tensor_repr(t, decimals)
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
    if values[0] == values[1]:  # a difference no notation shows: say the values
        exact = zip(values, (at.expected, at.got), strict=True)
        values = [f"{v} ({_number(x, None)} at {index_text(at.index)})" for v, x in exact]
    return _labelled(labels, (values[0], values[1]))
