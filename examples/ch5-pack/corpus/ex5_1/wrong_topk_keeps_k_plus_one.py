"""Takes the threshold from torch.topk(logits, top_k + 1): one token too many survives the
filter, so top_k=1 still samples between two tokens and the (k+1)-th token gets drawn."""
# expect-failing: top_k=1 gives the argmax at any temperature
# expect-failing: each among the top_k logits
# expect-failing: sampled tokens follow softmax

import torch


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)[:, -1, :]
        if top_k is not None:
            k = min(top_k + 1, logits.shape[-1])
            top_logits, _ = torch.topk(logits, k)
            min_val = top_logits[:, -1:]
            logits = torch.where(logits < min_val, torch.tensor(float("-inf")), logits)
        if temperature > 0.0:
            probs = torch.softmax(logits / temperature, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if idx_next == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
