"""A wrong parameter count broken down by the reference module's parts (4.1, 4.2).

When a count is off by no mistake the checks know by name, the difference may still be exactly
what one part of the module holds: a parameter counted twice or left out, or a buffer counted as
a parameter ("the extra 1,048,576 are att.mask, a buffer, not a parameter"). The parts come from
the reference module built on the ``meta`` device (no memory), a GPTModel's blocks summed over
``trf_blocks.*``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import torch
from torch import nn

# A count explained as one part: (what the message says, the kind of failure: which hint fits).
Explained = tuple[str, str]

_BLOCK = re.compile(r"^trf_blocks\.\d+\.")
MAX_LEAVES = 40  # pairs of parameters are tried only among this many


def parts(make: Callable[[], nn.Module], prefix: str = "") -> dict[str, tuple[int, bool]]:
    """The parts of the reference module ``make`` builds (on the meta device: no memory):
    every parameter and every module that holds some, and every buffer, by name after
    ``prefix`` (a GPTModel's blocks as ``trf_blocks.*``), with its number of values and whether
    it is a buffer."""
    with torch.device("meta"):
        build = make()
    found: dict[str, tuple[int, bool]] = {}

    def add(name: str, n: int, buffer: bool) -> None:
        name = prefix + name
        found[name] = (found.get(name, (0, buffer))[0] + n, buffer)

    for name, p in build.named_parameters():
        key = _BLOCK.sub("trf_blocks.*.", name)
        add(key, p.numel(), False)
        pieces = key.split(".")
        for i in range(len(pieces) - 1):  # the modules that hold it
            add(".".join(pieces[: i + 1]) + " (all of it)", p.numel(), False)
    for name, b in build.named_buffers():
        add(_BLOCK.sub("trf_blocks.*.", name), b.numel(), True)
    return found


def explain(off: int, found: dict[str, tuple[int, bool]]) -> Explained | None:
    """Why a count is off by ``off`` (the student's minus the reference's), as one part or two
    parameters of ``found`` that hold exactly that many values; None when none does."""
    if off == 0:
        return None
    size = abs(off)
    if off > 0:
        for name, (n, buffer) in found.items():
            if buffer and n == size:
                return f"the extra {size:,} are {name}, a buffer, not a parameter", "count:mask"
    for name, (n, buffer) in found.items():
        if not buffer and n == size:
            name = name.removesuffix(" (all of it)")
            if off > 0:
                return f"that is {name} ({size:,} values) counted twice", "count:twice"
            return f"that is what {name} holds ({size:,} values): it is left out", "count:left-out"
    leaves = [(k, n) for k, (n, b) in found.items() if not b and "(" not in k][:MAX_LEAVES]
    for (a, na), (b, nb) in itertools.combinations(leaves, 2):
        if na + nb == size:
            if off > 0:
                return f"that is {a} and {b} counted twice ({size:,} values)", "count:twice"
            return f"that is what {a} and {b} hold ({size:,} values): left out", "count:left-out"
    return None
