"""Has no greedy branch: with temperature 0.0 it samples at temperature 1 instead of taking
the argmax (``temperature or 1.0``), so the default call is random."""
# expect-failing: with temperature 0.0 (any top_k) generate is greedy

import torch


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)[:, -1, :]
        if top_k is not None:
            top_logits, _ = torch.topk(logits, top_k)
            logits = torch.where(logits < top_logits[:, -1:], float("-inf"), logits)
        probs = torch.softmax(logits / (temperature or 1.0), dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1)
        if idx_next == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
