"""The judge's side of the chapter 4 checks: what the reference models say, and how snippets
rebuild it.

- Parameter counts (4.1, 4.2) follow the reference classes' layer shapes in closed form (the
  tests hold them against the classes built on the ``meta`` device for random configs).
- ``ask_number`` calls a student's counting function (4.1, 4.2), which the worker runs on the
  ``meta`` device, and explains the errors that device causes.
- The split-dropout oracle (4.3) is the reference ``GPTModel`` built with ``drop_rate=0`` whose
  ``nn.Dropout`` modules then get each place's own rate, and whose LayerNorms get scales and
  shifts of their own (``own_norms``); ``load_weights`` loads its parameters (not its buffers)
  into the student's model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from grader.pack import judge as hints
from grader.pack.judge import (
    PART,
    Cause,
    CheckFailed,
    StudentError,
    Worker,
    constructors_explained,
    count_parts,
    explain_student_error,
    under_student_names,
)
from reference import GPT_CONFIG_124M, GPTModel

SPLIT_KEYS = ("drop_rate_emb", "drop_rate_shortcut", "drop_rate_attn")
# The book's GPTModel keeps its like blocks in a list: a count's parts sum them (trf_blocks.*).
BLOCKS = ("trf_blocks",)
IGNORES_CFG = "count:ignores-cfg"  # a count that is the book config's whatever the config

GPT2_SIZES = {
    "small": {"emb_dim": 768, "n_layers": 12, "n_heads": 12},
    "medium": {"emb_dim": 1024, "n_layers": 24, "n_heads": 16},
    "large": {"emb_dim": 1280, "n_layers": 36, "n_heads": 20},
    "xl": {"emb_dim": 1600, "n_layers": 48, "n_heads": 25},
}


def gpt2_config(size: str) -> dict:
    """``GPT_CONFIG_124M`` with the width, depth and head count of one GPT-2 size."""
    return {**GPT_CONFIG_124M, **GPT2_SIZES[size]}


# --- parameter counts -------------------------------------------------------------------------
# Counted from the reference classes' layer shapes, in closed form: building the modules, even on
# the meta device, cost a cold grade seconds (the causal mask's triu and every factory call go
# through torch's Python dispatch there). tests/test_checks_ch4.py holds these formulas against
# the reference classes themselves, built on meta, for random small and GPT-2-sized configs.


def trainable(module: nn.Module) -> int:
    """Number of trainable parameters of ``module`` (buffers are not parameters)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def feedforward_count(cfg: dict) -> int:
    """Trainable parameters of ``reference.TransformerBlock(cfg).ff``: Linear(emb, 4 emb) and
    Linear(4 emb, emb), both with a bias."""
    emb = cfg["emb_dim"]
    return (emb * 4 * emb + 4 * emb) + (4 * emb * emb + emb)


def attention_count(cfg: dict) -> int:
    """Trainable parameters of ``reference.TransformerBlock(cfg).att``: W_query, W_key, W_value
    (biased only with ``qkv_bias``) and out_proj (always biased); the mask is a buffer."""
    emb = cfg["emb_dim"]
    return 3 * (emb * emb + (emb if cfg["qkv_bias"] else 0)) + (emb * emb + emb)


def model_count(cfg: dict) -> int:
    """Parameters of ``reference.GPTModel(cfg)`` (its output head is not tied)."""
    emb, vocab = cfg["emb_dim"], cfg["vocab_size"]
    norms = 2 * emb  # LayerNorm's scale and shift
    block = attention_count(cfg) + feedforward_count(cfg) + 2 * norms
    embeddings = vocab * emb + cfg["context_length"] * emb
    return embeddings + cfg["n_layers"] * block + norms + emb * vocab


# --- asking the student ----------------------------------------------------------------------

META_NOTE = (
    "The grader calls your function inside `with torch.device('meta')`, so that even GPT-2 XL "
    "needs no memory; tensors created there have shapes but no values. Count with Python "
    "ints, e.g. sum(p.numel() for p in model.parameters())."
)


def ask_number(worker: Worker, function: str, cfg: dict) -> int | float:
    """The student's ``function(cfg)``, which must be a number."""
    try:
        with constructors_explained(worker, {}):  # a class of theirs with a misspelled __init__
            got = worker.call(function, cfg=cfg)
    except StudentError as exc:
        if "meta" not in str(exc.info.get("message", "")).lower():  # torch 2.2: "Meta tensors"
            raise
        raise CheckFailed(
            f"{explain_student_error(exc.info)}\n{META_NOTE}", hints.raised(exc.info), exc.info
        ) from None
    if isinstance(got, dict):
        raise CheckFailed(
            f"{function}(cfg) returned a {got.get('not_a_number')} ({got.get('repr')}), "
            "not a number",
            hints.returned(str(got.get("not_a_number"))),
        )
    return got


