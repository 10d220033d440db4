"""What the chapter-5 pack's judge, its workers and students share: small models to run
``generate`` on, and chapter 4's greedy decoding.

The models need no download: ``tiny_gpt`` is the book's chapter-4 ``GPTModel`` with a tiny
config and seeded weights; ``FixedLogits`` gives the same next-token logits whatever the input,
so that every step of ``generate`` draws from one known distribution. ``generate_text_simple``
is chapter 4's greedy decoding, which exercise 5.3 compares with. The judge and the worker
import this module (the worker rebuilds the judge's models with ``build_model``), students
import it to build the grader's models, and an answer may import it.

The book's chapter-5 ``generate``, the answer to exercise 5.1, is not here: it is the judge's
alone, in ``llm_ch5_pack.oracle``, which no answer may import.
"""

from __future__ import annotations

import torch
from torch import nn

from reference import GPTModel


def generate_text_simple(model, idx, max_new_tokens, context_size):
    """Chapter 4's greedy decoding: always the most likely next token."""
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


class FixedLogits(nn.Module):
    """A "model" whose next-token logits are ``logits`` at every position, whatever the tokens:
    ``generate`` on it draws independent tokens from one distribution, step after step."""

    def __init__(self, logits):
        super().__init__()
        self.register_buffer("logits", torch.as_tensor(logits, dtype=torch.float32).clone())

    def forward(self, idx):
        batch, n_tokens = idx.shape
        return self.logits.expand(batch, n_tokens, self.logits.numel())


def tiny_config(
    vocab_size=12, context_length=6, emb_dim=8, n_heads=2, n_layers=1, qkv_bias=False
) -> dict:
    """A chapter-4 GPT config small enough to build and run in a millisecond (no dropout)."""
    return {
        "vocab_size": vocab_size,
        "context_length": context_length,
        "emb_dim": emb_dim,
        "n_heads": n_heads,
        "n_layers": n_layers,
        "drop_rate": 0.0,
        "qkv_bias": qkv_bias,
    }


def tiny_gpt(cfg: dict, seed: int, logit_scale: float = 1.0) -> GPTModel:
    """The book's ``GPTModel(cfg)`` with the weights ``torch.manual_seed(seed)`` gives, its
    output head multiplied by ``logit_scale`` (wider logits), in eval mode."""
    torch.manual_seed(seed)
    model = GPTModel(dict(cfg))
    with torch.no_grad():
        model.out_head.weight.mul_(logit_scale)
    return model.eval()


def build_model(spec: dict) -> nn.Module:
    """The model a judge describes in plain data: ``{"kind": "gpt", "cfg": ..., "state": ...}``
    (a ``GPTModel`` loaded with that state) or ``{"kind": "fixed", "logits": [...]}``."""
    if spec["kind"] == "fixed":
        return FixedLogits(spec["logits"]).eval()
    model = GPTModel(dict(spec["cfg"]))
    model.load_state_dict(spec["state"])
    return model.eval()


def describe_model(model: nn.Module, cfg: dict | None = None) -> dict:
    """The plain-data description ``build_model`` rebuilds ``model`` from."""
    if isinstance(model, FixedLogits):
        return {"kind": "fixed", "logits": model.logits.tolist()}
    return {"kind": "gpt", "cfg": dict(cfg), "state": model.state_dict()}
