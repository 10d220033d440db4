"""Copies nn.Linear's (d_out, d_in) weight as it is, without transposing it: the copy only
goes through when the shapes happen to broadcast, and even a square weight lands transposed."""
# expect-failing: sa_v1 computes what sa_v2 computes

import torch


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight)
        sa_v1.W_key.copy_(sa_v2.W_key.weight)
        sa_v1.W_value.copy_(sa_v2.W_value.weight)
