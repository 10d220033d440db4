"""The oracle of the chapter-5 pack: the book's ``generate`` and what the judge derives from it.
Judge-only.

``generate`` is chapter 5's ``generate`` (temperature scaling, top-k filtering, an optional
end-of-sequence id), written so that it also works on batches: the book compares the logits
with ``min_val`` of shape ``(batch,)``, which broadcasts correctly only for one row; here the
threshold keeps its dimension (``top_logits[:, -1:]``). For one row both are the same.
``next_token_probs`` is the distribution it samples one token from.

Why a module of its own: ``generate`` is the whole answer to exercise 5.1. It used to live in
``llm_ch5_pack.reference``, the module students are told to import for the test models, so
``from llm_ch5_pack.reference import generate`` got full marks. Here it is one of the pack's
``judge`` modules (``pack.toml``): the checks compute the expected tokens and probabilities
with it, a reproduce snippet may import it in the student's own environment, and no answer may
import it in a worker (the import fails with "imports the grader's checks", wherever the
answer is graded). Neither the fork server nor the probes import it (``worker`` in
``pack.toml``), and it is not code answers may share (``shared``).
"""

from __future__ import annotations

import torch


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
