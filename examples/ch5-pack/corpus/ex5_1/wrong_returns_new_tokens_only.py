"""Collects the new tokens in a list and returns only them, without the prompt: the result
has max_new_tokens columns instead of n_tokens + max_new_tokens."""
# expect-failing: with temperature 0.0 (any top_k) generate is greedy
# expect-failing: sampling returns idx plus max_new_tokens tokens

import torch


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    new_tokens = []
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)[:, -1, :]
        if top_k is not None:
            top_logits, _ = torch.topk(logits, top_k)
            logits = torch.where(logits < top_logits[:, -1:], float("-inf"), logits)
        if temperature > 0.0:
            probs = torch.softmax(logits / temperature, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if idx_next == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
        new_tokens.append(idx_next)
    return torch.cat(new_tokens, dim=1)
