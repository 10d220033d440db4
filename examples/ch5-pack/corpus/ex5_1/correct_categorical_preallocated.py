"""Preallocates the output and fills it column by column, sampling with
torch.distributions.Categorical; an eos_id cuts the result where generation stopped."""

import torch
from torch.distributions import Categorical


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    batch, start = idx.shape
    out = torch.empty(batch, start + max_new_tokens, dtype=idx.dtype)
    out[:, :start] = idx
    length = start
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(out[:, max(0, length - context_size) : length])[:, -1, :]
        if top_k is not None:
            threshold = logits.topk(top_k).values.min(dim=-1, keepdim=True).values
            logits = logits.where(logits >= threshold, torch.tensor(-float("inf")))
        if temperature > 0:
            token = Categorical(logits=logits / temperature).sample()
        else:
            token = logits.argmax(dim=-1)
        if eos_id is not None and (token == eos_id).all():
            break
        out[:, length] = token
        length += 1
    return out[:, :length]