# A count off by one of these is a known mistake: (got - expected, what it means, the mistake's
# name in the kind of failure, ``grader.judge.hints``).
Mistake = tuple[int, str, str]


@dataclass(frozen=True)
class Recount:
    """What it takes to ask a student's counting function again with another config: the
    config it was asked with, the function (``ask``), the right count and the reference
    module's parts (``count_parts.parts``) for any config."""

    cfg: dict
    ask: Callable[[dict], Any]
    count: Callable[[dict], int]
    parts_of: Callable[[dict], dict[str, tuple[int, bool]]]


def valid_config(cfg: dict) -> bool:
    """A GPT config the reference classes build: ``emb_dim`` divisible by ``n_heads``."""
    return cfg["emb_dim"] % cfg["n_heads"] == 0


def other_value(cfg: dict, key: str) -> dict | None:
    """``cfg`` with the integer ``cfg[key]`` changed to the nearest other value (at least 2)
    that keeps the config valid; None when none near does."""
    value = cfg[key]
    for other in (value + 1, value + 2, value - 1, 2 * value, value + 3, value + 4):
        changed = {**cfg, key: other}
        if other >= 2 and valid_config(changed):
            return changed
    return None


def _count_again(recount: Recount, cfg: dict) -> tuple[Any, int] | None:
    """The student's count and the right one for ``cfg``; None when asking failed (a failure
    of this probe is the diagnosis's, never the verdict's)."""
    try:
        return recount.ask(cfg), recount.count(cfg)
    except Exception:  # noqa: BLE001 - the check's own failure stands, whatever this raises
        return None


def per_config(off: int, recount: Recount) -> tuple[count_parts.Scaled, str] | None:
    """A count off by ``off`` as one part counted a config value's number of times
    (``count_parts.scaled``), confirmed by asking again with that value changed: the same part
    counted the new number of times. ``(that explanation, what the second answer was)``;
    None when none is confirmed."""
    cfg = recount.cfg
    candidates = count_parts.scaled(off, recount.parts_of(cfg), cfg)
    for key in dict.fromkeys(c[0] for c in candidates):  # one question per config value
        other = other_value(cfg, key)
        again = _count_again(recount, other) if other is not None else None
        if other is None or again is None or type(again[0]) is not int:
            continue
        got, expected = again
        confirmed = {
            c[:3] for c in count_parts.scaled(got - expected, recount.parts_of(other), other)
        }
        for one in candidates:
            if one[0] == key and one[:3] in confirmed:
                return (
                    one,
                    f"with {key} = {other[key]} it returns {got:,}, where {expected:,} is right",
                )
    return None


_PER_CONFIG_HINTS = {
    "times": "there is one {name}, whatever cfg[{key!r}] is: count it once, not once per {key}",
    "share": "{name} holds the values of all cfg[{key!r}] of its pieces: count them all",
    "buffer": "{name} is a buffer, not a parameter: module.parameters() leaves it out",
}


def per_config_failure(message: str, off: int, recount: Recount) -> CheckFailed | None:
    """The failure of a count that is a part counted once per config value, confirmed by
    ``per_config``; None when it is not one."""
    found = per_config(off, recount)
    if found is None:
        return None
    (key, name, how, text), again = found
    said = f"{message} (off by {off:+,}: that is {text}, {recount.cfg[key]} being {key}; {again})"
    hint = _PER_CONFIG_HINTS[how].format(name=name, key=key) + "."
    kind = hints.count("per-config")
    return CheckFailed(said, kind, cause=Cause(f"{kind}:{key}:{name}:{how}", said, hint))


INEXACT_HINT = (
    "count with Python ints (sum(p.numel() for p in model.parameters()), or int * int): "
    "return an exact Python int, not a float, a float32 tensor's sum or a rounded number."
)


def inexact(got: int | float, expected: int) -> str | None:
    """Why ``got`` is ``expected`` counted inexactly, from the number alone: a float (a
    division, a float32 sum), off by a multiple of 2**32 (a 32-bit integer that overflowed),
    or off by less than a millionth (float32's rounding); None when it is none of these."""
    off = got - expected
    if isinstance(got, float):
        return f"your count is a float, {got!r}, not an exact Python int"
    if off % 2**32 == 0:
        return f"off by {off:+,}, a multiple of 2**32: a 32-bit integer overflowed"
    if abs(off) <= 1e-6 * abs(expected):
        return (
            f"off by {off:+,}, less than a millionth of it: float32 (or a float sum) rounded "
            "the count, where an exact Python int keeps every digit"
        )
    return None


