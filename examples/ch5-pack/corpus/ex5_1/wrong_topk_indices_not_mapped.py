"""Samples among the top-k probabilities but returns the position within the top k, not the
token id (torch.topk's indices are never used): top_k=1 always gives token 0."""
# expect-failing: top_k=1 gives the argmax at any temperature
# expect-failing: sampled tokens follow softmax

import torch


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)[:, -1, :]
        if temperature > 0.0:
            probs = torch.softmax(logits / temperature, dim=-1)
            if top_k is not None:
                probs, _ = torch.topk(probs, top_k)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if idx_next == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
