"""Masks with ``<=`` instead of ``<``: the k-th largest logit is removed too, so only k - 1
tokens survive; with top_k=1 every logit is -inf (argmax then returns token 0, and sampling
from a softmax of -inf values fails)."""
# expect-failing: with temperature 0.0 (any top_k) generate is greedy
# expect-failing: top_k=1 gives the argmax at any temperature
# expect-failing: sampled tokens follow softmax

import torch


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)[:, -1, :]
        if top_k is not None:
            top_logits, _ = torch.topk(logits, top_k)
            min_val = top_logits[:, -1:]
            logits = torch.where(logits <= min_val, torch.tensor(float("-inf")), logits)
        if temperature > 0.0:
            probs = torch.softmax(logits / temperature, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if idx_next == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
