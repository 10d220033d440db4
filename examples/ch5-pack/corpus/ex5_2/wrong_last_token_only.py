"""The loss of the last position only (as if generating), not of every token."""
# expect-failing: mean cross-entropy

import torch


def calc_loss_batch(input_batch, target_batch, model, device):
    logits = model(input_batch.to(device))[:, -1, :]
    return torch.nn.functional.cross_entropy(logits, target_batch.to(device)[:, -1])
