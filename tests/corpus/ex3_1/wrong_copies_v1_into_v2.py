"""Copies in the wrong direction: sa_v1's random weights go into sa_v2. Both modules then
compute the same thing, but sa_v2 (the source) has been overwritten."""
# expect-failing: sa_v2 is left unchanged

import torch


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v2.W_query.weight.copy_(sa_v1.W_query.T)
        sa_v2.W_key.weight.copy_(sa_v1.W_key.T)
        sa_v2.W_value.weight.copy_(sa_v1.W_value.T)
