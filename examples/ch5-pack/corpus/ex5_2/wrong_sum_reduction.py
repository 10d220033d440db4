"""Sums the token losses instead of averaging them: right for one token, too large for more."""
# expect-failing: mean cross-entropy
# expect-hint: flatten

import torch


def calc_loss_batch(input_batch, target_batch, model, device):
    logits = model(input_batch.to(device))
    return torch.nn.functional.cross_entropy(
        logits.flatten(0, 1), target_batch.to(device).flatten(), reduction="sum"
    )
