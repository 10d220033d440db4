"""Filters after the softmax: the probabilities outside the top k are set to zero and the rest
renormalised. softmax(logits / T) restricted to the top k and renormalised is exactly the
softmax of the top-k-filtered logits, so this samples from the same distribution."""

import torch


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    for _ in range(max_new_tokens):
        with torch.no_grad():
            last = model(idx[:, -context_size:])[:, -1, :]
        if temperature == 0.0:
            idx_next = last.argmax(dim=-1, keepdim=True)
        else:
            probs = torch.softmax(last / temperature, dim=-1)
            if top_k is not None:
                values, positions = torch.topk(probs, top_k, dim=-1)
                probs = torch.zeros_like(probs).scatter_(-1, positions, values)
                probs = probs / probs.sum(dim=-1, keepdim=True)
            idx_next = torch.multinomial(probs, 1)
        if idx_next.numel() == 1 and idx_next.item() == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
