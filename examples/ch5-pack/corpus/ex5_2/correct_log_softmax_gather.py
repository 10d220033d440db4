"""The cross-entropy written out: log-softmax, the targets' log-probabilities, their mean
negated; returned as a Python float."""

import torch


def calc_loss_batch(input_batch, target_batch, model, device):
    with torch.no_grad():
        logits = model(input_batch.to(device))
    logp = torch.log_softmax(logits, dim=-1)
    picked = logp.gather(-1, target_batch.to(device).unsqueeze(-1))
    return -picked.mean().item()
