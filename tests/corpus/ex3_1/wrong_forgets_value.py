"""Transfers the query and key weights and forgets the value weights, so the attention
weights agree but the context vectors do not."""
# expect-failing: sa_v1 computes what sa_v2 computes

import torch


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
