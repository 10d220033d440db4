"""New nn.Parameter objects with requires_grad=False: the outputs agree, but sa_v1 can no
longer be trained."""
# expect-failing: sa_v1's weights are still trainable parameters

from torch import nn


def transfer_weights(sa_v2, sa_v1):
    for name in ("W_query", "W_key", "W_value"):
        w = getattr(sa_v2, name).weight.detach().T.clone()
        setattr(sa_v1, name, nn.Parameter(w, requires_grad=False))
