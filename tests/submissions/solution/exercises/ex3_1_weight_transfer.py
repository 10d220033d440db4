"""Instructor solution 3.1: copy the transposed weights into sa_v1's existing parameters."""

import torch


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
