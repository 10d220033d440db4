"""Treats a low temperature as greedy decoding ("below 0.5 it is almost the argmax anyway"):
at temperature 0.1 over close logits the best token still has only about half the
probability, and the others must be drawn as often as softmax(logits / 0.1) says."""
# expect-failing: sampled tokens follow softmax

import torch


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)[:, -1, :]
        if top_k is not None:
            top_logits, _ = torch.topk(logits, top_k)
            logits = torch.where(logits < top_logits[:, -1:], float("-inf"), logits)
        if temperature >= 0.5:
            probs = torch.softmax(logits / temperature, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if idx_next == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
