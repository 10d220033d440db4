"""The judge's side of the chapter 4 checks: what the reference models say, and how snippets
rebuild it.

- Parameter counts (4.1, 4.2) come from the reference classes themselves, never from a formula:
  a module is built on the CPU when it is small and on PyTorch's ``meta`` device (shapes only,
  no memory) when it is not, and each config is counted once per process. The first ``meta``
  build in a process costs about a second (PyTorch then imports its symbolic-shape machinery);
  small configs, which most examples are, never pay it.
- ``ask_number`` calls a student's counting function (4.1, 4.2), which the worker runs on the
  ``meta`` device, and explains the errors that device causes.
- The split-dropout oracle (4.3) is the reference ``GPTModel`` built with ``drop_rate=0`` whose
  ``nn.Dropout`` modules then get each place's own rate.
"""

from __future__ import annotations

from functools import lru_cache

import torch
from torch import nn

from grader.launcher import StudentError, WorkerHandle
from grader.properties import CheckFailed, explain_student_error
from reference import GPT_CONFIG_124M, GPTModel, TransformerBlock

# Modules holding more values than this (parameters and causal masks) are built on "meta".
CPU_LIMIT = 2_000_000

SPLIT_KEYS = ("drop_rate_emb", "drop_rate_shortcut", "drop_rate_attn")

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


def trainable(module: nn.Module) -> int:
    """Number of trainable parameters of ``module`` (buffers are not parameters)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def _key(cfg: dict) -> tuple:
    return tuple(sorted(cfg.items()))


def _device(cfg: dict, n_layers: int, with_embeddings: bool) -> str:
    emb, ctx = cfg["emb_dim"], cfg["context_length"]
    values = n_layers * (13 * emb * emb + ctx * ctx)
    if with_embeddings:
        values += (2 * cfg["vocab_size"] + ctx) * emb
    return "cpu" if values <= CPU_LIMIT else "meta"


@lru_cache(maxsize=512)
def _block_counts(key: tuple) -> tuple[int, int]:
    cfg = dict(key)
    with torch.device(_device(cfg, 1, with_embeddings=False)):
        block = TransformerBlock(cfg)
    return trainable(block.ff), trainable(block.att)


@lru_cache(maxsize=512)
def _model_count(key: tuple) -> int:
    cfg = dict(key)
    with torch.device(_device(cfg, cfg["n_layers"], with_embeddings=True)):
        return trainable(GPTModel(cfg))


def feedforward_count(cfg: dict) -> int:
    """Trainable parameters of ``reference.TransformerBlock(cfg).ff``."""
    return _block_counts(_key(cfg))[0]


def attention_count(cfg: dict) -> int:
    """Trainable parameters of ``reference.TransformerBlock(cfg).att``."""
    return _block_counts(_key(cfg))[1]


def model_count(cfg: dict) -> int:
    """Parameters of ``reference.GPTModel(cfg)`` (its output head is not tied)."""
    return _model_count(_key(cfg))


# --- asking the student ----------------------------------------------------------------------

META_NOTE = (
    "The grader calls your function inside `with torch.device('meta')`, so that even GPT-2 XL "
    "needs no memory; tensors created there have shapes but no values. Count with Python "
    "ints, e.g. sum(p.numel() for p in model.parameters())."
)


def ask_number(worker: WorkerHandle, function: str, cfg: dict) -> int | float:
    """The student's ``function(cfg)``, which must be a number."""
    try:
        got = worker.call(function, cfg=cfg)
    except StudentError as exc:
        if "meta" not in str(exc.info.get("message", "")):
            raise
        raise CheckFailed(f"{explain_student_error(exc.info)}\n{META_NOTE}") from None
    if isinstance(got, dict):
        raise CheckFailed(
            f"{function}(cfg) returned a {got.get('not_a_number')} ({got.get('repr')}), "
            "not a number"
        )
    return got


# --- the split-dropout oracle -----------------------------------------------------------------


def split_config(cfg: dict, rates: dict) -> dict:
    """``cfg`` with ``drop_rate`` replaced by the three rates of exercise 4.3."""
    return {**{k: v for k, v in cfg.items() if k != "drop_rate"}, **rates}


def reference_with_rates(cfg: dict) -> GPTModel:
    """The reference model, each dropout at the rate ``cfg`` (a 4.3 config) gives its place.

    Built exactly as ``REFERENCE_WITH_RATES_SOURCE`` builds it, so that snippets reproduce it.
    """
    base = {k: v for k, v in cfg.items() if not k.startswith("drop_rate")}
    return set_rates(GPTModel({**base, "drop_rate": 0.0}), cfg)


def set_rates(model: GPTModel, rates: dict) -> GPTModel:
    """Give each dropout of a reference model the rate of its place (``rates`` holds the
    three 4.3 keys); returns ``model``."""
    model.drop_emb.p = rates["drop_rate_emb"]
    for block in model.trf_blocks:
        block.drop_shortcut.p = rates["drop_rate_shortcut"]
        block.att.dropout.p = rates["drop_rate_attn"]
    return model


REFERENCE_WITH_RATES_SOURCE = """\
def reference_with_rates(cfg):
    # The book's GPTModel, each nn.Dropout set to the rate of its place.
    base = {k: v for k, v in cfg.items() if not k.startswith("drop_rate")}
    model = GPTModel({**base, "drop_rate": 0.0})
    model.drop_emb.p = cfg["drop_rate_emb"]
    for block in model.trf_blocks:
        block.drop_shortcut.p = cfg["drop_rate_shortcut"]
        block.att.dropout.p = cfg["drop_rate_attn"]
    return model
"""


# --- snippets ---------------------------------------------------------------------------------


def config_source(cfg: dict, indent: str = "") -> str:
    """A Python literal for ``cfg``: one line when short, one key per line otherwise."""
    one_line = repr(cfg)
    if len(one_line) + len(indent) <= 90:
        return one_line
    items = "".join(f"{indent}    {k!r}: {v!r},\n" for k, v in cfg.items())
    return "{\n" + items + indent + "}"