def rounded(got: int | float, expected: int) -> str | None:
    """Whether ``got`` is ``expected`` rounded to a power of ten (at least 1,000) that
    ``expected`` is not a multiple of; asked only when no part of the model explains the
    difference (a count off by a part may end in zeros by chance)."""
    power = next((10**k for k in range(9, 2, -1) if got % 10**k == 0), 0) if got else 0
    if power and abs(got - expected) < power and expected % power:
        return f"your count is rounded to a multiple of {power:,}, not the exact count"
    return None


def wrong_count(
    message: str,
    got: Any,
    expected: int,
    mistakes: list[Mistake],
    found: Callable[[], dict[str, tuple[int, bool]]] | None = None,
    book: int | None = None,
    recount: Recount | None = None,
) -> CheckFailed:
    """The failure of a count ``got`` that should be ``expected``: ``message``, with the known
    mistake the count is off by, or else the part of the reference module (``found``: its
    parts, ``count_parts.parts``) that holds exactly the difference, and the kind of failure
    (which chooses the hint): a known mistake, ``count:inexact`` for a float, a rounding or
    32-bit overflow, else ``count``. A count equal to ``book`` (the count for the book's config,
    ``GPT_CONFIG_124M``) where the config asked for another is a function that ignores cfg.
    With ``recount``, a count that is a part counted once per config value (``per_config``:
    confirmed by asking again) says so, before any other part."""
    if not isinstance(got, int | float):
        return CheckFailed(message, hints.count())
    if book is not None and got == book != expected:
        said = f"{book:,} is the count for GPT_CONFIG_124M: the function does not follow cfg"
        # Said before the other counts' causes, yet no root of them (PART, not ROOT): each
        # counting function is an answer of its own, and a report hides what follows a root.
        cause = Cause(IGNORES_CFG, f"{message} ({said})", rank=PART)
        return CheckFailed(f"{message} ({said})", IGNORES_CFG, cause=cause)
    off = got - expected
    for offset, why, mistake in mistakes:
        if off == offset:  # one cause for every count off by the same known term
            said = f"{message} (off by {off:+,}: {why})"
            return CheckFailed(said, hints.count(mistake), cause=Cause(f"count:{mistake}", said))
    if (how := inexact(got, expected)) is not None:
        return inexact_failure(message, how)
    if recount is not None and (per := per_config_failure(message, off, recount)) is not None:
        return per
    said = count_parts.explain(off, found()) if found is not None else None
    if said is not None:
        text = f"{message} (off by {off:+,}: {said[0]})"
        return CheckFailed(text, said[1], cause=Cause(f"{said[1]}:{said[0]}", text))
    if (how := rounded(got, expected)) is not None:
        return inexact_failure(message, how)
    return CheckFailed(message, hints.count())


def inexact_failure(message: str, how: str) -> CheckFailed:
    """The failure of a count inexact as ``how`` says: a cause, with what to do."""
    said = f"{message} ({how})"
    cause = Cause(hints.count("inexact"), said, INEXACT_HINT, rank=PART)
    return CheckFailed(said, hints.count("inexact"), cause=cause)


# --- the split-dropout oracle -----------------------------------------------------------------


def split_config(cfg: dict, rates: dict) -> dict:
    """``cfg`` with ``drop_rate`` replaced by the three rates of exercise 4.3."""
    return {**{k: v for k, v in cfg.items() if k != "drop_rate"}, **rates}


def isolated_rates(key: str) -> dict:
    """The three 4.3 rates: ``key`` at 1.0 (its place is zeroed), the other two at 0.0."""
    return {k: 1.0 if k == key else 0.0 for k in SPLIT_KEYS}


def rateless_config(cfg: dict) -> dict:
    """A 4.3 config as the reference classes take it: one ``drop_rate``, at 0.0 (each place's
    own rate is set on its module afterwards)."""
    return {**{k: v for k, v in cfg.items() if not k.startswith("drop_rate")}, "drop_rate": 0.0}


