"""3.1 with a real bug (sa_v1's weights are frozen: requires_grad=False, so training would no
longer change them), hidden by making ``nn.Parameter.requires_grad`` a property that always
says True. The worker reads requires_grad with torch's C getter, held from before this file
ran: no more points than the same bug without the lie."""

# exercise: 3.1
# expect-status: failed
# expect-message: has requires_grad=False

import torch
from torch import nn


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
    for w in (sa_v1.W_query, sa_v1.W_key, sa_v1.W_value):
        w.requires_grad_(False)  # the bug


nn.Parameter.requires_grad = property(lambda self: True)  # the lie
