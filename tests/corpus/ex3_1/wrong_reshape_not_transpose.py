"""Reshapes nn.Linear's (d_out, d_in) weight to (d_in, d_out) instead of transposing it:
the shape fits, the values land in the wrong places."""
# expect-failing: sa_v1 computes what sa_v2 computes

import torch
def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight.reshape(sa_v1.W_query.shape))
        sa_v1.W_key.copy_(sa_v2.W_key.weight.reshape(sa_v1.W_key.shape))
        sa_v1.W_value.copy_(sa_v2.W_value.weight.reshape(sa_v1.W_value.shape))