def reference_with_rates(cfg: dict) -> GPTModel:
    """The reference model, each dropout at the rate ``cfg`` (a 4.3 config) gives its place,
    each LayerNorm with weights of its own (``own_norms``).

    Built exactly as ``REFERENCE_WITH_RATES_SOURCE`` builds it, so that snippets reproduce it.
    """
    return own_norms(set_rates(GPTModel(rateless_config(cfg)), cfg))


def own_norms(model: nn.Module) -> nn.Module:
    """``model`` with every LayerNorm's scale and shift drawn at random (from a generator of
    their own: the torch seed's later draws stay the same); returns ``model``.

    A fresh LayerNorm holds ones and zeros, so with fresh weights ``norm1``, ``norm2`` and
    ``final_norm`` are one and the same function, and a block that applies ``norm2`` where the
    book applies ``norm1`` would give the book's logits. Built exactly as ``OWN_NORMS_SOURCE``.
    """
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".scale"):
                p.copy_(torch.rand(p.shape, generator=g) + 0.5)
            elif name.endswith(".shift"):
                p.copy_(torch.rand(p.shape, generator=g) - 0.5)
    return model


def set_block_rates(block: nn.Module, rates: dict) -> nn.Module:
    """Give a reference ``TransformerBlock``'s shortcut and attention dropouts their rates."""
    block.drop_shortcut.p = rates["drop_rate_shortcut"]
    block.att.dropout.p = rates["drop_rate_attn"]
    return block


def set_rates(model: GPTModel, rates: dict) -> GPTModel:
    """Give each dropout of a reference model the rate of its place (``rates`` holds the
    three 4.3 keys); returns ``model``."""
    model.drop_emb.p = rates["drop_rate_emb"]
    for block in model.trf_blocks:
        set_block_rates(block, rates)
    return model


def built_module(reply: dict, call: str) -> dict:
    """The worker's reply to building the student's module with ``call``, if it made one."""
    if not reply["module"]["is_module"]:
        raise CheckFailed(f"{call} made a {reply['module']['class']}, not a torch.nn.Module")
    return reply


def load_weights(worker: Worker, reply: dict, oracle: nn.Module, owner: str) -> None:
    """Load ``oracle``'s parameters into the student's module built by ``reply``; fail when a
    parameter of the module is not among them. Buffers (the causal masks) are not weights: the
    module keeps its own, so that a mask it builds wrongly shows in its outputs. A module whose
    parameters differ from the oracle's in names only gets them under its own names
    (``grader.pack.judge.under_student_names``, ``book_names``): the keys check alone says that
    its names are not the book's."""
    weights = {k: v.detach() for k, v in oracle.named_parameters()}
    weights = under_student_names(weights, reply["module"])
    loaded = worker.call("load", handle=reply["handle"], weights=weights)
    buffers = set(reply["module"]["buffers"])
    missing = [k for k in loaded["missing"] if k not in buffers]
    if missing:
        raise CheckFailed(
            f"the reference {type(oracle).__name__}'s weights do not fit {owner}: it has no "
            + ", ".join(missing[:5])
            + (" ..." if len(missing) > 5 else "")
        )


OWN_NORMS_SOURCE = """\
def own_norms(model):
    # Every LayerNorm its own scale and shift (fresh ones hold 1 and 0: norm1, norm2 and
    # final_norm would be one and the same), from a generator of their own.
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".scale"):
                p.copy_(torch.rand(p.shape, generator=g) + 0.5)
            elif name.endswith(".shift"):
                p.copy_(torch.rand(p.shape, generator=g) - 0.5)
    return model
"""

REFERENCE_WITH_RATES_SOURCE = (
    OWN_NORMS_SOURCE
    + """

def reference_with_rates(cfg):
    # The book's GPTModel, each nn.Dropout set to the rate of its place.
    base = {k: v for k, v in cfg.items() if not k.startswith("drop_rate")}
    model = GPTModel({**base, "drop_rate": 0.0})
    model.drop_emb.p = cfg["drop_rate_emb"]
    for block in model.trf_blocks:
        block.drop_shortcut.p = cfg["drop_rate_shortcut"]
        block.att.dropout.p = cfg["drop_rate_attn"]
    return own_norms(model)
"""
)


# --- snippets ---------------------------------------------------------------------------------


def config_source(cfg: dict, indent: str = "") -> str:
    """A Python literal for ``cfg``: one line when short, one key per line otherwise."""
    one_line = repr(cfg)
    if len(one_line) + len(indent) <= 90:
        return one_line
    items = "".join(f"{indent}    {k!r}: {v!r},\n" for k, v in cfg.items())
    return "{\n" + items + indent + "}"
