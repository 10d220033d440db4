"""Uses the book's sampling example's values as defaults (temperature=1.4, top_k=25): a call
that leaves them out should decode greedily (temperature=0.0, top_k=None), and this one
samples, or fails on a vocabulary smaller than 25."""
# expect-failing: with temperature 0.0 (any top_k) generate is greedy

import torch


def generate(model, idx, max_new_tokens, context_size, temperature=1.4, top_k=25, eos_id=None):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)[:, -1, :]
        if top_k is not None:
            top_logits, _ = torch.topk(logits, min(top_k, logits.shape[-1]))
            logits = torch.where(logits < top_logits[:, -1:], float("-inf"), logits)
        if temperature > 0.0:
            probs = torch.softmax(logits / temperature, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if idx_next == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
