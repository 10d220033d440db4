"""A wrong parameter count broken down by the reference module's parts, for any pack.

When a count is off by no mistake a pack's checks know by name, the difference may still be
exactly what one part of the module holds: a parameter counted twice or left out, or a buffer
counted as a parameter ("the extra 1,048,576 are att.mask, a buffer, not a parameter"), or a
part counted a config value's number of times (``scaled``). The parts come from the reference
module built on the ``meta`` device (no memory); the items of a list of like modules (a
model's blocks, named in ``repeated``) are summed as one part, ``blocks.*``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import torch
from torch import nn

# A count explained as one part: (what the message says, the kind of failure: which hint fits).
Explained = tuple[str, str]

MAX_LEAVES = 40  # pairs of parameters are tried only among this many


def parts(
    make: Callable[[], nn.Module], prefix: str = "", repeated: tuple[str, ...] = ()
) -> dict[str, tuple[int, bool]]:
    """The parts of the reference module ``make`` builds (on the meta device: no memory):
    every parameter and every module that holds some, and every buffer, by name after
    ``prefix`` (the items of each list of modules named in ``repeated`` summed: ``blocks.*``),
    with its number of values and whether it is a buffer; with a ``prefix``, the module itself
    too, last."""
    items = re.compile(rf"^({'|'.join(map(re.escape, repeated))})\.\d+\.") if repeated else None

    def general(name: str) -> str:
        return items.sub(r"\1.*.", name) if items is not None else name

    with torch.device("meta"):
        build = make()
    found: dict[str, tuple[int, bool]] = {}

    def add(name: str, n: int, buffer: bool) -> None:
        name = prefix + name
        found[name] = (found.get(name, (0, buffer))[0] + n, buffer)

    for name, p in build.named_parameters():
        key = general(name)
        add(key, p.numel(), False)
        pieces = key.split(".")
        for i in range(len(pieces) - 1):  # the modules that hold it
            add(".".join(pieces[: i + 1]) + " (all of it)", p.numel(), False)
    for name, b in build.named_buffers():
        add(general(name), b.numel(), True)
    if prefix:  # the module itself, a part of the module it is named from
        found[prefix.rstrip(".") + " (all of it)"] = (
            sum(p.numel() for p in build.parameters()),
            False,
        )
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


# --- a part counted a config value's number of times ------------------------------------------


def _whole(name: str) -> str:
    return name.removesuffix(" (all of it)")


# A part counted a config value's number of times: (the config key, the part's name, how it was
# counted: "times", "share" or "buffer", the words for it).
Scaled = tuple[str, str, str, str]


def scaled(off: int, found: dict[str, tuple[int, bool]], cfg: dict) -> list[Scaled]:
    """Every way ``off`` is one part of ``found`` counted a config value's number of times:
    a parameter counted ``m`` times instead of once (``off = (m - 1) * n``), a buffer counted
    ``m`` times (``off = m * n``), or one ``m``-th of a part counted (``off = n / m - n``: one
    head's or one block's share), where ``m`` is an integer of ``cfg`` (``n_layers``,
    ``n_heads``, ...). A part of a list of like modules (``blocks.*``) holds all its items'
    values. Outer modules come before the parts they hold. Which key it is, when several fit,
    is for the caller to find out (asking again with that value changed, say)."""
    keys = [(k, v) for k, v in cfg.items() if type(v) is int and v >= 2]
    said: list[Scaled] = []
    for name, (n, buffer) in sorted(found.items(), key=lambda item: item[0].count(".")):
        whole = _whole(name)
        for key, m in keys:
            if buffer and off == m * n:
                said.append(
                    (key, whole, "buffer", f"{whole}, a buffer of {n:,} values, counted {m} times")
                )
            elif not buffer and off == (m - 1) * n:
                said.append((key, whole, "times", f"{whole} ({n:,} values) counted {m} times"))
            elif not buffer and n % m == 0 and off == n // m - n:
                said.append((key, whole, "share", f"1/{m} of {whole} ({n:,} values) counted"))
    return list(dict.fromkeys(said))
