"""The oracle of the chapter-5 pack: the book's text generation and small models to run it on.

``generate`` is chapter 5's ``generate`` (temperature scaling, top-k filtering, an optional
end-of-sequence id), written so that it also works on batches: the book compares the logits
with ``min_val`` of shape ``(batch,)``, which broadcasts correctly only for one row; here the
threshold keeps its dimension (``top_logits[:, -1:]``). For one row both are the same.

The models need no download: ``tiny_gpt`` is the book's chapter-4 ``GPTModel`` with a tiny
config and seeded weights; ``FixedLogits`` gives the same next-token logits whatever the input,
so that every step of ``generate`` draws from one known distribution. Both the judge and the
worker import this module (the worker rebuilds the judge's models with ``build_model``), and a
reproduce snippet imports it in the student's own environment.
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


def top_k_filter(logits: torch.Tensor, top_k: int) -> torch.Tensor:
    """``logits`` (batch, vocab) with every value below each row's k-th largest set to -inf
    (values tied with the k-th largest are kept, as in the book)."""
    top_logits, _ = torch.topk(logits, top_k)
    min_val = top_logits[:, -1:]
    return torch.where(logits < min_val, torch.full_like(logits, float("-inf")), logits)


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    """Chapter 5's ``generate``: at each step the model sees the last ``context_size`` tokens;
    the last position's logits are cut to the ``top_k`` largest (if given), then either divided
    by ``temperature`` and sampled from (``temperature > 0``) or their argmax is taken. The
    token ``eos_id`` (if given) ends the generation without being appended; with several rows
    generation ends when every row's next token is ``eos_id`` (the book has one row)."""
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        if top_k is not None:
            logits = top_k_filter(logits, top_k)
        if temperature > 0.0:
            logits = logits / temperature
            probs = torch.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if eos_id is not None and bool((idx_next == eos_id).all()):
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def next_token_probs(logits, temperature: float, top_k: int | None) -> torch.Tensor:
    """The distribution ``generate`` samples one next token from, for next-token ``logits``
    (a 1-D sequence of numbers), in float64: softmax(top-k-filtered logits / temperature)."""
    row = torch.as_tensor(logits, dtype=torch.float64)[None, :]
    if top_k is not None:
        row = top_k_filter(row, top_k)
    return torch.softmax(row / temperature, dim=-1)[0]


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
