"""Applies softmax before cross_entropy, which applies log-softmax itself: the loss is
squashed towards log(vocab_size)."""
# expect-failing: mean cross-entropy

import torch


def calc_loss_batch(input_batch, target_batch, model, device):
    probs = torch.softmax(model(input_batch.to(device)), dim=-1)
    return torch.nn.functional.cross_entropy(probs.flatten(0, 1), target_batch.flatten())
